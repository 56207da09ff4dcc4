"""The audit's findings in the linter's formats (``np2torch_lint.report``): each finding a diagnostic at its site
(its path relative to the current folder when inside it), its counts as ``properties`` in JSON and SARIF, and,
after ``--compare``, its mark at the end of the message."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # this module is imported light (the pytest plugin reads FORMATS): torch comes with the findings
    from .findings import AuditFinding

ALSO_FOUND = "also found by np2torch-lint"
NOT_FOUND = "not found statically"
NOT_COMPARED = "not compared: the file could not be linted"
#: ``--output-format`` values; ``--statistics``'s tables have no place for the audit's counts
FORMATS = ("concise", "full", "json", "json-lines", "github", "gitlab", "sarif")


def mark(static: bool | None) -> str:
    return ALSO_FOUND if static else NOT_FOUND if static is False else NOT_COMPARED


def write(findings: list[AuditFinding], stream: TextIO, output_format: str = "concise", color: bool = False,
          compared: bool = False) -> None:
    from ..diagnostics import Diagnostic
    from ..report import FORMATS as LINTER_FORMATS
    from ..report import Report, ReportOptions, Reported
    from .sites import shown_path

    if output_format not in FORMATS:
        raise ValueError(f"unknown output format {output_format!r}: use one of {', '.join(FORMATS)}")
    report = Report()
    for finding in findings:
        site = finding.site
        message = f"{finding.message} [{mark(finding.static)}]" if compared else finding.message
        properties: dict[str, object] = {"count": finding.count, "bytes": finding.nbytes,
                                         "seconds": round(finding.seconds, 6), **finding.properties}
        if compared:
            properties["static"] = finding.static
        diagnostic = Diagnostic(finding.code, message, shown_path(site.filename), site.line, site.column,
                                site.end_line or site.line, site.end_column or site.column + 1)
        report.findings.append(Reported(diagnostic, properties=properties))
        if diagnostic.filename not in report.sources and output_format in ("full", "gitlab"):
            try:
                report.sources[diagnostic.filename] = Path(site.filename).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass  # the line is reported without its source
    spec = LINTER_FORMATS[output_format]
    spec.write(report, stream, ReportOptions(color=color and spec.for_terminal, tool_name="np2torch-audit"))
