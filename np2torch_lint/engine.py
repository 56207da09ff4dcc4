"""Lint one source text: (cheap prefilter) -> parse once -> analyse once -> every rule -> diagnostics.

Positions are computed only for files that have findings, and only for the nodes that need one
(``positions.locate``: one printing pass, about a fifth of a parse).
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Collection, Iterator, Mapping, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from .diagnostics import Diagnostic, Finding
from .files import SourceError, line_and_column
from .fixes import FixStyle
from .lint_context import LintContext
from .analysis import Facts, analyze
from .analysis.facts import CallSite
from .noqa import skips_file
from .positions import Span, locate, ranges
from .project import ModuleLink
from .rules import ALL_RULES


T = TypeVar("T")

# LibCST's native parser recurses on the C stack and crashes the process (it cannot raise) on very deep code: a
# few thousand nested brackets, or a chain of 100k ``a + a + ...``; a chain of 20k ``a.a.a`` takes it minutes.
# Python itself refuses more than 200 nested brackets, so files that could hide such code are checked with
# Python's own parser first, and parsing runs on a thread with a large stack.
MAX_SOURCE_CHARS = 10 * 2**20
MAX_NESTING = 1000
MAX_CHAIN_TERMS = 3000  # ``a + a + ... + a``: about what CPython compiles (with its default recursion limit)
_DEEP_STACK_BYTES = 512 * 2**20
_LONG_STRETCH = 2000
_BRACKET = re.compile(r"[][(){}]")
#: what can make an expression one level deeper without a bracket: an operator, a dot, a keyword that nests.
#: A long line or bracketed stretch with fewer of them cannot hide a deep chain (data literals, long calls, and
#: docstrings are common and need no second parse); brackets and blocks add at most a few hundred levels more
_NESTING_TOKEN = re.compile(r"[-+*/%@&|^~<>.]|\b(?:not|lambda|if|await|yield|for|async|and|or|in|is)\b")
_NESTING_TOKENS = 500
_CONTINUATIONS = 200
_LONG_CONTINUATION = re.compile(r"(?:\\\r?\n[^\n]*){%d}" % _CONTINUATIONS)


_PROJECT_MARKERS = ("torch", "numpy", ".cuda(", ".to(")


def could_have_findings(text: str, project: bool = False) -> bool:
    """Every rule needs a tensor, and in a file on its own a tensor needs torch imported: a file that never says
    "torch" is clean. In a project a tensor may come from another module: a file needs reading when it says
    "torch" or "numpy" (``.numpy()``) or moves something (``.cuda(``, ``.to(``)."""
    if not project:
        return "torch" in text
    return any(marker in text for marker in _PROJECT_MARKERS)


def parse(text: str) -> cst.Module:
    _refuse_what_would_crash_the_parser(text)
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise SourceError(_syntax_error_reason(text, error)) from None
    except (RecursionError, MemoryError) as error:  # pathological nesting or size
        raise SourceError(f"too deeply nested or too large to parse ({type(error).__name__})") from None
    except UnicodeEncodeError as error:  # a lone surrogate, from an editor's or a notebook's JSON
        line, column = line_and_column(text, error.start)
        raise SourceError(f"a lone surrogate (\\u{ord(text[error.start]):04x}) at {line}:{column}, which Python "
                          "source cannot hold") from None


def _syntax_error_reason(text: str, error: cst.ParserSyntaxError) -> str:
    """Python's own words for a syntax error (clearer than LibCST's), or LibCST's when Python accepts the code."""
    try:
        _python_parse(text)
    except SyntaxError as python_error:
        return f"{python_error.msg} at {python_error.lineno}:{python_error.offset}"
    except (ValueError, RecursionError, MemoryError):
        pass
    message = " ".join(error.message.split())
    return f"LibCST cannot parse this: {message} at {error.raw_line}:{error.raw_column + 1}"


def _refuse_what_would_crash_the_parser(text: str) -> None:
    if len(text) > MAX_SOURCE_CHARS:
        raise SourceError(f"too large to lint ({len(text) / 2**20:.1f} MiB; the limit is "
                          f"{MAX_SOURCE_CHARS // 2**20} MiB)")
    # Python's own parser (a fifth of LibCST's time) checks only text that could hide very deep code: a chain of
    # a thousand terms needs a long line, a long bracketed stretch or a long run of backslash continuations
    if not _could_hide_deep_code(text):
        return
    try:
        tree = _python_parse(text)
    except SyntaxError as error:
        raise SourceError(f"{error.msg} at {error.lineno}:{error.offset}") from None
    except (RecursionError, MemoryError, ValueError) as error:
        raise SourceError(f"too deeply nested to parse ({type(error).__name__})") from None
    nesting, terms = _ast_depth(tree)
    if nesting > MAX_NESTING:
        raise SourceError(f"nested {nesting} levels deep; np2torch-lint parses at most {MAX_NESTING}")
    if terms > MAX_CHAIN_TERMS:
        raise SourceError(f"a chain of {terms} operands; np2torch-lint parses at most {MAX_CHAIN_TERMS}, as "
                          "Python compiles")


def _could_hide_deep_code(text: str) -> bool:
    """Long lines or bracketed stretches (longer than a line may be) with many nesting tokens, more than 200
    nested brackets, or many backslash continuations in a row (brackets and tokens in strings and comments count
    too: that only errs to checking)."""
    # (plain string operations first: a regular expression that looks for a long line tries every position)
    lines = text.split("\n")
    if max(map(len, lines)) >= _LONG_STRETCH and any(
            _nests_deeply(line, 0, len(line)) for line in lines if len(line) >= _LONG_STRETCH):
        return True
    continuations = text.count("\\\n") + text.count("\\\r\n")
    if continuations >= _CONTINUATIONS and _LONG_CONTINUATION.search(text):
        return True
    depth = opened_at = 0
    for bracket in _BRACKET.finditer(text):
        if bracket.group() in "([{":
            depth += 1
            if depth == 1:
                opened_at = bracket.start()
            elif depth > 200:
                return True
        elif depth > 0:
            depth -= 1
            if depth == 0 and bracket.start() - opened_at > _LONG_STRETCH and _nests_deeply(
                    text, opened_at, bracket.start()):
                return True
    return False


def _nests_deeply(text: str, start: int, end: int) -> bool:
    count = 0
    for _ in _NESTING_TOKEN.finditer(text, start, end):
        count += 1
        if count >= _NESTING_TOKENS:
            return True
    return False


def _python_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are the user's compiler's business, not ours
        return compile(text, "<file>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)


def _ast_depth(tree: ast.AST) -> tuple[int, int]:
    """How deeply expressions and blocks nest, and the most terms of one chain of binary operators.

    The next link of a flat chain adds no level of nesting: an ``elif`` (LibCST parses chains of 20,000), or an
    operand of a binary operation inside another (``a + a + ... + a``, which Python compiles up to about 3,000
    terms and LibCST parses in time quadratic in the terms: that is their own limit). Brackets, which do nest,
    stop at 200 in Python's parser; method chains (``x.a().b()``) nest: LibCST takes minutes over a few thousand
    links."""
    deepest = longest = 0
    stack = [(tree, 1, 1)]
    while stack:
        node, depth, terms = stack.pop()
        deepest, longest = max(deepest, depth), max(longest, terms)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.BinOp) and isinstance(node, ast.BinOp):
                stack.append((child, depth, terms + 1))
            elif isinstance(child, ast.If) and isinstance(node, ast.If) and node.orelse == [child]:
                stack.append((child, depth, 1))
            else:
                stack.append((child, depth + 1, 1))
    return deepest, longest + 1  # n operators join n + 1 terms


_deep_stack_lock = threading.Lock()
_deep_stack_threads = 0  # how many run now (the language server lints documents on threads of their own)
_deep_stack_restore = [0]  # the recursion limit from before the first of them


@contextmanager
def _deep_recursion_allowed() -> Iterator[None]:
    """A high recursion limit while any deep-stack thread runs (the limit is the process's, not a thread's)."""
    global _deep_stack_threads
    with _deep_stack_lock:
        if _deep_stack_threads == 0:
            _deep_stack_restore[0] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_deep_stack_restore[0], 50_000))
        _deep_stack_threads += 1
    try:
        yield
    finally:
        with _deep_stack_lock:
            _deep_stack_threads -= 1
            if _deep_stack_threads == 0:
                sys.setrecursionlimit(_deep_stack_restore[0])


