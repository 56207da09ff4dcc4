"""``--statistics``: how many findings each rule has, printed instead of the findings (as ruff does).

As a table for the formats for people, as JSON for ``json`` and ``json-lines``; the CI formats (github, gitlab,
sarif) have no place for counts, so the command line refuses the combination.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from ..rules import RULES_BY_CODE
from .model import Report, ReportOptions, fix_applies


def statistics_rows(report: Report, options: ReportOptions) -> list[dict[str, object]]:
    """One row per rule with findings, most frequent first: code, name, count, fixable (how many), summary."""
    counts = Counter(item.diagnostic.code for item in report.findings)
    fixable = Counter(item.diagnostic.code for item in report.findings if fix_applies(item.diagnostic.fix, options))
    return [{"code": code, "name": RULES_BY_CODE[code].name, "count": count, "fixable": fixable[code],
             "summary": RULES_BY_CODE[code].summary}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def write_table(report: Report, stream: TextIO, options: ReportOptions) -> None:
    for row in statistics_rows(report, options):
        stream.write(f"{row['count']:>5}  {row['code']}  {row['summary']}\n")


def write_json(report: Report, stream: TextIO, options: ReportOptions) -> None:
    json.dump(statistics_rows(report, options), stream, indent=2)
    stream.write("\n")


def write_json_lines(report: Report, stream: TextIO, options: ReportOptions) -> None:
    for row in statistics_rows(report, options):
        stream.write(json.dumps(row) + "\n")
