"""``audit()``: the context manager, and the report it hands out."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

from . import hooks, workers
from .findings import AuditFinding, Recorder
from .rules import RULES_BY_CODE


class AuditReport:
    """What an audit found: ``findings`` (one per rule and site, sorted by place) while it runs and after.

    ``compare()`` runs np2torch-lint on the files of the findings and marks each one; ``write()`` prints them in
    one of the linter's formats; ``str(report)`` is the ``concise`` one.
    """

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._static: dict[tuple[str, str, int], bool | None] | None = None

    @property
    def findings(self) -> list[AuditFinding]:
        found = []
        for observed in list(self._recorder.observed.values()):
            finding = RULES_BY_CODE[observed.code].describe(observed)
            if finding is None:
                continue
            if observed.tests:
                finding.properties["tests"] = sorted(observed.tests)
            if self._static is not None:
                finding = _marked(finding, self._static.get((finding.code, finding.filename, finding.line)))
            found.append(finding)
        return sorted(found, key=lambda f: (f.filename, f.line, f.site.column, f.code))

    def compare(self) -> None:
        """Mark each finding ``static=True`` ("also found by np2torch-lint") or ``False`` ("not found statically"),
        linting the files the findings are in (``None``: its file could not be linted)."""
        from .compare import static_marks

        self._static = None
        self._static = static_marks(self.findings)

    def write(self, stream: TextIO | None = None, output_format: str = "concise", color: bool = False) -> None:
        """Print the findings as ``np2torch-lint --output-format`` would (concise, full, json, json-lines,
        github, gitlab or sarif)."""
        from .output import write

        write(self.findings, sys.stdout if stream is None else stream, output_format, color,
              compared=self._static is not None)

    def __str__(self) -> str:
        import io

        out = io.StringIO()
        self.write(out)
        return out.getvalue()

    def __repr__(self) -> str:
        return f"<AuditReport: {len(self.findings)} findings>"


def _marked(finding: AuditFinding, static: bool | None) -> AuditFinding:
    from dataclasses import replace

    return replace(finding, static=static)


class Audit:
    """``with audit() as report:``: watch the code inside for NPT001-NPT007 (see ``audit``)."""

    def __init__(self) -> None:
        self.recorder = Recorder()
        self.report = AuditReport(self.recorder)

    def __enter__(self) -> AuditReport:
        hooks.start(self.recorder)
        return self.report

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        installed = hooks.installed()
        if installed is not None:  # what forked children (DataLoader workers) saw
            for observed in workers.collected(installed.spool, self.recorder.serial):
                self.recorder.merge(observed)
        hooks.stop(self.recorder)


def audit() -> Audit:
    """Watch the code run inside ``with audit() as report:`` for NPT001-NPT007, and report each at the user's line.

    ``report.findings`` lists one ``AuditFinding`` per rule and site with its counts; ``report.write()`` prints
    them in the linter's formats and ``report.compare()`` marks those np2torch-lint also finds. Nothing is watched
    outside the block, and nothing is installed by importing this module. See docs/audit.md for what it sees.
    """
    return Audit()
