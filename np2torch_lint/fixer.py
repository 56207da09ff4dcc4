"""Apply fixes to a fixed point: analyse, apply every non-overlapping fix, analyse again, ... (bounded).

Each pass applies every fix whose target does not overlap an earlier one, in one rewrite of the text: each
target's characters are replaced by its replacement, printed at the target's indentation, and the imports
the replacements need are added where isort puts them. Fixes that overlap wait for the next pass, which sees
the code they left (so ``t.numpy()`` flagged by NPT001 and NPT002 becomes ``t.detach().cpu().numpy()`` in two
passes). The next pass's analysis is also the check that the result parses: a result that does not parse is
never returned. Where a pass applied every fix it tried, that analysis reads the old tree with the replacements
swapped in (``fix_tree``) rather than parsing the result again, and Python's own parser checks the text; it is
kept when nothing is left to fix and no finding touches new code, else the result is parsed and analysed afresh.
Everything runs on the deep-stack thread, so depth is limited only by the parser's guard.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Collection, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState

from .diagnostics import Applicability, Diagnostic, Finding
from .engine import Analysis, LintContext, analyse_on_this_thread, by_position
from .fix_tree import fixed_tree
from .parsing import check_fixed_text, parse, python_accepts, run_with_deep_stack
from .fix_imports import ImportLayout, NameClash, Spelling
from .files import SourceError
from .fixes import Edit, FixStyle, without_redundant_cast
from .noqa import filter_suppressed
from .positions import Span

MAX_PASSES = 8
_COMMENT = re.compile(r"#[^\r\n]*")


class FixError(Exception):
    """A fix produced code that does not parse: a bug of ours; the file must be left alone."""


@dataclass(frozen=True)
class FixOutcome:
    text: str
    fixed: int  # findings fixed
    remaining: list[Diagnostic]  # findings left (no fix, unsafe fixes not enabled, or suppressed = not counted)


def fix_text(text: str, filename: str, codes: Collection[str] | None = None,
             style: FixStyle = FixStyle.HELPERS, unsafe: bool = False, context: LintContext | None = None
             ) -> FixOutcome:
    """Fix one file's text; raises ``SourceError`` if it does not parse, ``FixError`` if a fix breaks it."""
    try:
        return run_with_deep_stack(_fix_on_this_thread, text, filename, codes, style, unsafe, context)
    except RecursionError:
        raise SourceError("too deeply nested to fix (RecursionError)") from None


def _fix_on_this_thread(text: str, filename: str, codes: Collection[str] | None, style: FixStyle,
                        unsafe: bool, context: LintContext | None = None) -> FixOutcome:
    fixed = 0
    analysis = analyse_on_this_thread(text, filename, codes, style, context, for_fixing=True)
    found = Counter(diagnostic.code for diagnostic in filter_suppressed(analysis.diagnostics, text))
    spelling: Spelling | None = None
    for _ in range(MAX_PASSES):
        candidates = _candidates(analysis, text, unsafe)
        if not candidates or analysis.module is None or analysis.facts is None:
            break
        if spelling is None:  # the file's names are looked at once: a fix binds no name but its own import
            spelling = Spelling(dict(analysis.facts.module_names))
        edit = Edit(style, spelling, analysis.module, text)
        made = _apply(text, analysis.module, candidates, analysis.spans, edit)
        new_text, applied = made.text, len(made.swaps)
        if not applied or new_text == text:
            break
        try:  # the next pass's analysis parses the result: a fix that breaks the code is caught there
            analysis = _analysis_of_fixed(new_text, text, analysis, made, len(candidates), filename, codes, style,
                                          unsafe, context)
        except SourceError as error:
            codes_tried = ", ".join(sorted({finding.code for finding in candidates}))
            raise FixError(f"fixing {codes_tried} gave code that does not parse ({error})") from None
        text = new_text
        fixed += applied
    # ``analysis`` is always of ``text`` here, so what is left needs no further pass
    remaining = by_position(filter_suppressed(analysis.diagnostics, text))
    # one replacement can settle several findings (``to_numpy(t)``: NPT001 and NPT002 of ``t.numpy()``): count the
    # findings that are gone, rule by rule, rather than the replacements made
    left = Counter(diagnostic.code for diagnostic in remaining)
    resolved = sum(max(0, count - left[code]) for code, count in found.items()) if fixed else 0
    return FixOutcome(text, resolved, remaining)


def _candidates(analysis: Analysis, text: str, unsafe: bool) -> list[Finding]:
    """The findings whose fix this pass may apply: reported (not suppressed), with a fix of the wanted safety."""
    reported = set(map(id, filter_suppressed(analysis.diagnostics, text)))
    return [finding for finding, diagnostic in zip(analysis.findings, analysis.diagnostics)
            if id(diagnostic) in reported and finding.fix is not None
            and (unsafe or finding.fix.applicability is Applicability.SAFE)]


