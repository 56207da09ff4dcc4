"""What the commands do once their arguments are settled: lint, fix, add noqa comments, show rules.

Each returns what happened (a report, counts, one message per input that could not be handled); ``cli.py``
prints it and chooses the exit status.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, TextIO

from .config import Settings
from .diagnostics import Diagnostic
from .files import (
    PathProblem, Source, SourceError, decode_source, is_excluded, is_notebook, iter_python_files, read_source,
    relative_to,
)
from .internal_errors import InternalError
from .jobs import FileResult, Linter, fix_files, lint_files
from .lint_context import LintContext
from .noqa import filter_suppressed
from .progress import Progress
from .report import Report, Reported, Unparsed, plural
from .writing import ChangedOnDisk, StaleTemporaries, StillAsRead, write_atomically

# The engine and the fixer (LibCST, the analysis) are imported where a file is analysed or fixed: a run answered
# from the cache needs neither (``jobs`` imports them the same way).
if TYPE_CHECKING:
    from .fixer import FixOutcome
    from .rule_pages import RuleInfo


@dataclass(frozen=True)
class Input:
    name: str
    source: Source
    codes: frozenset[str]
    is_stdin: bool = False


def iter_inputs(paths: list[str], settings: Settings, stdin_filename: str, errors: list[str],
                stdin_bytes: list[bytes] | None = None, unparsed: list[Unparsed] | None = None) -> Iterator[Input]:
    """Each readable input once, decoded, with the codes enabled for it; what cannot be read goes to ``errors``
    (and, when it cannot be decoded, to ``unparsed`` too).

    Standard input's raw bytes are appended to ``stdin_bytes`` when given, so a filter can pass them through.
    With ``force-exclude``, standard input named (``--stdin-filename``) like an excluded file is not linted.
    """
    if "-" in paths:
        data = sys.stdin.buffer.read()
        if stdin_bytes is not None:
            stdin_bytes.append(data)
        if not (settings.force_exclude and is_excluded(stdin_filename, settings.exclude, settings.root)):
            try:
                source = decode_source(data)
            except SourceError as error:
                could_not_parse(stdin_filename, error, errors, unparsed)
            else:
                yield Input(stdin_filename, source, settings.enabled_codes(relative_to(stdin_filename, settings.root)),
                            True)
    files = iter_python_files([p for p in paths if p != "-"], settings.exclude, settings.root, settings.include,
                              respect_gitignore=settings.respect_gitignore, force_exclude=settings.force_exclude)
    for item in files:
        if isinstance(item, PathProblem):
            errors.append(f"{item.path}: could not read: {item.reason}")
            continue
        try:
            source = read_source(item)
        except SourceError as error:
            could_not_parse(item, error, errors, unparsed)
            continue
        yield Input(item, source, settings.enabled_codes(relative_to(item, settings.root)))


def could_not_parse(name: str, error: SourceError, errors: list[str], unparsed: list[Unparsed] | None) -> None:
    """One line for stderr, and (for the formats for programs) the file as a finding without a code."""
    errors.append(f"{name}: could not parse: {error}")
    if unparsed is not None:
        unparsed.append(Unparsed(name, str(error)))


@dataclass(frozen=True)
class Performance:
    """How a run goes, not what it finds: worker processes and the cache."""

    jobs: int = 1
    cache: bool = False
    cache_dir: Path | None = None  # default: ``cache-dir`` of the settings, beside the configuration


def _lint_one(each: Input, settings: Settings, shows_edits: bool, text: str | None = None,
              context: LintContext | None = None) -> list[Reported]:
    """The findings of one input (of ``text`` instead of its source, when given), sorted, with their fixes' edits
    when the format shows them; raises ``SourceError`` when it does not parse."""
    from .edits import FixEdits
    from .engine import analyse_text, by_position

    text = each.source.text if text is None else text
    if is_notebook(each.name):  # findings by cell; no edits, whose positions would be in the cells joined
        from .notebooks import lint_notebook

        found = lint_notebook(text, each.name, each.codes, settings.fix_style)
        return [Reported(d) for d in sorted(found, key=lambda d: (d.cell or 0, d.line, d.column, d.code))]
    analysis = analyse_text(text, each.name, each.codes, settings.fix_style, None if each.is_stdin else context)
    kept = filter_suppressed(analysis.diagnostics, text)
    if not kept:
        return []
    if not shows_edits or analysis.module is None or analysis.facts is None:
        return [Reported(d) for d in by_position(kept)]
    finding_of = {id(d): finding for d, finding in zip(analysis.diagnostics, analysis.findings)}
    edits = FixEdits(text, analysis.module, analysis.spans, settings.fix_style, analysis.facts.module_names)
    return [Reported(d, tuple(edits.of(finding_of[id(d)]))) for d in by_position(kept)]


def _fix_one(each: Input, settings: Settings, unsafe: bool, context: LintContext | None = None) -> FixOutcome:
    from .fixer import fix_text

    if is_notebook(each.name):
        from .notebooks import fix_notebook

        return fix_notebook(each.source.text, each.name, each.codes, settings.fix_style, unsafe)
    return fix_text(each.source.text, each.name, each.codes, settings.fix_style, unsafe,
                    None if each.is_stdin else context)


def lint(paths: list[str], settings: Settings, stdin_filename: str = "stdin", shows_edits: bool = False,
         performance: Performance = Performance()) -> tuple[Report, list[str]]:
    """Lint files, folders and ``-``; returns the report and one message per input that could not be linted (those
    that could not be parsed are in ``report.unparsed`` too)."""
    report = Report()
    errors: list[str] = []
    inputs = list(iter_inputs(paths, settings, stdin_filename, errors, unparsed=report.unparsed))
    linter = Linter.for_settings(settings, performance.cache_dir, performance.cache)
    files = [each for each in inputs if not each.is_stdin and not is_notebook(each.name)]
    progress = Progress(len(files))
    try:
        results = lint_files(linter, [(each.name, each.source.text) for each in files], shows_edits,
                             performance.jobs, progress)
    finally:
        progress.close()
    result_of = {id(each): result for each, result in zip(files, results)}
    for each in inputs:
        try:
            result = result_of.get(id(each))
            found = _lint_one(each, settings, shows_edits) if result is None else _reported(each, result)
        except SourceError as error:
            could_not_parse(each.name, error, errors, report.unparsed)
            continue
        except Exception as error:  # a bug of ours, in a worker or here: one line, and the run goes on
            errors.append(f"{each.name}: internal error, no findings: {InternalError.from_exception(error)}")
            continue
        if found:
            report.findings.extend(found)
            if not is_notebook(each.name):  # a notebook's text is JSON: its lines are not the findings' lines
                report.sources[each.name] = each.source.text
    return report, errors


def _reported(each: Input, result: FileResult) -> list[Reported]:
    """A file's result as reported: the rules enabled for it, less what ``# noqa`` silences, by position."""
    if result.error is not None:
        raise InternalError(result.error) if result.internal else SourceError(result.error)
    findings = [(d, edits) for d, edits in result.findings(each.name) if d.code in each.codes]
    kept = set(map(id, filter_suppressed([d for d, _ in findings], each.source.text)))
    reported = [Reported(d, edits) for d, edits in findings if id(d) in kept]
    return sorted(reported, key=lambda item: (item.diagnostic.line, item.diagnostic.column, item.diagnostic.code))


