"""What lies beyond the file being linted, apart from the engine so that a run answered from the cache can hold
it without importing LibCST."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .analysis.models import Models
    from .project import Project


@dataclass(frozen=True)
class LintContext:
    """What lies beyond the file: users' model rows and the project (its other modules, project facts)."""

    models: Models | None = None
    project: Project | None = None