def _analysis_of_fixed(new_text: str, text: str, analysis: Analysis, made: _Pass, candidates: int, filename: str,
                       codes: Collection[str] | None, style: FixStyle, unsafe: bool,
                       context: LintContext | None) -> Analysis:
    """The analysis of a pass's result; raises ``SourceError`` when it does not parse.

    Where the pass applied every fix it tried, the result's tree is the old one with the replacements swapped in
    (``fix_tree``: no second parse), and Python's parser checks the text. That analysis is kept when it is the
    last one (no fix left to apply) and no finding it has touches a replacement, so that every finding it
    reports is of code the parser made. Otherwise (a fix overlapped or was refused, so another pass comes, or a
    finding sits in new code) the result is parsed and analysed as the first text was.
    """
    if len(made.swaps) == candidates and analysis.module is not None:
        check_fixed_text(new_text)  # the parser's own guards (size, depth) raise as parsing would
        rebuilt: dict[int, cst.CSTNode] = {}
        tree = fixed_tree(analysis.module, text, new_text, analysis.parents, made.swaps, analysis.spans, made.edits,
                          made.import_edits, rebuilt)
        parses = python_accepts(new_text) if tree is not None else False
        if parses is None:  # too deep for Python's parser (it gives up): the statements that changed, alone
            parses = _changed_lines_parse(analysis.module, analysis.parents, made.swaps, rebuilt)
        if parses:
            reused = analyse_on_this_thread(new_text, filename, codes, style, context, tree, for_fixing=True)
            if reused.module is not None and not _candidates(reused, new_text, unsafe) and not _near(
                    reused, made.new_spans()):
                return reused
    fixed = analyse_on_this_thread(new_text, filename, codes, style, context, for_fixing=True)
    if fixed.module is None:  # nothing to analyse, so nothing was parsed: check it anyway
        parse(new_text)
    return fixed


def _changed_lines_parse(module: cst.Module, parents: Mapping[int, cst.CSTNode],
                         swaps: list[tuple[cst.CSTNode, cst.CSTNode]], rebuilt: Mapping[int, cst.CSTNode]) -> bool:
    """Whether Python's parser accepts the one-line statements that hold a replacement, as rebuilt, side by side:
    the check for a result too deep for it to take whole (an ``elif`` chain of thousands of branches), whose other
    statements LibCST parsed. False where a replacement is in no such statement (a compound statement's header)."""
    pieces: dict[int, str] = {}
    for old, _ in swaps:
        statement = parents.get(id(old))
        while statement is not None and not isinstance(statement, cst.SimpleStatementLine):
            if isinstance(statement, (cst.BaseCompoundStatement, cst.Module)):
                return False
            statement = parents.get(id(statement))
        if statement is None or id(statement) not in rebuilt:
            return False
        if id(statement) not in pieces:  # LibCST prints whole statements: brackets and strings close in each
            pieces[id(statement)] = _printed(rebuilt[id(statement)], "", module)
    return python_accepts("".join(pieces.values())) is True


def _near(analysis: Analysis, replaced: list[tuple[int, int]]) -> bool:
    """Whether any finding's node overlaps or touches a replacement (``replaced``: sorted offsets in the text)."""
    starts = [start for start, _ in replaced]
    for finding in analysis.findings:
        span = analysis.spans.get(finding.node)
        if span is None:
            return True
        index = bisect.bisect_right(starts, span.end) - 1  # the last replacement that starts at or before its end
        if index >= 0 and replaced[index][1] >= span.start:
            return True
    return False


def _target(finding: Finding) -> cst.CSTNode:
    assert finding.fix is not None
    return finding.fix.target if finding.fix.target is not None else finding.node


@dataclass
class _Pass:
    """What one pass wrote: the new text, each replaced node with the node printed in its place, the text edits."""

    text: str
    swaps: list[tuple[cst.CSTNode, cst.CSTNode]]
    edits: list[tuple[int, int, str]]  # every edit, replacements first, in the old text's offsets
    import_edits: list[tuple[int, int, str]]

    def new_spans(self) -> list[tuple[int, int]]:
        """Where the replacements are in the new text, in order."""
        spans = []
        moved = 0
        # in ``_spliced``'s order; the replacements are the first ``len(swaps)`` edits
        for index in sorted(range(len(self.edits)), key=lambda index: self.edits[index][:2]):
            start, end, new = self.edits[index]
            if index < len(self.swaps):
                spans.append((start + moved, start + moved + len(new)))
            moved += len(new) - (end - start)
        return spans


