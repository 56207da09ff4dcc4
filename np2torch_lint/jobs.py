"""Linting many files: each file's result from the cache when nothing it depends on changed, the others
analysed, in this process or in ``-j`` worker processes.

A file's result is kept as plain data (``FileResult``: its findings for every rule, with their fixes' titles and,
when a format asked for them, their edits) so that it can be cached and sent between processes; which findings
are reported (``select``/``ignore``, ``# noqa``) is decided afterwards, the same way for every source. Results
are the same with ``-j 1``, ``-j N``, a cold cache and a warm one: a file's result depends only on its text, the
summaries of the modules it imports and the project facts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterator

from .config import Settings
from .diagnostics import Applicability, Diagnostic, Fix
from .files import SourceError, read_source
from .fix_style import FixStyle
from .internal_errors import InternalError
from .lint_context import LintContext
from .project import Cache, Project, ProjectFacts, digest, settings_key
from .text_edits import TextEdit

# The engine, the fixer and the analysis (LibCST) are imported where a file is analysed or fixed: a run answered
# from the cache never imports them, nor the process pool.
if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.connection import Connection

#: below this many files to analyse, worker processes cost more than they save
_PARALLEL_AT_LEAST = 8


@dataclass
class FileResult:
    """What linting one file gave: its findings (for every rule) as data, or why it could not be linted."""

    diagnostics: list[dict] = field(default_factory=list)
    error: str | None = None
    #: the summaries of other modules it used (path -> digest), and the project facts it saw
    dependencies: dict[str, str] = field(default_factory=dict)
    facts: str = ""
    has_edits: bool = False
    #: findings in other modules' code through this file's calls: module (resolved path) -> its findings, as data
    contributions: dict[str, list[dict]] = field(default_factory=dict)
    #: ``error`` is a bug of ours (``InternalError``), not the file's: it is not cached, so the next run tries again
    internal: bool = False

    def as_data(self) -> dict:
        data = {"diagnostics": self.diagnostics, "error": self.error, "dependencies": self.dependencies,
                "facts": self.facts, "has_edits": self.has_edits, "contributions": self.contributions}
        if self.internal:  # (from a worker only: the cache never holds such a result, and its entries' keys are fixed)
            data["internal"] = True
        return data

    @classmethod
    def from_data(cls, data: object) -> FileResult | None:
        if not isinstance(data, dict) or not isinstance(data.get("diagnostics"), list):
            return None
        contributions = data.get("contributions") or {}
        if not isinstance(contributions, dict) or not all(
                isinstance(found, list) and all(isinstance(item, dict) for item in found)
                for found in contributions.values()):
            return None
        return cls(list(data["diagnostics"]), data.get("error"), dict(data.get("dependencies") or {}),
                   str(data.get("facts", "")), bool(data.get("has_edits")), dict(contributions),
                   bool(data.get("internal")))

    def with_incoming(self, incoming: list[dict]) -> FileResult:
        """This result with the findings other modules' calls find in this file's code, one per rule and place."""
        if not incoming or self.error is not None:
            return self
        seen = {(item.get("code"), item.get("line"), item.get("column")) for item in self.diagnostics}
        added = []
        for item in incoming:
            key = (item.get("code"), item.get("line"), item.get("column"))
            if key not in seen:
                seen.add(key)
                added.append(item)
        return dataclasses.replace(self, diagnostics=[*self.diagnostics, *added]) if added else self

    def findings(self, filename: str) -> list[tuple[Diagnostic, tuple[TextEdit, ...]]]:
        """The findings as diagnostics of ``filename`` (fixes carry their title and safety, not their code)."""
        found = []
        for item in self.diagnostics:
            fix_data = item.get("fix")
            fix = None if fix_data is None else Fix(
                Applicability(fix_data["applicability"]), fix_data["title"], _rebuild_from_the_source)
            diagnostic = Diagnostic(item["code"], item["message"], filename, item["line"], item["column"],
                                    item["end_line"], item["end_column"], fix)
            edits = tuple(TextEdit(edit["content"], tuple(edit["start"]), tuple(edit["end"]))  # type: ignore[arg-type]
                          for edit in item.get("edits", ()))
            found.append((diagnostic, edits))
        return found


def _as_data(diagnostic: Diagnostic) -> dict:
    return {"code": diagnostic.code, "message": diagnostic.message, "line": diagnostic.line,
            "column": diagnostic.column, "end_line": diagnostic.end_line, "end_column": diagnostic.end_column,
            "fix": None}


def _rebuild_from_the_source(*_: object) -> None:
    raise RuntimeError("a fix read from a result has no code: fixing analyses the file again")


@dataclass
class Linter:
    """Lints files of one project with one configuration: the context, the cache and the project facts."""

    settings: Settings
    context: LintContext
    cache: Cache | None
    #: results worked out in this process, by (resolved path, content digest): a module's importers are asked for
    #: what they find in it once per process, not once per file (``incoming``)
    _results: dict[tuple[Path, str], FileResult] = field(default_factory=dict, repr=False)

    def facts_for(self, path: str | Path) -> str:
        """A digest of the project facts a file's result depends on (the modules that change the default dtype in
        a program with it): none for a file outside the project, which is linted on its own
        (``engine.findings_for``)."""
        project = self.context.project
        assert project is not None
        if not project.contains(path):
            return ""
        facts = project.facts()
        changed_in = facts.default_dtype_changed_for(project.relative(path))
        return digest(repr((changed_in, [module in facts.float32_default_set_in for module in changed_in])))

    @classmethod
    def for_settings(cls, settings: Settings, cache_dir: Path | None, use_cache: bool = True,
                     facts: ProjectFacts | None = None) -> Linter:
        """``facts``, when given, are the project facts another process already worked out."""
        models = None
        if settings.models:
            from .analysis.models import builtin_models

            models = builtin_models().with_rows(settings.models, "[tool.np2torch-lint] models")
        cache = None
        if use_cache:
            folder = cache_dir if cache_dir is not None else settings.root / settings.cache_dir
            cache = Cache.open(folder, settings_key(settings.fix_style.value, sorted(settings.models.items()),
                                                    list(settings.src)))
        project = Project.at(settings.root, settings.src, models, cache, settings.exclude, facts)
        return cls(settings, LintContext(models, project), cache)

    def known(self, path: str, text: str) -> tuple[Path, str]:
        """A file's resolved path and content digest, the key of its cache entry; the project keeps its text."""
        project = self.context.project
        assert project is not None
        resolved = project.resolved(path)
        content = digest(text)
        project.knows_text(resolved, text, content)
        return resolved, content

    def cached(self, key: tuple[Path, str], edits: bool) -> FileResult | None:
        """A file's result from the cache, when its text, the project facts and every summary it used are
        unchanged (and it has edits, if they are wanted)."""
        project = self.context.project
        assert project is not None
        if self.cache is None:
            return None
        entry = self.cache.entry(*key)
        cached = FileResult.from_data(entry.get("result")) if entry is not None else None
        if (cached is not None and cached.facts == self.facts_for(key[0]) and (cached.has_edits or not edits)
                and project.dependencies_unchanged(cached.dependencies)):
            return cached
        return None

    def result(self, path: str, text: str, edits: bool) -> FileResult:
        """One file's result: from the cache when it is still right, else analysed (and cached)."""
        key = self.known(path, text)
        kept = self._results.get(key)
        if kept is not None and (kept.has_edits or not edits):
            return kept
        found = self._results[key] = self.cached(key, edits) or self.analysed(path, text, key, edits)
        return found

    def analysed(self, path: str, text: str, key: tuple[Path, str], edits: bool) -> FileResult:
        """One file's result analysed now, and cached (its summary with it, in one write)."""
        project = self.context.project
        assert project is not None
        from .parsing import garbage_collected_after

        project.linting.add(key[0])
        try:
            with garbage_collected_after():
                result = self._analysed(path, text, edits)
            if self.cache is not None and not result.internal:
                self.cache.update(*key, result=result.as_data())
        finally:
            project.done_linting(key[0])
        return result

    def _analysed(self, path: str, text: str, edits: bool) -> FileResult:
        from .edits import FixEdits
        from .engine import analyse_text

        style = self.settings.fix_style
        try:
            analysis = analyse_text(text, path, None, style, self.context)
        except SourceError as error:  # no finding, so no fix: the result serves the formats that show edits too
            return FileResult(error=str(error), facts=self.facts_for(path), has_edits=True)
        except Exception as error:  # a bug of ours: this file gets one line, the others are still linted
            return FileResult(error=str(InternalError.from_exception(error)), internal=True,
                              facts=self.facts_for(path), has_edits=True)
        fix_edits = None
        if edits and analysis.module is not None and analysis.facts is not None and analysis.findings:
            fix_edits = FixEdits(text, analysis.module, analysis.spans, style, analysis.facts.module_names)
        diagnostics = []
        for diagnostic, finding in zip(analysis.diagnostics, analysis.findings):
            item: dict[str, object] = {
                "code": diagnostic.code, "message": diagnostic.message, "line": diagnostic.line,
                "column": diagnostic.column, "end_line": diagnostic.end_line, "end_column": diagnostic.end_column,
                "fix": None if diagnostic.fix is None else {"applicability": diagnostic.fix.applicability.value,
                                                            "title": diagnostic.fix.title},
            }
            if fix_edits is not None:
                item["edits"] = [{"content": e.content, "start": list(e.start), "end": list(e.end)}
                                 for e in fix_edits.of(finding)]
            diagnostics.append(item)
        contributions = {module: [_as_data(diagnostic) for diagnostic in found]
                         for module, found in analysis.contributed.items()}
        return FileResult(diagnostics, None, analysis.dependencies, self.facts_for(path), edits, contributions)

    def incoming(self, results: dict[Path, FileResult]) -> dict[Path, list[dict]]:
        """What the project's modules find in the code of the files of ``results`` (resolved path -> result) through
        their calls: from the results of the modules that import them, directly or not, those given here, else
        cached, else analysed now. A file's findings then do not depend on which files a run was given (flake8
        lints one at a time)."""
        project = self.context.project
        assert project is not None
        inside = [path for path in results if project.contains(path)]
        if not inside:
            return {}
        known = dict(results)
        for importer in project.importers_of(inside):
            if importer not in known:
                read = project.text_of(importer)
                if read is not None:
                    known[importer] = self.result(str(importer), read[0], edits=False)
        wanted = {str(path): path for path in inside}
        found: dict[Path, list[dict]] = {}
        for contributor in sorted(known):
            for target, diagnostics in known[contributor].contributions.items():
                if target in wanted:
                    found.setdefault(wanted[target], []).extend(diagnostics)
        return found


