"""Lint one source text: (cheap prefilter) -> parse once -> analyse once -> every rule -> diagnostics.

Positions are computed only for files that have findings, and only for the nodes that need one
(``positions.locate``: one printing pass, about a fifth of a parse).
"""

from __future__ import annotations

import os

from dataclasses import dataclass, field
from typing import Collection, Mapping

import libcst as cst
from libcst.metadata import CodeRange

from .diagnostics import Diagnostic, Finding
from .files import SourceError, is_test_module
from .fixes import FixStyle
from .lint_context import LintContext
from .analysis import Facts, analyze
from .analysis.facts import CallSite
from .noqa import skips_file
from .parsing import check_parses, could_have_findings, parse, run_with_deep_stack
from .positions import Span, locate, ranges
from .project import ModuleLink
from .rules import ALL_RULES


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
        relative = project.relative(filename)
        project_facts = project.facts()
        changed_in = project_facts.default_dtype_changed_for(relative)
        facts, link = project.analysis_for_its_turn(filename, module)
        facts.default_dtype_changed_in = changed_in
        facts.float32_default_set_in = project_facts.float32_default_set_in
        facts.in_test_module = is_test_module(relative)
    else:
        facts = analyze(module, context.models if context is not None else None)
        # (no project to place it in: its name alone, as folders above it may be anyone's)
        facts.in_test_module = filename is not None and is_test_module(os.path.basename(filename))
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
    #: for the fixer, where a file has fixes: the parent of each node ``spans`` covers and of their ancestors (by
    #: ``id``), so that it can swap nodes in the tree (``fix_tree``)
    parents: dict[int, cst.CSTNode] = field(default_factory=dict)

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
                           style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
                           module: cst.Module | None = None, for_fixing: bool = False) -> Analysis:
    """``analyse_text`` for a caller already on the deep-stack thread (``run_with_deep_stack``); ``module``, when
    given, is the text's tree (it prints ``text``), made without parsing it (the fixer's). ``for_fixing``: note
    the ``parents`` the fixer needs to swap nodes."""
    if not _may_have_findings(text, codes, context, filename):
        return Analysis()
    return _analyse_module_text(text, filename, codes, style, context, module, for_fixing)


def _may_have_findings(text: str, codes: Collection[str] | None, context: LintContext | None,
                       filename: str | None = None) -> bool:
    project = context.project if context is not None else None
    if project is not None and filename is not None and project.contains(filename):
        may_have = project.may_have_findings(filename, text)
    else:
        may_have = could_have_findings(text, project=project is not None and filename is None)
    return may_have and not skips_file(text) and (codes is None or bool(codes))


def lint_text(text: str, filename: str, codes: Collection[str] | None = None,
              style: FixStyle = FixStyle.HELPERS, context: LintContext | None = None,
              check_syntax: bool = True) -> list[Diagnostic]:
    """The diagnostics of one file's text, sorted by position; raises ``SourceError`` when it does not parse."""
    return by_position(analyse_text(text, filename, codes, style, context, check_syntax).diagnostics)


def by_position(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.line, d.column, d.code))


def _analyse_module_text(text: str, filename: str, codes: Collection[str] | None, style: FixStyle,
                         context: LintContext | None = None, module: cst.Module | None = None,
                         for_fixing: bool = False) -> Analysis:
    project = context.project if context is not None else None
    if project is not None:
        parsed = project.parsed_before_its_turn(filename, text)
        module = parsed if parsed is not None else module
    if module is None:
        module = parse(text, tabs_expanded=not for_fixing)
    findings, facts, link = findings_for(module, codes, style, context, filename)
    dependencies = dict(link.dependencies) if link is not None else {}
    if link is not None:
        link.project.keep_linted_tree(filename, text, module)  # for the callers linted later (foreign.py)
    for path, found in facts.foreign.items():  # (another module of the project, whose bodies this one's calls read)
        found.in_test_module = link is not None and is_test_module(link.project.relative(path))
    foreign = {path: rule_findings(found, codes, style) for path, found in facts.foreign.items()}
    foreign = {path: found for path, found in foreign.items() if found}
    if not findings and not foreign:
        return Analysis(module, facts, dependencies=dependencies)
    wanted = {finding.node for finding in findings}
    wanted.update(finding.fix.target for finding in findings if finding.fix is not None and finding.fix.target)
    sites = [finding.through for found in (findings, *foreign.values()) for finding in found
             if isinstance(finding.through, CallSite)]
    wanted.update(site.node for site in sites if site.module is None)
    parents: dict[int, cst.CSTNode] = {}
    has_fixes = any(finding.fix is not None for finding in findings)
    if has_fixes:
        wanted.update(layout_statements(module))
    spans = locate(module, text, wanted, parents if has_fixes and for_fixing else None)
    lines = _CallLines(link, filename, spans, sites, foreign)
    diagnostics = [_diagnostic(finding, filename, spans, lines, None) for finding in findings]
    contributed = {}
    for path, found in foreign.items():
        their_spans = lines.spans_in(path)
        # (a fact a read of that module's body made about the caller's own code, a list this file started with a
        # moved value, is not that module's to report: only what is in its tree is)
        contributed[str(path)] = [_diagnostic(finding, str(path), their_spans, lines, path, fix=False)
                                  for finding in found if finding.node in their_spans]
    return Analysis(module, facts, findings, diagnostics, spans, dependencies, contributed, parents)


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