def run_with_deep_stack(function: Callable[..., T], *args: object) -> T:
    """Call ``function`` on a thread with a large C stack and a high recursion limit, and return its result (from
    any number of threads at once: the limit is raised while any runs)."""
    outcome: list = []

    def target() -> None:
        # No cyclic garbage collection while one file is parsed and analysed: a full collection walks every node
        # of the (large, acyclic, still alive) tree, and the analysis allocates enough to set off many of them
        # (measured: 1.4-1.5x a bare parse with them, 1.1x without). What the analysis makes in cycles is
        # collected afterwards, as usual.
        collecting = gc.isenabled()
        gc.disable()
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # noqa: BLE001 - handed back to the calling thread below
            outcome.append((False, error))
        finally:
            if collecting:
                gc.enable()

    with _deep_recursion_allowed():
        with _deep_stack_lock:  # the stack size is the process's: set for this thread's start only
            previous_size = threading.stack_size(_DEEP_STACK_BYTES)
            try:
                thread = threading.Thread(target=target, name="np2torch-lint-parse")
                thread.start()
            finally:
                threading.stack_size(previous_size)
        thread.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


@contextmanager
def garbage_collected_after() -> Iterator[None]:
    """No cyclic garbage collection until one file's work is done and its tree dropped, then a collection of the
    youngest generation only.

    Collected while the file is being worked on, the (alive, large) tree would be walked and promoted to older
    generations, and walked again there. The analysis breaks the reference cycles it made once it is done
    (``Analyzer.release``), so the tree is freed when it is dropped, and the collection afterwards walks only the
    little the analysis left in cycles (before that, walking the garbage tree cost about 0.1x of the parse)."""
    with collector_paused_for_files():  # a run of one file
        yield


