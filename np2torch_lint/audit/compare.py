"""``--compare``: np2torch-lint on the files of the audit's findings, and which findings it reports too.

A finding counts as found statically when the linter reports the same code on a span that covers the finding's
line, whether or not a ``# noqa`` comment silences it there (silenced means found, and dismissed). Each file is
linted with the configuration that applies to it (the nearest ``pyproject.toml`` with ``[tool.np2torch-lint]``),
with the other modules of its project in view, as ``np2torch-lint`` would; every rule is on, whatever the
configuration selects, since the question is what the analysis finds.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from .findings import AuditFinding


#: what the audit reports under one code, the linter reports under several: a legacy constructor's cast is NPT009's,
#: a copy of NumPy's float64 cast again NPT010's
STATIC_CODES = {"NPT003": ("NPT003", "NPT009", "NPT010")}


def static_marks(findings: list[AuditFinding]) -> dict[tuple[str, str, int], bool | None]:
    """(code, filename, line) -> whether np2torch-lint reports it (None: the file could not be linted)."""
    from ..config import ConfigError, find_pyproject, load_settings
    from ..jobs import Linter, lint_files

    by_file: dict[str, list[AuditFinding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.filename].append(finding)
    marks: dict[tuple[str, str, int], bool | None] = {}
    for filename, here in by_file.items():
        spans: dict[str, list[tuple[int, int]]] | None = None
        try:
            text = Path(filename).read_text(encoding="utf-8")
            settings = load_settings(find_pyproject(Path(filename).parent))
            linter = Linter.for_settings(settings, None, use_cache=False)
            result = lint_files(linter, [(filename, text)], False, 1)[0]
            if result.error is None:
                spans = defaultdict(list)
                for diagnostic, _ in result.findings(filename):
                    spans[diagnostic.code].append((diagnostic.line, diagnostic.end_line))
        except (OSError, UnicodeDecodeError, ConfigError):
            spans = None
        for finding in here:
            key = (finding.code, finding.filename, finding.line)
            if spans is None:
                marks[key] = None
            else:
                last = finding.site.end_line or finding.line
                marks[key] = any(start <= last and finding.line <= end
                                 for code in STATIC_CODES.get(finding.code, (finding.code,))
                                 for start, end in spans.get(code, ()))
    return marks
