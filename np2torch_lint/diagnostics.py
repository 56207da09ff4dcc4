"""What a rule reports (``Finding``, on a node) and what users see (``Diagnostic``, at a position)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # the nodes' type only: reading results (the cache, reports) needs no LibCST
    import libcst as cst


class Applicability(enum.Enum):
    """Whether a fix may be applied without asking: ``safe`` cannot change what a working program computes."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class Fix:
    """A rewrite for a finding: ``build(node, edit)`` returns what replaces ``target`` (the finding's node if None).

    ``build`` gets the node as already updated by fixes inside it, and an ``fixes.Edit`` that knows the fix
    style and collects the imports the replacement needs.
    """

    applicability: Applicability
    title: str
    build: Callable[..., cst.CSTNode] = field(repr=False, compare=False)
    target: cst.CSTNode | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    node: cst.CSTNode = field(repr=False)
    message: str
    fix: Fix | None = None
    #: the call through which it holds (``analysis.CallSite``), when only a read with a caller's arguments found
    #: it: the message then names that call
    through: object | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding at a place in a file. Lines and columns are 1-based; the end column is exclusive.

    In a notebook, ``cell`` is the 1-based number of the cell (markdown cells count, as ruff counts them) and the
    lines are counted within that cell.
    """

    code: str
    message: str
    filename: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = None
    cell: int | None = None

    @property
    def location(self) -> str:
        """``line:column``, or ``cell N:line:column`` in a notebook (ruff's convention)."""
        where = f"{self.line}:{self.column}"
        return where if self.cell is None else f"cell {self.cell}:{where}"

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "filename": self.filename,
            "cell": self.cell,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": None if self.fix is None else {
                "applicability": self.fix.applicability.value,
                "message": self.fix.title,
            },
        }