@contextmanager
def collector_paused_for_files(every: int = 1000) -> Iterator[Callable[[], None]]:
    """No cyclic garbage collection during a run of files (each one's ``garbage_collected_after`` then does
    nothing), but a collection of the youngest generation after every ``every`` files (call the function it gives
    after each file) and one at the end.

    A file's analysis leaves only a few objects in cycles (``Analyzer.release``: its tree is freed when dropped),
    so collecting after each file would mostly walk what is still alive, which in project mode is the trees and
    analyses kept for files whose turn is to come: on pytorch/rl (842 files) that was 0.85 s of collections, about
    0.03x of the bare parse, against 0.24 s now, most of it the collection at the end."""
    collecting = gc.isenabled()
    gc.disable()
    done = 0

    def file_done() -> None:
        nonlocal done
        done += 1
        if collecting and done % every == 0:
            gc.collect(0)

    try:
        yield file_done
    finally:
        if collecting:  # a host that turned the collector off keeps it off
            gc.collect(0)
            gc.enable()


def findings_for(module: cst.Module, codes: Collection[str] | None = None,
                 style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
                 filename: str | None = None) -> tuple[list[Finding], Facts, ModuleLink | None]:
    project = context.project if context is not None else None
    if project is not None and (filename is None or not project.contains(filename)):
        project = None  # a file outside the project's folder is linted on its own
    link = None
    if project is not None and filename is not None:
        # the project facts first: working them out may analyse this file (kept for its turn), and reads every
        # file's text (so that its summary, remembered with its analysis, can be cached)
        changed_in = project.facts().default_dtype_changed_for(project.relative(filename))
        facts, link = project.analysis_for_its_turn(filename, module)
        facts.default_dtype_changed_in = changed_in
    else:
        facts = analyze(module, context.models if context is not None else None)
    return rule_findings(facts, codes, style), facts, link


