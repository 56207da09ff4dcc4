"""Writing findings, one module per family of formats, chosen with ``--output-format``.

- ``text.py``: ``concise`` (flake8's lines, the default) and ``full`` (ruff's look, with the source);
- ``json_formats.py``: ``json`` and ``json-lines``, with each fix's edits;
- ``ci.py``: ``github`` (workflow annotations) and ``gitlab`` (Code Quality);
- ``sarif.py``: SARIF 2.1.0;
- ``statistics.py``: ``--statistics``, counts per rule instead of the findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, TextIO

from . import ci, json_formats, sarif, statistics, text
from .model import Report, Reported, ReportOptions, Unparsed, plural, wants_color

Writer = Callable[[Report, TextIO, ReportOptions], None]


@dataclass(frozen=True)
class Format:
    write: Writer
    statistics: Writer | None = None  # None: the format has no way to show counts
    shows_edits: bool = False  # whether it needs each fix's edits (computing them costs a little per fix)
    for_terminal: bool = False  # whether colours make sense


FORMATS: dict[str, Format] = {
    "concise": Format(text.write_concise, statistics.write_table, for_terminal=True),
    "full": Format(text.write_full, statistics.write_table, for_terminal=True),
    "json": Format(json_formats.write_json, statistics.write_json, shows_edits=True),
    "json-lines": Format(json_formats.write_json_lines, statistics.write_json_lines, shows_edits=True),
    "github": Format(ci.write_github),
    "gitlab": Format(ci.write_gitlab),
    "sarif": Format(sarif.write_sarif, shows_edits=True),
}
ALIASES = {"text": "concise"}  # the name before there were two text formats

__all__ = ["ALIASES", "FORMATS", "Format", "Report", "ReportOptions", "Reported", "Unparsed", "plural",
           "wants_color"]
