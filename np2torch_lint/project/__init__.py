"""The project around the files being linted: other modules' summaries, project facts, and the cache.

``modules`` finds modules' files and reads what they import; ``index`` keeps summaries and project facts;
``cache`` keeps them (and per-file results) on disk between runs.
"""

from __future__ import annotations

from .cache import Cache, digest, settings_key
from .index import ModuleLink, ModuleSummary, Project, ProjectFacts

__all__ = ["Cache", "ModuleLink", "ModuleSummary", "Project", "ProjectFacts", "digest", "settings_key"]
