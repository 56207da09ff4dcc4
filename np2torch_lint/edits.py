"""A fix as text edits (ruff's ``fix.edits``): what applying one finding's fix alone changes in the original text.

They show what the fixer writes for that finding, the import it adds included, wherever that import goes; they
are what the JSON and SARIF reports show. The fixer itself works on the tree.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Mapping

import libcst as cst
from libcst.metadata import CodeRange
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from .diagnostics import Finding
from .fixes import Edit, FixStyle

_COMMENT = re.compile(r"#[^\n]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text from ``start`` to ``end`` with ``content``: (line, column), 1-based, ``end`` exclusive."""

    content: str
    start: tuple[int, int]
    end: tuple[int, int]

    def as_dict(self) -> dict[str, object]:
        """Ruff's JSON shape: ``content``, ``location`` and ``end_location`` as ``{row, column}``."""
        return {"content": self.content,
                "location": {"row": self.start[0], "column": self.start[1]},
                "end_location": {"row": self.end[0], "column": self.end[1]}}


class FixEdits:
    """The edits of each finding's fix in one module, applied alone to the original text.

    The rewritten expression is one edit over the whole expression (``w.numpy()`` -> ``to_numpy(w)``), as ruff's
    are; the imports a fix adds are what LibCST's ``AddImportsVisitor`` (the fixer's tool) does to the module,
    computed once per set of imports, since most fixes in a file add the same one.
    """

    def __init__(self, module: cst.Module, positions: Mapping[cst.CSTNode, CodeRange], style: FixStyle,
                 module_names: Mapping[str, str]) -> None:
        self.module, self.positions, self.style, self.module_names = module, positions, style, module_names
        self._import_edits: dict[frozenset[tuple[str, str | None, str | None]], list[TextEdit]] = {}

    def of(self, finding: Finding) -> list[TextEdit]:
        """Empty when there is no fix, or one the fixer would not apply (it changes nothing, or drops a comment)."""
        if finding.fix is None:
            return []
        target = finding.fix.target if finding.fix.target is not None else finding.node
        edit = Edit(self.style, dict(self.module_names))
        replacement = finding.fix.build(target, edit)
        if replacement is target or Counter(_comments(target)) - Counter(_comments(replacement)):
            return []
        return [*self._imports(frozenset(edit.imports)), *self._replacement(target, replacement, edit)]

    def _replacement(self, target: cst.CSTNode, replacement: cst.CSTNode, edit: Edit) -> list[TextEdit]:
        where = self.positions[target]
        start, end = (where.start.line, where.start.column + 1), (where.end.line, where.end.column + 1)
        # a position excludes the node's own parentheses; they stay where they are if the fix kept them
        parentheses = [getattr(node, side, ()) for node in (target, replacement) for side in ("lpar", "rpar")]
        if all(len(a) == len(b) and all(x.deep_equals(y) for x, y in zip(a, b))
               for a, b in ((parentheses[0], parentheses[2]), (parentheses[1], parentheses[3]))):
            bare = replacement.with_changes(lpar=[], rpar=[]) if parentheses[2] or parentheses[3] else replacement
            return [TextEdit(self.module.code_for_node(bare), start, end)]
        fixed = self.module.deep_replace(target, replacement)  # parentheses changed: compare the texts
        assert isinstance(fixed, cst.Module)
        return edits_between(self.module.code, fixed.code, (start, end))

    def _imports(self, imports: frozenset[tuple[str, str | None, str | None]]) -> list[TextEdit]:
        if not imports:
            return []
        if imports not in self._import_edits:
            context = CodemodContext()
            for module_name, obj, asname in sorted(imports, key=lambda item: (item[0], item[1] or "")):
                AddImportsVisitor.add_needed_import(context, module_name, obj, asname)
            with_imports = AddImportsVisitor(context).transform_module(self.module)
            self._import_edits[imports] = edits_between(self.module.code, with_imports.code)
        return self._import_edits[imports]


def _comments(node: cst.CSTNode) -> list[str]:
    return _COMMENT.findall(cst.Module(body=[]).code_for_node(node))


def edits_between(before: str, after: str, whole: tuple[tuple[int, int], tuple[int, int]] | None = None
                  ) -> list[TextEdit]:
    """The edits, one per changed run of lines, trimmed to the characters that differ, that turn ``before`` into
    ``after``; positions are in ``before``. An edit that touches the span ``whole`` (start, end) covers all of
    it that lies in its lines."""
    old_lines, new_lines = source_lines(before), source_lines(after)
    line_starts = [0]  # where each line starts, and the empty line after a final line ending
    for line in old_lines:
        line_starts.append(line_starts[-1] + len(line))
    if old_lines and not old_lines[-1].endswith(("\n", "\r")):
        line_starts.pop()
    edits = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        old, new = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix = _common_prefix(old, new)
        suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
        start, end = line_starts[i1] + prefix, line_starts[i1] + len(old) - suffix
        if whole is not None:
            whole_start, whole_end = (_offset(line_starts, position) for position in whole)
            if whole_start < end and start < whole_end:  # widen to the whole span, within these lines
                prefix = min(prefix, max(whole_start - line_starts[i1], 0))
                suffix = min(suffix, max(line_starts[i1] + len(old) - whole_end, 0))
                start, end = line_starts[i1] + prefix, line_starts[i1] + len(old) - suffix
        edits.append(TextEdit(new[prefix:len(new) - suffix], _position(line_starts, start),
                              _position(line_starts, end)))
    return edits


def source_lines(text: str) -> list[str]:
    """The lines as Python and LibCST count them (``\n``, ``\r\n`` or ``\r`` ends a line; a form feed does not,
    unlike ``str.splitlines``), each with its line ending."""
    return _LINE.findall(text)


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b):
        if x != y:
            break
        length += 1
    return length


def _offset(line_starts: list[int], position: tuple[int, int]) -> int:
    return line_starts[position[0] - 1] + position[1] - 1


def _position(line_starts: list[int], offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset, given where each line starts."""
    line = bisect.bisect_right(line_starts, offset) - 1
    return line + 1, offset - line_starts[line] + 1
