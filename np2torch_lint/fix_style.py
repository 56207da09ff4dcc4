"""The two ways a fix can be written, apart from the fixes themselves so that settings can name one without
importing LibCST."""

from __future__ import annotations

import enum


class FixStyle(enum.Enum):
    HELPERS = "helpers"  # rewrite to np2torch_lint.runtime's helpers
    INLINE = "inline"  # the plain torch idiom, no new dependency