def rule_findings(facts: Facts, codes: Collection[str] | None, style: FixStyle) -> list[Finding]:
    """What every rule (``codes`` among them) finds in one module's facts, one finding of a rule per node."""
    return one_per_node([finding for rule in ALL_RULES if codes is None or rule.CODE in codes
                         for finding in rule.check(facts, style)])


def one_per_node(findings: list[Finding]) -> list[Finding]:
    """One finding of a rule per node: a body read with its parameters unknown and again with a caller's arguments
    may both find it; the first that holds without a caller's arguments is kept, else the first."""
    kept: dict[tuple[str, cst.CSTNode], int] = {}
    chosen: list[Finding] = []
    for finding in findings:
        key = (finding.code, finding.node)
        index = kept.get(key)
        if index is None:
            kept[key] = len(chosen)
            chosen.append(finding)
        elif chosen[index].through is not None and finding.through is None:
            chosen[index] = finding
    return chosen


@dataclass
class Analysis:
    """One file's findings with where they are (``spans`` covers the findings' nodes, the fix targets and the
    top-level statements that say where an import goes)."""

    module: cst.Module | None = None
    facts: Facts | None = None
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # one per finding, same order
    spans: Mapping[cst.CSTNode, Span] = field(default_factory=dict)
    #: the other modules of the project whose summaries the analysis used: path -> digest (for the cache)
    dependencies: dict[str, str] = field(default_factory=dict)
    #: findings in other modules' code that hold through this file's calls: module path -> its diagnostics
    contributed: dict[str, list[Diagnostic]] = field(default_factory=dict)

    @property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        return ranges(self.spans)


def analyse_text(text: str, filename: str, codes: Collection[str] | None = None,
                 style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
                 check_syntax: bool = True) -> Analysis:
    """Parse and analyse once; raises ``SourceError`` when the text does not parse.

    A file that needs no analysis (no torch, skipped, no rule enabled) is only checked to parse, unless
    ``check_syntax`` is false (flake8 reports syntax errors itself). ``# noqa`` comments are not applied here
    (the flake8 plugin leaves them to flake8); ``skip-file`` is.
    """
    if not _may_have_findings(text, codes, context, filename):
        if check_syntax:
            check_parses(text)
        return Analysis()
    try:
        return run_with_deep_stack(_analyse_module_text, text, filename, codes, style, context)
    except RecursionError:
        raise SourceError("too deeply nested to analyse (RecursionError)") from None


def analyse_on_this_thread(text: str, filename: str, codes: Collection[str] | None = None,
                           style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None) -> Analysis:
    """``analyse_text`` for a caller already on the deep-stack thread (``run_with_deep_stack``)."""
    if not _may_have_findings(text, codes, context, filename):
        return Analysis()
    return _analyse_module_text(text, filename, codes, style, context)


def _may_have_findings(text: str, codes: Collection[str] | None, context: LintContext | None,
                       filename: str | None = None) -> bool:
    in_project = (context is not None and context.project is not None
                  and (filename is None or context.project.contains(filename)))
    return could_have_findings(text, in_project) and not skips_file(text) and (codes is None or bool(codes))


def lint_text(text: str, filename: str, codes: Collection[str] | None = None,
              style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
              check_syntax: bool = True) -> list[Diagnostic]:
    """The diagnostics of one file's text, sorted by position; raises ``SourceError`` when it does not parse."""
    return by_position(analyse_text(text, filename, codes, style, context, check_syntax).diagnostics)


def check_parses(text: str) -> None:
    """Raise ``SourceError`` when the text does not parse, without building LibCST's tree when Python's parser (a
    fifth of LibCST's time) accepts it. LibCST has the last word, as it may know syntax newer than this Python."""
    try:
        _python_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        run_with_deep_stack(parse, text)  # raises SourceError with LibCST's or Python's reason


def by_position(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.line, d.column, d.code))


