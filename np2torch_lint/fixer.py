"""Apply fixes to a fixed point: analyse, apply every non-overlapping fix, analyse again, ... (bounded).

Each pass applies at most one fix per stretch of code; fixes that overlap wait for the next pass, which sees
the code they left (so ``t.numpy()`` flagged by NPT001 and NPT002 becomes ``t.detach().cpu().numpy()`` in two
passes). A result that does not parse is never returned.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Collection

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from .diagnostics import Applicability, Diagnostic, Finding
from .engine import analyse_text, by_position, parse, run_with_deep_stack
from .files import SourceError
from .fixes import Edit, FixStyle
from .noqa import filter_suppressed

MAX_PASSES = 8
_COMMENT = re.compile(r"#[^\n]*")


class FixError(Exception):
    """A fix produced code that does not parse: a bug of ours; the file must be left alone."""


@dataclass(frozen=True)
class FixOutcome:
    text: str
    fixed: int  # findings fixed
    remaining: list[Diagnostic]  # findings left (no fix, unsafe fixes not enabled, or suppressed = not counted)


def fix_text(text: str, filename: str, codes: Collection[str] | None = None,
             style: FixStyle = FixStyle.HELPERS, unsafe: bool = False) -> FixOutcome:
    """Fix one file's text; raises ``SourceError`` if it does not parse, ``FixError`` if a fix breaks it."""
    fixed = 0
    analysis = analyse_text(text, filename, codes, style)
    for _ in range(MAX_PASSES):
        reported = set(map(id, filter_suppressed(analysis.diagnostics, text)))
        candidates = [
            (finding, diagnostic) for finding, diagnostic in zip(analysis.findings, analysis.diagnostics)
            if id(diagnostic) in reported and finding.fix is not None
            and (unsafe or finding.fix.applicability is Applicability.SAFE)
        ]
        if not candidates or analysis.module is None or analysis.facts is None:
            break
        chosen = _non_overlapping([finding for finding, _ in candidates], analysis.positions)
        edit = Edit(style, dict(analysis.facts.module_names))
        new_text, applied = _apply(analysis.module, chosen, edit)
        if not applied or new_text == text:
            break
        try:  # the next pass's analysis parses the result: a fix that breaks the code is caught there
            analysis = analyse_text(new_text, filename, codes, style)
            if analysis.module is None:  # nothing to analyse, so nothing was parsed: check it anyway
                run_with_deep_stack(parse, new_text)
        except SourceError as error:
            codes_tried = ", ".join(sorted({finding.code for finding in chosen}))
            raise FixError(f"fixing {codes_tried} gave code that does not parse ({error})") from None
        text = new_text
        fixed += applied
    # ``analysis`` is always of ``text`` here, so what is left needs no further pass
    remaining = by_position(filter_suppressed(analysis.diagnostics, text))
    return FixOutcome(text, fixed, remaining)


def _non_overlapping(findings: list[Finding], positions) -> list[Finding]:
    """The findings whose fix targets do not overlap, earliest first (ties: rule order)."""
    def span(finding: Finding):
        where = positions[_target(finding)]
        return (where.start.line, where.start.column), (where.end.line, where.end.column)

    chosen: list[Finding] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for finding in sorted(findings, key=lambda f: (span(f)[0], f.code)):
        start, end = span(finding)
        if all(end <= other_start or other_end <= start for other_start, other_end in taken):
            chosen.append(finding)
            taken.append((start, end))
    return chosen


def _target(finding: Finding) -> cst.CSTNode:
    assert finding.fix is not None
    return finding.fix.target if finding.fix.target is not None else finding.node


class _ReplaceNodes(cst.CSTTransformer):
    """Replace each target node with what its fix builds from the updated node, unless that loses a comment."""

    def __init__(self, fixes: dict[cst.CSTNode, Finding], edit: Edit) -> None:
        super().__init__()
        self.fixes = fixes
        self.edit = edit
        self.applied = 0

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        finding = self.fixes.get(original_node)
        if finding is None or finding.fix is None:
            return updated_node
        replacement = finding.fix.build(updated_node, self.edit)
        if replacement is updated_node:
            return updated_node
        if Counter(_comments(updated_node)) - Counter(_comments(replacement)):
            return updated_node  # a fix must keep every comment; this one cannot, so it is not applied
        self.applied += 1
        return replacement


_EMPTY_MODULE = cst.Module(body=[])


def _comments(node: cst.CSTNode) -> list[str]:
    return _COMMENT.findall(_EMPTY_MODULE.code_for_node(node))


def _apply(module: cst.Module, chosen: list[Finding], edit: Edit) -> tuple[str, int]:
    replacer = _ReplaceNodes({_target(finding): finding for finding in chosen}, edit)
    fixed = module.visit(replacer)
    if edit.imports:
        context = CodemodContext()
        for module_name, obj, asname in sorted(edit.imports, key=lambda item: (item[0], item[1] or "")):
            AddImportsVisitor.add_needed_import(context, module_name, obj, asname)
        fixed = AddImportsVisitor(context).transform_module(fixed)
    return fixed.code, replacer.applied