def incoming_diagnostics(linter: Linter, filename: str, text: str, own: list[Diagnostic],
                         codes: Collection[str] | None = None) -> list[Diagnostic]:
    """What the project's importers find in a file's code through their calls (``Linter.incoming``), beyond its own
    findings ``own``: for the editor, which lints the text itself. Only while the text is the file's on disk, as
    those importers' results (cached, mostly) were worked out for."""
    project = linter.context.project
    if project is None or not project.contains(filename):
        return []
    try:
        if read_source(filename).text != text:
            return []
    except SourceError:
        return []
    key = linter.known(filename, text)[0]
    own_places = {(d.code, d.line, d.column) for d in own}
    incoming = FileResult().with_incoming(linter.incoming({key: FileResult()}).get(key, []))
    return [diagnostic for diagnostic, _ in incoming.findings(filename)
            if (diagnostic.code, diagnostic.line, diagnostic.column) not in own_places
            and (codes is None or diagnostic.code in codes)]


def lint_files(linter: Linter, files: list[tuple[str, str]], edits: bool, jobs: int,
               progress: Callable[[int], None] = lambda done: None) -> list[FileResult]:
    """The results of ``(path, text)`` pairs, in their order, each with what other modules' calls find in its
    code; ``jobs`` > 1 analyses in worker processes. ``progress`` hears how many files are done, after each one
    analysed."""
    results = _own_results(linter, files, edits, jobs, progress)
    keys = [linter.known(path, text) for path, text in files]
    incoming = linter.incoming({key[0]: result for key, result in zip(keys, results) if result is not None})
    return [result if result is None else result.with_incoming(incoming.get(key[0], []))
            for key, result in zip(keys, results)]


