"""np2torch-audit: the linter's rules NPT001-NPT007 caught while the code runs, where static analysis cannot know.

The pipeline, in the file names: ``hooks.py`` (torch's entry points, wrapped while an audit runs) -> ``rules/``
(what each rule watches, and the finding it makes of it) -> ``sites.py`` (the user's line) -> ``findings.py``
(per rule and site) -> ``output.py`` (the linter's formats) and ``compare.py`` (the static pass on the same files).
``session.py`` is ``audit()``; ``workers.py`` the DataLoader workers; ``cli.py`` is ``python -m np2torch_lint.audit``
and ``pytest_plugin.py`` ``pytest --np2torch-audit``.

Importing this package imports nothing heavy and installs nothing (pytest imports its plugin at every start):
torch and numpy come in with ``audit`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .findings import AuditFinding
    from .session import Audit, AuditReport, audit

__all__ = ["Audit", "AuditFinding", "AuditReport", "audit"]


def __getattr__(name: str) -> Any:
    if name in ("Audit", "AuditReport", "audit"):
        from . import session

        return getattr(session, name)
    if name == "AuditFinding":
        from .findings import AuditFinding

        return AuditFinding
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
