"""Text edits and lines as plain data (ruff's ``fix.edits``), for reports and results read from the cache: nothing
here needs LibCST. ``edits.py`` makes them from a fix."""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def source_lines(text: str) -> list[str]:
    """The lines as Python and LibCST count them (``\\n``, ``\\r\\n`` or ``\\r`` ends a line; a form feed does not,
    unlike ``str.splitlines``), each with its line ending."""
    return _LINE.findall(text)