def lint_paths(paths: list[str], settings: Settings, stdin_filename: str = "stdin"
               ) -> tuple[list[Diagnostic], list[str]]:
    """Lint files and folders; returns the diagnostics and one message per file that could not be linted."""
    report, errors = lint(paths, settings, stdin_filename)
    return [item.diagnostic for item in report.findings], errors


@dataclass
class FixRun:
    """What fixing did: counts cover only what was written (or, without writing, what would be)."""

    report: Report = field(default_factory=Report)  # the findings left, in the text as written
    errors: list[str] = field(default_factory=list)
    fixed: int = 0  # findings fixed
    changed_files: int = 0
    filtered_stdin: bool = False  # standard input's fixed text went to standard output
    #: a fix made a file import np2torch_lint.runtime in a project whose dependencies do not list np2torch-lint
    undeclared_runtime_import: bool = False

    @property
    def left(self) -> int:
        return len(self.report.findings)


def fix(paths: list[str], settings: Settings, *, stdin_filename: str = "stdin", unsafe: bool = False,
        writes: bool = True, diff: TextIO | None = None, shows_edits: bool = False,
        performance: Performance = Performance()) -> FixRun:
    """Fix files (or standard input, a filter: the fixed code goes to standard output), writing each changed file
    atomically; with ``writes`` false, write nothing and count what would change; ``diff`` gets a unified diff."""
    from .dependencies import adds_runtime_import, lists_np2torch_lint, project_folder
    from .fixer import FixOutcome

    run = FixRun()
    stdin_bytes: list[bytes] = []
    stale = StaleTemporaries()
    inputs = list(iter_inputs(paths, settings, stdin_filename, run.errors, stdin_bytes, run.report.unparsed))
    linter = Linter.for_settings(settings, None, use_cache=False)
    context = linter.context
    files = [each for each in inputs if not each.is_stdin and not is_notebook(each.name)]
    results = fix_files(linter, [(each.name, each.source.text, each.codes) for each in files], unsafe,
                        performance.jobs)
    result_of = {id(each): result for each, result in zip(files, results)}  # all fixed before anything is written
    for each in inputs:
        try:
            result = result_of.get(id(each))
            if result is None:
                outcome = _fix_one(each, settings, unsafe, context)
            elif result.error_kind == "parse":
                raise SourceError(result.error)
            elif result.error_kind == "fix":
                raise InternalError(result.error)
            else:
                outcome = FixOutcome(result.text, result.fixed, result.remaining_diagnostics(each.name))
        except SourceError as error:
            could_not_parse(each.name, error, run.errors, run.report.unparsed)
            continue
        except Exception as error:  # a bug of ours (a fix that breaks the code, too): one line, the run goes on
            reason = InternalError.from_exception(error)
            run.errors.append(f"{each.name}: internal error, file left unchanged: {reason}")
            continue
        changed = outcome.text != each.source.text
        if diff is not None and changed and is_notebook(each.name):
            diff.writelines(outcome.diff_lines(each.name))  # a NotebookFixOutcome: a diff per cell
        elif diff is not None and changed:
            import difflib

            diff.writelines(difflib.unified_diff(
                each.source.text.splitlines(keepends=True), outcome.text.splitlines(keepends=True),
                fromfile=each.name, tofile=each.name))
        written = True
        if writes and not each.is_stdin:
            stale.clean_beside(each.name)  # temporary files a killed run left in this folder
        if writes and each.is_stdin:
            sys.stdout.buffer.write(outcome.text.encode(each.source.encoding))
            run.filtered_stdin = True
        elif writes and changed:
            problem = _write_back(each, outcome.text)
            if problem is not None:
                run.errors.append(problem)
                written = False
        if written:
            run.fixed += outcome.fixed
            run.changed_files += changed
            if changed and not run.undeclared_runtime_import and adds_runtime_import(each.source.text, outcome.text):
                folder = project_folder(Path(each.name) if not each.is_stdin else Path.cwd() / "-")
                run.undeclared_runtime_import = not lists_np2torch_lint(folder)
            text, left = outcome.text, [Reported(d) for d in outcome.remaining]
        else:
            text, left = each.source.text, []  # everything found is still there: found again below
        if not written or (shows_edits and not is_notebook(each.name) and any(item.diagnostic.fix for item in left)):
            left = _lint_one(each, settings, shows_edits, text, None if each.is_stdin else context)
        if left:
            run.report.findings.extend(left)
            if not is_notebook(each.name):
                run.report.sources[each.name] = text
    if writes and stdin_bytes and not run.filtered_stdin:
        sys.stdout.buffer.write(stdin_bytes[0])  # a filter never loses its input: pass it through unchanged
        run.filtered_stdin = True
    return run