def _analyse_module_text(text: str, filename: str, codes: Collection[str] | None, style: FixStyle,
                         context: LintContext | None = None) -> Analysis:
    project = context.project if context is not None else None
    module = project.parsed_before_its_turn(filename, text) if project is not None else None
    if module is None:
        module = parse(text)
    findings, facts, link = findings_for(module, codes, style, context, filename)
    dependencies = dict(link.dependencies) if link is not None else {}
    if link is not None:
        link.project.keep_linted_tree(filename, text, module)  # for the callers linted later (foreign.py)
    foreign = {path: rule_findings(found, codes, style) for path, found in facts.foreign.items()}
    foreign = {path: found for path, found in foreign.items() if found}
    if not findings and not foreign:
        return Analysis(module, facts, dependencies=dependencies)
    wanted = {finding.node for finding in findings}
    wanted.update(finding.fix.target for finding in findings if finding.fix is not None and finding.fix.target)
    sites = [finding.through for found in (findings, *foreign.values()) for finding in found
             if isinstance(finding.through, CallSite)]
    wanted.update(site.node for site in sites if site.module is None)
    if any(finding.fix is not None for finding in findings):
        wanted.update(layout_statements(module))
    spans = locate(module, text, wanted)
    lines = _CallLines(link, filename, spans, sites, foreign)
    diagnostics = [_diagnostic(finding, filename, spans, lines, None) for finding in findings]
    contributed = {}
    for path, found in foreign.items():
        their_spans = lines.spans_in(path)
        contributed[str(path)] = [_diagnostic(finding, str(path), their_spans, lines, path, fix=False)
                                  for finding in found]
    return Analysis(module, facts, findings, diagnostics, spans, dependencies, contributed)


def _diagnostic(finding: Finding, filename: str, spans: Mapping[cst.CSTNode, Span], lines: _CallLines,
                module: object | None, fix: bool = True) -> Diagnostic:
    """A finding where it is; one that holds through a call names that call, so that a reader can check it there.
    A finding in another module's code (``module``) carries no fix: that file is fixed on its own."""
    where = spans[finding.node].range
    message = finding.message
    if isinstance(finding.through, CallSite):
        message += f" (through the call of {finding.through.callee} at {lines.of(finding.through, module)})"
    return Diagnostic(finding.code, message, filename, where.start.line, where.start.column + 1, where.end.line,
                      where.end.column + 1, finding.fix if fix else None)


class _CallLines:
    """Where the calls that findings hold through are: ``line 88`` in the same file, ``train.py:88`` in another
    (located once per module, with the findings in that module's code)."""

    def __init__(self, link: ModuleLink | None, filename: str, spans: Mapping[cst.CSTNode, Span],
                 sites: list[CallSite], foreign: Mapping[object, list[Finding]]) -> None:
        self.link, self.filename = link, filename
        self._spans: dict[object | None, Mapping[cst.CSTNode, Span]] = {None: spans}
        wanted: dict[object, set[cst.CSTNode]] = {path: {finding.node for finding in found}
                                                  for path, found in foreign.items()}
        for site in sites:
            if site.module is not None:
                wanted.setdefault(site.module, set()).add(site.node)
        for path, nodes in wanted.items():
            module = link.foreign_module(path) if link is not None else None
            self._spans[path] = locate(module.tree, module.text, nodes) if module is not None else {}

    def spans_in(self, module: object) -> Mapping[cst.CSTNode, Span]:
        return self._spans.get(module, {})

    def of(self, site: CallSite, reported_in: object | None) -> str:
        span = self._spans.get(site.module, {}).get(site.node)
        line = span.range.start.line if span is not None else "?"
        if site.module == reported_in:
            return f"line {line}"
        name = self.filename if site.module is None else str(site.module)
        if self.link is not None:
            name = self.link.project.relative(name)
        return f"{name}:{line}"


def layout_statements(module: cst.Module) -> list[cst.CSTNode]:
    """The top-level statements an added import is placed among: imports, and the docstring or first other
    statement (the import goes before it when the module has no import block)."""
    statements: list[cst.CSTNode] = []
    others = 0
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body):
            statements.append(statement)
        elif others < 2:  # the docstring, and the first statement after it
            statements.append(statement)
            others += 1
    return statements
