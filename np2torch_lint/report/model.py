"""What every format is given: the findings to show, the sources they point into, and how to show them."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Mapping, TextIO

from ..diagnostics import Applicability, Diagnostic, Fix
from ..text_edits import TextEdit


@dataclass(frozen=True, slots=True)
class Reported:
    """One finding as reported (in a notebook, ``diagnostic.cell`` says which cell), with its fix's edits for the
    formats that show them."""

    diagnostic: Diagnostic
    edits: tuple[TextEdit, ...] = ()  # empty when there is no fix or the format does not show edits
    #: more about the finding for the formats for programs (JSON ``properties``, SARIF's property bag): the
    #: runtime audit's counts; None for the linter's findings
    properties: Mapping[str, object] | None = field(default=None, compare=False)


_WHERE = re.compile(r" at (\d+):(\d+)$")  # how a reason for not parsing ends when it knows the place


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A file that could not be parsed (or decoded): the formats for programs show it as a finding without a
    code, as ruff shows a syntax error; the others leave it to its line on stderr."""

    filename: str
    reason: str  # as on stderr: "invalid syntax at 2:12"

    @property
    def message(self) -> str:
        return f"could not parse: {self.reason}"

    @property
    def position(self) -> tuple[int, int]:
        """Where the reason says it is (1-based line and column), else the start of the file."""
        where = _WHERE.search(self.reason)
        return (int(where.group(1)), max(int(where.group(2)), 1)) if where else (1, 1)


@dataclass
class Report:
    findings: list[Reported] = field(default_factory=list)
    #: each reported file's text (the text the positions point into), for the formats that quote it
    sources: dict[str, str] = field(default_factory=dict)
    unparsed: list[Unparsed] = field(default_factory=list)


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False
    show_fixes: bool = False  # list each finding's fix (the formats for programs always carry it)
    unsafe_fixes: bool = False  # whether --fix would apply unsafe fixes too: decides what is marked [*]
    tool_name: str = "np2torch-lint"  # SARIF's driver (the runtime audit reports as np2torch-audit)


def fix_applies(fix: Fix | None, options: ReportOptions) -> bool:
    """Whether ``--fix`` with these options would apply this fix."""
    return fix is not None and (fix.applicability is Applicability.SAFE or options.unsafe_fixes)


def wants_color(stream: TextIO, environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """Colours on a terminal only; ``NO_COLOR`` turns them off, ``FORCE_COLOR`` forces them (any value but empty).

    NO_COLOR wins when both are set, as in CPython and pytest.
    """
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    if environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def plural(count: int, noun: str) -> str:
    """``1 finding``, ``2 findings``, ``0 files``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def relative_posix_path(filename: str) -> str:
    """A reported path relative to the current folder when it is inside it, '/'-separated (CI tools want that)."""
    if os.path.isabs(filename):
        try:
            relative = os.path.relpath(filename)
        except ValueError:  # another drive, on Windows
            return filename.replace(os.sep, "/")
        if not relative.startswith(".."):
            filename = relative
    return os.path.normpath(filename).replace(os.sep, "/")