def _write_back(each: Input, text: str) -> str | None:
    """Write ``text`` over the file ``each`` was read from, unless the file changed since; None when written,
    else the message that says why not (the file is left as it is)."""
    try:
        write_atomically(each.name, text.encode(each.source.encoding), _still_as_read(each.source))
    except ChangedOnDisk:
        return f"{each.name}: changed on disk since it was read, left unchanged: run again"
    except (OSError, UnicodeEncodeError) as error:
        return f"{each.name}: could not write, left unchanged: {error}"
    return None


def _still_as_read(source: Source) -> StillAsRead:
    """Whether bytes on disk still decode to ``source``: then writing its fixed text loses nothing."""
    def check(data: bytes) -> bool:
        try:
            return decode_source(data) == source
        except SourceError:
            return False
    return check


@dataclass
class NoqaRun:
    added: int = 0  # comments added or extended
    files: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was left alone, and why (not an error)


def add_noqa_comments(paths: list[str], settings: Settings) -> NoqaRun:
    """Add a ``# noqa: CODES`` comment for every finding; files without findings are never touched."""
    from .add_noqa import add_noqa

    run = NoqaRun()
    for each in iter_inputs(paths, settings, "stdin", run.errors):
        try:
            found = _lint_one(each, settings, shows_edits=False)
        except SourceError as error:
            run.errors.append(f"{each.name}: could not parse: {error}")
            continue
        if found and is_notebook(each.name):
            run.notes.append(f"{each.name}: {plural(len(found), 'finding')} left: --add-noqa does not change "
                             "notebooks yet (per-file-ignores can cover them)")
            continue
        text, added = add_noqa(each.source.text, [item.diagnostic for item in found])
        if not added:
            continue
        problem = _write_back(each, text)
        if problem is not None:
            run.errors.append(problem)
            continue
        run.added += added
        run.files += 1
    return run


def write_rule_table(rules: list[RuleInfo], stream: TextIO, as_json: bool = False) -> None:
    """``rule --all``: one row per rule (code, name, summary), or the rules with their pages as JSON."""
    if as_json:
        json.dump([{"code": rule.code, "name": rule.name, "summary": rule.summary, "explanation": rule.page}
                   for rule in rules], stream, indent=2)
        stream.write("\n")
        return
    name_width = max(len(rule.name) for rule in rules)
    stream.write(f"{'code':<8}{'name':<{name_width + 2}}summary\n")
    for rule in rules:
        stream.write(f"{rule.code:<8}{rule.name:<{name_width + 2}}{rule.summary}\n")
