"""The formats for programs: ``json`` (one array) and ``json-lines`` (one object a line, for streaming).

Each finding: ``code``, ``message``, ``filename``, ``cell`` (a notebook's 1-based cell, else ``null``; lines are
then counted within the cell), ``line``, ``column``, ``end_line``, ``end_column`` (1-based, end exclusive) and
``fix``: ``null`` or ``{applicability, message, edits}``, where each edit is ruff's ``{content, location: {row,
column}, end_location: {row, column}}`` in the file as it is (none yet for notebooks). The runtime audit's
findings add ``properties``, their counts. A file that could not be parsed is one more object, after the findings,
with ``code`` ``null`` and ``message`` ``could not parse: ...``, as ruff shows a syntax error.
"""

from __future__ import annotations

import json
from typing import TextIO

from .model import Report, ReportOptions, Reported, Unparsed


def finding_dict(item: Reported) -> dict[str, object]:
    d = item.diagnostic
    result: dict[str, object] = {
        "code": d.code,
        "message": d.message,
        "filename": d.filename,
        "cell": d.cell,
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "fix": None if d.fix is None else {
            "applicability": d.fix.applicability.value,
            "message": d.fix.title,
            "edits": [edit.as_dict() for edit in item.edits],
        },
    }
    if item.properties is not None:
        result["properties"] = dict(item.properties)
    return result


def unparsed_dict(unparsed: Unparsed) -> dict[str, object]:
    line, column = unparsed.position
    return {"code": None, "message": unparsed.message, "filename": unparsed.filename, "cell": None, "line": line,
            "column": column, "end_line": line, "end_column": column, "fix": None}


def _dicts(report: Report) -> list[dict[str, object]]:
    return [*map(finding_dict, report.findings), *map(unparsed_dict, report.unparsed)]


def write_json(report: Report, stream: TextIO, options: ReportOptions) -> None:
    json.dump(_dicts(report), stream, indent=2)
    stream.write("\n")


def write_json_lines(report: Report, stream: TextIO, options: ReportOptions) -> None:
    for item in _dicts(report):
        stream.write(json.dumps(item) + "\n")
