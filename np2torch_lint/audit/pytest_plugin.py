"""``pytest --np2torch-audit``: the test session under the audit, its findings in the terminal summary.

Registered through the ``pytest11`` entry point, so pytest imports this module at every start: it imports nothing
but pytest, and does nothing unless ``--np2torch-audit`` is given. Each finding names the tests it happened in.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from .output import FORMATS


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("np2torch-audit", "NumPy <-> PyTorch pitfalls, caught while the tests run")
    group.addoption("--np2torch-audit", action="store_true",
                    help="run the tests under np2torch-audit (NPT001-NPT007) and report what it found")
    group.addoption("--np2torch-audit-format", choices=FORMATS, default="concise", metavar="FORMAT",
                    help=f"the report's format: {', '.join(FORMATS)} (default: concise)")
    group.addoption("--np2torch-audit-output", metavar="FILE",
                    help="write the report to FILE instead of the terminal summary")
    group.addoption("--np2torch-audit-compare", action="store_true",
                    help="mark each finding 'also found by np2torch-lint' or 'not found statically'")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("np2torch_audit") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_AuditSession(config), "np2torch-audit-session")


class _AuditSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.audit: Any = None
        self.report: Any = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from .session import audit

        self.audit = audit()
        self.report = self.audit.__enter__()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        self.audit.recorder.label = item.nodeid
        try:
            return (yield)
        finally:
            self.audit.recorder.label = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.audit is not None:
            self.audit.__exit__(None, None, None)
            if self.config.getoption("np2torch_audit_compare"):
                self.report.compare()
            output = self.config.getoption("np2torch_audit_output")
            if output is not None:
                with open(output, "w", encoding="utf-8") as stream:
                    self.report.write(stream, self.config.getoption("np2torch_audit_format"))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        findings = self.report.findings
        terminalreporter.section("np2torch-audit")
        output = self.config.getoption("np2torch_audit_output")
        if output is not None:
            noun = "finding" if len(findings) == 1 else "findings"
            terminalreporter.write_line(f"{len(findings)} {noun} written to {os.fspath(output)}")
        elif not findings:
            terminalreporter.write_line("no findings")
        else:
            for line in _written(self.report, self.config.getoption("np2torch_audit_format")).splitlines():
                terminalreporter.write_line(line)


def _written(report: Any, output_format: str) -> str:
    import io

    out = io.StringIO()
    report.write(out, output_format)
    return out.getvalue()