def _apply(text: str, module: cst.Module, candidates: list[Finding], spans: Mapping[cst.CSTNode, Span],
           edit: Edit) -> _Pass:
    """Replace every target that does not overlap an earlier one (earliest first, ties in rule order) and add
    the imports; one pass over the text, so the cost grows with the file, not with the number of findings."""
    ordered = sorted(candidates, key=lambda finding: (spans[_target(finding)].start, finding.code))
    replacements: list[tuple[int, int, str]] = []
    swaps: list[tuple[cst.CSTNode, cst.CSTNode]] = []
    taken_until = -1
    for finding in ordered:
        target = _target(finding)
        span = spans[target]
        if span.start < taken_until:
            continue  # overlaps a fix already chosen: the next pass sees what that one left
        replacement = _replacement(finding, target, span, text, module, edit)
        if replacement is not None:
            replacements.append(replacement[:3])
            swaps.append(replacement[3:])
            taken_until = replacement[1]
        else:
            taken_until = max(taken_until, span.end)
    if not replacements:
        return _Pass(text, [], [], [])
    first_target = replacements[0][0]
    import_edits = ImportLayout(module, spans).edits(edit.imports, first_target)
    edits = replacements + import_edits
    return _Pass(_spliced(text, edits), swaps, edits, import_edits)


def _replacement(finding: Finding, target: cst.CSTNode, span: Span, text: str, module: cst.Module,
                 edit: Edit) -> tuple[int, int, str, cst.CSTNode, cst.CSTNode] | None:
    """``(start, end, new text, replaced node, new node)`` for one fix, or None where it cannot be applied without
    losing something."""
    assert finding.fix is not None
    imports_before = set(edit.imports)
    try:
        built = finding.fix.build(target, edit)
    except NameClash:
        built = target  # every name it could write is taken: leave it for the user
    if built is target:
        edit.imports = imports_before
        return None
    start, end, original = span.start, span.end, target
    if span.grandparent is not None:
        folded = without_redundant_cast(target, built, span.parent, span.grandparent, edit)
        if folded is not None:
            # only ``.float()`` is added to the target's text: no other fix's target can start inside it
            outer = _whole_of(span.grandparent, span, text, module)
            if outer is not None:
                (start, end), built, original = outer, folded, span.grandparent
    old_text = text[start:end]
    new_text = _printed(built, span.indent, module)
    # a replacement is printed at the target's indentation: where that matters (a line break), check that this
    # prints the target as it stands; and keep every comment (a fix that would drop one is not applied)
    if (("\n" in old_text or "\r" in old_text) and _printed(original, span.indent, module) != old_text) or (
            "#" in old_text and Counter(_COMMENT.findall(old_text)) - Counter(_COMMENT.findall(new_text))):
        edit.imports = imports_before
        return None
    return start, end, new_text, original, built


def _whole_of(grandparent: cst.CSTNode, span: Span, text: str, module: cst.Module) -> tuple[int, int] | None:
    """Where ``target.method()`` (the grandparent of ``target``) is: the target's text followed by the rest."""
    rest = _printed(grandparent, span.indent, module)
    inner = _printed(grandparent.func.value, span.indent, module)  # type: ignore[attr-defined]
    prefix = "".join(_printed(paren, span.indent, module) for paren in grandparent.lpar)  # type: ignore[attr-defined]
    start = span.start - len(prefix)
    if start < 0 or not rest.startswith(prefix + inner) or text[start:start + len(rest)] != rest:
        return None
    return start, start + len(rest)


def _printed(node: cst.CSTNode, indent: str, module: cst.Module) -> str:
    """``node`` printed as it would be inside a block indented by ``indent``, with the module's conventions."""
    state = _PrintingState(default_indent=module.default_indent, default_newline=module.default_newline,
                           indent_tokens=[indent] if indent else [])
    node._codegen(state)
    return "".join(state.tokens)


class _PrintingState(CodegenState):
    """LibCST's printing without its per-node position bookkeeping (a generator-based context per node)."""

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> contextlib.AbstractContextManager:
        return _NOTHING_TO_RECORD


_NOTHING_TO_RECORD = contextlib.nullcontext()


def _spliced(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` applied; edits do not overlap (insertions may share a point)."""
    pieces = []
    position = 0
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        pieces.append(text[position:start])
        pieces.append(new)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def edits_of_one_fix(text: str, module: cst.Module, finding: Finding, spans: Mapping[cst.CSTNode, Span],
                     edit: Edit, layout: ImportLayout) -> list[tuple[int, int, str]]:
    """The text edits ``(start, end, new text)`` of one finding's fix applied alone to ``text``: its replacement
    and the imports it needs, as a pass of ``fix_text`` writes them (reports show them as ruff's ``fix.edits``);
    empty where the fix cannot be applied. ``edit.imports`` should start empty; ``layout`` is the module's, made
    once for all its findings."""
    target = _target(finding)
    replacement = _replacement(finding, target, spans[target], text, module, edit)
    if replacement is None:
        return []
    return [replacement[:3], *layout.edits(edit.imports, replacement[0])]
