"""Writing diagnostics for people (text, flake8's format) and for programs (json)."""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from .diagnostics import Diagnostic
from .rules import RULES_BY_CODE

FORMATS = ("text", "json")


def write_diagnostics(diagnostics: list[Diagnostic], output_format: str, stream: TextIO) -> None:
    if output_format == "json":
        json.dump([d.as_dict() for d in diagnostics], stream, indent=2)
        stream.write("\n")
        return
    for d in diagnostics:
        stream.write(f"{d.filename}:{d.location}: {d.code} {d.message}\n")


def write_statistics(diagnostics: list[Diagnostic], output_format: str, stream: TextIO) -> None:
    counts = Counter(d.code for d in diagnostics)
    rows = [{"code": code, "count": counts[code], "summary": RULES_BY_CODE[code].SUMMARY} for code in sorted(counts)]
    if output_format == "json":
        json.dump(rows, stream, indent=2)
        stream.write("\n")
        return
    for row in rows:
        stream.write(f"{row['count']:>5}  {row['code']}  {row['summary']}\n")
