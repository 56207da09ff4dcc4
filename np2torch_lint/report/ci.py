"""The formats for CI services: ``github`` (workflow commands that annotate the pull request) and ``gitlab``
(a Code Quality report)."""

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


def write_github(report: Report, stream: TextIO, options: ReportOptions) -> None:
    """``::error file=...,line=...,col=...,endLine=...,endColumn=...,title=NPT001::message``, one per finding."""
    for item in report.findings:
        d = item.diagnostic
        properties = {"file": relative_posix_path(d.filename), "line": d.line, "col": d.column,
                      "endLine": d.end_line, "endColumn": d.end_column, "title": d.code}
        joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
        stream.write(f"::error {joined}::{_escape_data(d.message)}\n")


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
    json.dump(issues, stream, indent=2)
    stream.write("\n")
