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
        # one line, whatever the exception holds (a KeyError of a syntax node prints the whole tree)
        text = " ".join(str(error).split())
        if len(text) > _LONGEST:
            text = text[:_LONGEST - 3] + "..."
        return cls(f"{type(error).__name__}: {text}{where}; please report it")


#: the most of an exception's own text the message keeps
_LONGEST = 160
