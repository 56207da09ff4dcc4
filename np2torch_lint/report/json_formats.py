"""The formats for programs: ``json`` (one array) and ``json-lines`` (one object a line, for streaming).

Each finding: ``code``, ``message``, ``filename``, ``cell`` (a notebook's 1-based cell, else ``null``; lines are
then counted within the cell), ``line``, ``column``, ``end_line``, ``end_column`` (1-based, end exclusive) and
``fix``: ``null`` or ``{applicability, message, edits}``, where each edit is ruff's ``{content, location: {row,
column}, end_location: {row, column}}`` in the file as it is (none yet for notebooks). The runtime audit's
findings add ``properties``, their counts.
"""

from __future__ import annotations

import json
from typing import TextIO

from .model import Report, ReportOptions, Reported


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


def write_json(report: Report, stream: TextIO, options: ReportOptions) -> None:
    json.dump([finding_dict(item) for item in report.findings], stream, indent=2)
    stream.write("\n")


def write_json_lines(report: Report, stream: TextIO, options: ReportOptions) -> None:
    for item in report.findings:
        stream.write(json.dumps(finding_dict(item)) + "\n")
