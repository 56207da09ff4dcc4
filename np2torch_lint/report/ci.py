"""The formats for CI services: ``github`` (workflow commands that annotate the pull request) and ``gitlab``
(a Code Quality report). A file that could not be parsed is one more annotation or issue, named ``syntax-error``
(ruff's name for its own)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import TextIO

from ..text_edits import source_lines
from .model import Report, ReportOptions, relative_posix_path


def _escape_data(text: str) -> str:
    """GitHub's escaping of a workflow command's message (``%``, ``\\r``, ``\\n``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """GitHub's escaping of a workflow command's property value: the message's, plus ``:`` and ``,``."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


UNPARSED_CHECK = "syntax-error"


def write_github(report: Report, stream: TextIO, options: ReportOptions) -> None:
    """``::error file=...,line=...,col=...,endLine=...,endColumn=...,title=NPT001::message``, one per finding."""
    annotations = [(d.filename, d.line, d.column, d.end_line, d.end_column, d.code, d.message)
                   for d in (item.diagnostic for item in report.findings)]
    annotations += [(each.filename, *each.position, *each.position, UNPARSED_CHECK, each.message)
                    for each in report.unparsed]
    for filename, line, column, end_line, end_column, title, message in annotations:
        properties = {"file": relative_posix_path(filename), "line": line, "col": column,
                      "endLine": end_line, "endColumn": end_column, "title": title}
        joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
        stream.write(f"::error {joined}::{_escape_data(message)}\n")


def write_gitlab(report: Report, stream: TextIO, options: ReportOptions) -> None:
    """GitLab's Code Quality report: a JSON array of issues with a fingerprint that survives moved lines."""
    lines_of = {name: source_lines(text) for name, text in report.sources.items()}
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for item in report.findings:
        d = item.diagnostic
        path = relative_posix_path(d.filename)
        lines = lines_of.get(d.filename, [])
        line_text = lines[d.line - 1].strip() if d.line <= len(lines) else ""
        key = (path, d.code, line_text)
        seen[key] += 1  # the same finding twice on identical lines still gets two fingerprints
        fingerprint = hashlib.sha256("\0".join([*key, str(seen[key])]).encode()).hexdigest()
        issues.append({
            "description": f"{d.code} {d.message}",
            "check_name": d.code,
            "fingerprint": fingerprint,
            "severity": "major",
            "location": {"path": path, "lines": {"begin": d.line, "end": d.end_line}},
        })
    for each in report.unparsed:
        path = relative_posix_path(each.filename)
        line = each.position[0]
        issues.append({
            "description": each.message,
            "check_name": UNPARSED_CHECK,
            "fingerprint": hashlib.sha256("\0".join([path, UNPARSED_CHECK]).encode()).hexdigest(),
            "severity": "major",
            "location": {"path": path, "lines": {"begin": line, "end": line}},
        })
    json.dump(issues, stream, indent=2)
    stream.write("\n")
