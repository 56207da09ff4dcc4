"""Lint one source text: (cheap prefilter) -> parse once -> analyse once -> every rule -> diagnostics.

Positions are computed only for files that have findings: LibCST's ``PositionProvider`` walks the whole tree
again (about 3.5x a parse, measured on torch's sources), and most files have no findings.
"""

from __future__ import annotations

import ast
import re
import sys
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Mapping, TypeVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .diagnostics import Diagnostic, Finding
from .files import SourceError
from .fixes import FixStyle
from .analysis import Analyzer, Facts
from .analysis.models import Models
from .noqa import skips_file
from .project import Project
from .rules import ALL_RULES


T = TypeVar("T")

# LibCST's native parser recurses on the C stack and crashes the process (it cannot raise) on very deep code: a
# few thousand nested brackets, or a chain of 100k ``a + a + ...``; a chain of 20k ``a.a.a`` takes it minutes.
# Python itself refuses more than 200 nested brackets, so files that could hide such code are checked with
# Python's own parser first, and parsing runs on a thread with a large stack.
MAX_SOURCE_CHARS = 10 * 2**20
MAX_NESTING = 1000
_DEEP_STACK_BYTES = 512 * 2**20
_NOT_BRACKETS = re.compile(r"[^][(){}]+")
_LONG_LINE = re.compile(r"[^\n]{2000}")


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
    # Python's own parser (a fifth of LibCST's time) checks only files that could hide very deep code: long
    # lines, more than 200 nested brackets, or enough lines for a chain of tens of thousands of terms
    if len(text) < 256 * 1024 and not _LONG_LINE.search(text) and _bracket_depth(text) <= 200:
        return
    try:
        tree = _python_parse(text)
    except SyntaxError as error:
        raise SourceError(f"{error.msg} at {error.lineno}:{error.offset}") from None
    except (RecursionError, MemoryError, ValueError) as error:
        raise SourceError(f"too deeply nested to parse ({type(error).__name__})") from None
    nesting = _ast_depth(tree)
    if nesting > MAX_NESTING:
        raise SourceError(f"nested {nesting} levels deep; np2torch-lint parses at most {MAX_NESTING}")


def _bracket_depth(text: str) -> int:
    """The deepest bracket nesting, counting brackets in strings and comments too (that only errs to checking)."""
    brackets = _NOT_BRACKETS.sub("", text)
    if brackets.count("(") + brackets.count("[") + brackets.count("{") <= 200:
        return 0
    depth = deepest = 0
    for bracket in brackets:
        depth = depth + 1 if bracket in "([{" else depth - 1
        if depth > deepest:
            deepest = depth
    return deepest


def _python_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are the user's compiler's business, not ours
        return compile(text, "<file>", "exec", dont_inherit=True, flags=ast.PyCF_ONLY_AST)


def _ast_depth(tree: ast.AST) -> int:
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def run_with_deep_stack(function: Callable[..., T], *args: object) -> T:
    """Call ``function`` on a thread with a large C stack and a high recursion limit, and return its result."""
    outcome: list = []

    def target() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # noqa: BLE001 - handed back to the calling thread below
            outcome.append((False, error))

    previous_limit = sys.getrecursionlimit()
    previous_size = threading.stack_size(_DEEP_STACK_BYTES)
    sys.setrecursionlimit(max(previous_limit, 50_000))
    try:
        thread = threading.Thread(target=target, name="np2torch-lint-parse")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous_size)
        sys.setrecursionlimit(previous_limit)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


@dataclass(frozen=True)
class LintContext:
    """What lies beyond the file: users' model rows and the project (its other modules, project facts)."""

    models: Models | None = None
    project: Project | None = None


def findings_for(module: cst.Module, codes: Collection[str] | None = None,
                 style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
                 filename: str | None = None) -> tuple[list[Finding], Facts, Analyzer]:
    project = context.project if context is not None else None
    link = project.link(filename) if project is not None and filename is not None else None
    analyzer = Analyzer(context.models if context is not None else None, link)
    facts = analyzer.analyze(module)
    if project is not None:
        facts.default_dtype_changed_in = project.facts().default_dtype_changed_in
        if link is not None and link.module is not None and filename is not None:
            project.remember(link.module, Path(filename), analyzer.exported(), link.dependencies)
    findings = [finding for rule in ALL_RULES if codes is None or rule.CODE in codes
                for finding in rule.check(facts, style)]
    return findings, facts, analyzer


@dataclass
class Analysis:
    """One file's findings with their positions (``positions`` covers findings' nodes and fix targets)."""

    module: cst.Module | None = None
    facts: Facts | None = None
    findings: list[Finding] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)  # one per finding, same order
    positions: Mapping[cst.CSTNode, CodeRange] = field(default_factory=dict)


def analyse_text(text: str, filename: str, codes: Collection[str] | None = None,
                 style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
                 check_syntax: bool = True) -> Analysis:
    """Parse and analyse once; raises ``SourceError`` when the text does not parse.

    A file that needs no analysis (no torch, skipped, no rule enabled) is only checked to parse, unless
    ``check_syntax`` is false (flake8 reports syntax errors itself). ``# noqa`` comments are not applied here
    (the flake8 plugin leaves them to flake8); ``skip-file`` is.
    """
    in_project = context is not None and context.project is not None
    if not could_have_findings(text, in_project) or skips_file(text) or (codes is not None and not codes):
        if check_syntax:
            check_parses(text)
        return Analysis()
    try:
        return run_with_deep_stack(_analyse_module_text, text, filename, codes, style, context)
    except RecursionError:
        raise SourceError("too deeply nested to analyse (RecursionError)") from None


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
    module = parse(text)
    findings, facts, _ = findings_for(module, codes, style, context, filename)
    if not findings:
        return Analysis(module, facts)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    diagnostics = []
    for finding in findings:
        where = positions[finding.node]
        diagnostics.append(Diagnostic(
            finding.code, finding.message, filename, where.start.line, where.start.column + 1, where.end.line,
            where.end.column + 1, finding.fix))
    return Analysis(module, facts, findings, diagnostics, positions)
