"""A bug of ours met while analysing or fixing one file: that file gets one line, the run goes on (as ruff does)."""

from __future__ import annotations

import traceback
from pathlib import Path


class InternalError(Exception):
    """The analysis or the fixer failed on one file; the message names the exception and where it was raised."""

    @classmethod
    def from_exception(cls, error: Exception) -> InternalError:
        if isinstance(error, InternalError):
            return error
        frames = traceback.extract_tb(error.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        return cls(f"{type(error).__name__}: {error}{where}; please report it")
