"""The runnable programs of tests/data/audit, run under the audit in this process, and what each expects.

A program marks each line the audit must report with a trailing ``# audit: CODE count=N`` (and ``bytes=N`` where
the rule counts bytes); a program without marks must get no report.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from np2torch_lint.audit import AuditReport, audit

PROGRAMS = Path(__file__).resolve().parents[1] / "data" / "audit"
MARK = re.compile(r"#\s*audit:\s*(NPT\d{3})((?:\s+\w+=\d+)*)\s*$")


def expected(path: Path) -> dict[tuple[str, int], dict[str, int]]:
    """(code, line) -> the counts the marks there expect."""
    found = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = MARK.search(line)
        if match:
            found[(match.group(1), number)] = {key: int(value) for key, value in
                                               (pair.split("=") for pair in match.group(2).split())}
    return found


def run(path: Path) -> AuditReport:
    """Run a program under the audit, as a script."""
    with audit() as report:
        runpy.run_path(str(path), run_name="__main__")
    return report
