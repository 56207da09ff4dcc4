"""The edits an editor applies: one finding's fix, every safe fix, a ``# noqa`` for one finding's line.

Pure functions over texts (no LSP types), used by the language server. Each edit is ``(first line, last line
(exclusive), new lines)`` over whole lines, 0-based, so the server turns it into a range without knowing columns.
Fixes come from the fixer's public ``fix_text``; one finding's fix is the part of ``fix_text``'s result (for its
code only) that touches the finding's lines, plus the imports it added.
"""

from __future__ import annotations

import difflib
import re
from typing import Collection

from .add_noqa import add_noqa
from .diagnostics import Applicability, Diagnostic
from .parsing import parse, run_with_deep_stack
from .files import SourceError
from .engine import LintContext
from .fixer import FixError, fix_text
from .fixes import FixStyle
from .notebooks.magics import split_lines

LineEdit = tuple[int, int, list[str]]
_IMPORT = re.compile(r"\s*(?:import|from)\s")


def fix_all_edits(text: str, filename: str, codes: Collection[str] | None, style: FixStyle,
                  unsafe: bool = False, context: LintContext | None = None) -> list[LineEdit]:
    """Every (safe) fix of the document, as line edits; none when nothing changes or the text does not parse."""
    try:
        fixed = fix_text(text, filename, codes, style, unsafe, context).text
    except (SourceError, FixError):
        return []
    return _line_edits(split_lines(text), split_lines(fixed))


def fix_one_edits(text: str, filename: str, diagnostic: Diagnostic, style: FixStyle,
                  context: LintContext | None = None) -> list[LineEdit]:
    """The fix of one finding (and the imports it needs), or none when it cannot be applied on its own."""
    if diagnostic.fix is None:
        return []
    unsafe = diagnostic.fix.applicability is Applicability.UNSAFE
    try:
        fixed = fix_text(text, filename, {diagnostic.code}, style, unsafe, context).text
    except (SourceError, FixError):
        return []
    old, new = split_lines(text), split_lines(fixed)
    lines = range(diagnostic.line - 1, diagnostic.end_line)
    edits = [(i1, i2, replacement) for i1, i2, replacement in _line_edits(old, new)
             if any(line in lines for line in range(i1, max(i2, i1 + 1)))
             or all(_IMPORT.match(line) or not line.strip() for line in [*old[i1:i2], *replacement])]
    if not any(i1 <= diagnostic.line - 1 < max(i2, i1 + 1) for i1, i2, _ in edits):
        return []
    try:  # the other findings' fixes were left out: what is left must still parse
        run_with_deep_stack(parse, "".join(apply_line_edits(old, edits)))
    except SourceError:
        return []
    return edits


def noqa_edit(text: str, diagnostic: Diagnostic) -> LineEdit:
    """``# noqa: CODE`` for one finding, placed and merged as ``np2torch-lint --add-noqa`` does (``add_noqa``): on
    the finding's line, joined to a ``# noqa: OTHER`` of its statement, or where a comment can stand."""
    lines = split_lines(text)
    silenced = split_lines(add_noqa(text, [diagnostic])[0])  # the same lines, one of them with the comment
    number = next((index for index, (old, new) in enumerate(zip(lines, silenced)) if old != new),
                  diagnostic.line - 1)
    return number, number + 1, [silenced[number]]


def apply_line_edits(lines: list[str], edits: list[LineEdit]) -> list[str]:
    result = list(lines)
    for first, last, replacement in sorted(edits, reverse=True):
        result[first:last] = replacement
    return result


def _line_edits(old: list[str], new: list[str]) -> list[LineEdit]:
    """The changed lines; a run of as many new lines as old ones is taken line by line (fixes on neighbouring
    lines stay apart)."""
    edits: list[LineEdit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            edits += [(i, i + 1, [new[j]]) for i, j in zip(range(i1, i2), range(j1, j2)) if old[i] != new[j]]
        elif tag != "equal":
            edits.append((i1, i2, new[j1:j2]))
    return edits