def _own_results(linter: Linter, files: list[tuple[str, str]], edits: bool, jobs: int,
                 progress: Callable[[int], None]) -> list[FileResult]:
    project = linter.context.project
    assert project is not None
    keys = [linter.known(path, text) for path, text in files]
    results: list[FileResult | None] = [linter.cached(key, edits) for key in keys]
    pending = [index for index, result in enumerate(results) if result is None]
    # imported modules first: their summaries, made while linting them, are there for their importers
    inside = [index for index in pending if project.contains(files[index][0])]
    levels = [[inside[i] for i in level]
              for level in project.levels([project.resolved(files[index][0]) for index in inside])]
    outside = sorted(set(pending) - set(inside))
    if outside:  # files outside the project are linted on their own, in any order
        levels.append(outside)
    done = len(files) - len(pending)
    if not pending:
        return results  # type: ignore[return-value]
    from .parsing import collector_paused_for_files

    if jobs <= 1 or len(pending) < _PARALLEL_AT_LEAST:
        project.linting.update(keys[index][0] for index in pending)
        with collector_paused_for_files() as file_done:
            for index in (index for level in levels for index in level):
                results[index] = linter.analysed(*files[index], keys[index], edits)
                file_done()
                done += 1
                progress(done)
        return results  # type: ignore[return-value]
    cache_folder = linter.cache.root if linter.cache is not None else None
    with _workers(jobs, linter.settings, cache_folder, linter.cache is not None,
                  project.facts() if inside else None) as pool:
        for level in levels:  # a level's summaries reach the next level's workers through the cache
            chunk = max(1, len(level) // (jobs * 4))
            answers = pool.map(_lint_in_worker, [(files[index][0], files[index][1], edits) for index in level],
                               chunksize=chunk)
            for index, data in zip(level, answers):
                results[index] = FileResult.from_data(data)
                done += 1
                progress(done)
    return results  # type: ignore[return-value]


@contextlib.contextmanager
def _workers(jobs: int, settings: Settings, cache_folder: Path | None, use_cache: bool,
             facts: ProjectFacts | None) -> Iterator[ProcessPoolExecutor]:
    """``jobs`` worker processes that end with this one, however it ends.

    Each worker holds the reading end of a pipe whose only writing end is here, and exits when that end closes:
    when this process dies (killed, SIGTERM), or leaves this block with an exception (Ctrl-C). The forkserver
    and the resource tracker then end by themselves (they wait for every worker). Workers ignore SIGINT, which
    a terminal sends to all of them: this process decides, and the run ends once, without a traceback per worker.

    The forkserver (and a spawned worker) starts as ``python -c ...`` in the current folder, which Python puts
    first on ``sys.path``: a project with a folder named like a standard module (torch's own sources have
    ``signal/``) would shadow it, and the process died importing multiprocessing. PYTHONSAFEPATH (Python 3.11)
    keeps the folder off the path; the workers' ``sys.path`` is this process's, as before. The pool is imported
    here, when a run needs workers.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    os.environ.setdefault("PYTHONSAFEPATH", "1")
    context = multiprocessing.get_context("spawn" if os.name == "nt" else "forkserver")
    parent_alive, alive = context.Pipe(duplex=False)
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker,
                               initargs=(settings, cache_folder, use_cache, facts, parent_alive))
    try:
        yield pool
    except BaseException:
        alive.close()  # the workers exit now, whatever they were doing
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        alive.close()
        parent_alive.close()


_worker: Linter | None = None


def _start_worker(settings: Settings, cache_folder: Path | None, use_cache: bool, facts: ProjectFacts | None,
                  parent_alive: Connection) -> None:
    import signal
    import threading

    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent_alive,), name="np2torch-lint parent watch",
                     daemon=True).start()
    _worker = Linter.for_settings(settings, cache_folder, use_cache, facts)


def _exit_with_parent(parent_alive: Connection) -> None:
    """Wait until the parent's end of the pipe closes (nothing is ever sent), then end this worker at once."""
    try:
        parent_alive.recv_bytes()
    except (EOFError, OSError):
        pass
    os._exit(1)


def _lint_in_worker(job: tuple[str, str, bool]) -> dict:
    assert _worker is not None
    path, text, edits = job  # the parent found no usable cached result for it
    return _worker.analysed(path, text, _worker.known(path, text), edits).as_data()


@dataclass
class FixResult:
    """What fixing one file gave, as data: its new text, how many findings were fixed and those left, or why it
    could not be fixed (``error_kind``: "parse" or "fix")."""

    text: str = ""
    fixed: int = 0
    remaining: list[dict] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None

    def remaining_diagnostics(self, filename: str) -> list[Diagnostic]:
        return [diagnostic for diagnostic, _ in FileResult(self.remaining).findings(filename)]


def fix_file(context: LintContext, path: str, text: str, codes: frozenset[str], style: FixStyle,
             unsafe: bool) -> FixResult:
    from .fixer import fix_text

    try:
        outcome = fix_text(text, path, codes, style, unsafe, context)
    except SourceError as error:
        return FixResult(error=str(error), error_kind="parse")
    except Exception as error:  # a bug of ours (FixError too): the file is left unchanged, the others are fixed
        return FixResult(error=str(InternalError.from_exception(error)), error_kind="fix")
    remaining = [{"code": d.code, "message": d.message, "line": d.line, "column": d.column, "end_line": d.end_line,
                  "end_column": d.end_column,
                  "fix": None if d.fix is None else {"applicability": d.fix.applicability.value, "title": d.fix.title}}
                 for d in outcome.remaining]
    return FixResult(outcome.text, outcome.fixed, remaining)


def fix_files(linter: Linter, files: list[tuple[str, str, frozenset[str]]], unsafe: bool,
              jobs: int) -> list[FixResult]:
    """Fix ``(path, text, codes)`` files from their original texts (nothing is written here), in their order;
    ``jobs`` > 1 fixes in worker processes. Every file is fixed against the others' original texts, so the
    results do not depend on the order or on ``jobs``."""
    style = linter.settings.fix_style
    if jobs <= 1 or len(files) < _PARALLEL_AT_LEAST:
        return [fix_file(linter.context, path, text, codes, style, unsafe) for path, text, codes in files]
    project = linter.context.project
    assert project is not None
    with _workers(jobs, linter.settings, None, False, project.facts()) as pool:
        chunk = max(1, len(files) // (jobs * 4))
        return list(pool.map(_fix_in_worker, [(path, text, codes, unsafe) for path, text, codes in files],
                             chunksize=chunk))


def _fix_in_worker(job: tuple[str, str, frozenset[str], bool]) -> FixResult:
    assert _worker is not None
    path, text, codes, unsafe = job
    return fix_file(_worker.context, path, text, codes, _worker.settings.fix_style, unsafe)
