"""A fix as text edits (ruff's ``fix.edits``): what applying one finding's fix alone changes in the file's text.

The fixer says what it would write for that finding (``fixer.edits_of_one_fix``: the replacement and the
imports it adds, where it adds them); this module turns those offsets into 1-based (line, column) positions of
the text as it is. The JSON and SARIF reports show them.
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from .diagnostics import Finding
from .fix_imports import ImportLayout, Spelling
from .fixer import edits_of_one_fix
from .fixes import Edit, FixStyle
from .positions import LineIndex, Span
from .text_edits import TextEdit


class FixEdits:
    """The edits of each finding's fix in one analysed file, each fix applied alone to the original text."""

    def __init__(self, text: str, module: cst.Module, spans: Mapping[cst.CSTNode, Span], style: FixStyle,
                 module_names: Mapping[str, str]) -> None:
        self.text, self.module, self.spans = text, module, spans
        self.lines = LineIndex(text)
        # one Edit and one import layout for the file: how it spells names and where its imports are are worked
        # out once, not once per finding; each fix starts with no imports
        self.edit = Edit(style, Spelling(dict(module_names)), module, text)
        self.layout = ImportLayout(module, spans)

    def of(self, finding: Finding) -> list[TextEdit]:
        """Empty when there is no fix, or one the fixer would not apply on its own."""
        if finding.fix is None:
            return []
        self.edit.imports = set()
        return [TextEdit(new, self._position(start), self._position(end))
                for start, end, new in sorted(edits_of_one_fix(self.text, self.module, finding, self.spans,
                                                               self.edit, self.layout))]

    def _position(self, offset: int) -> tuple[int, int]:
        where = self.lines.position(offset)
        return where.line, where.column + 1
