"""A progress line on standard error for a long run: ``linted 120 of 842 files``, rewritten in place.

Shown only on a terminal, and only once the run has taken about a second: never in a pipe, a file or a CI log
(``CI`` set), so nothing a program or a log reads changes. The line is erased when the run ends, before the
report is written.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, TextIO

SHOW_AFTER = 1.0  # seconds: a shorter run prints nothing
_EVERY = 0.1  # seconds between two updates of the line


def shows_progress(stream: TextIO, environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """Whether ``stream`` is a terminal a person watches (not a CI log, not a dumb terminal)."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False
    return terminal and not environ.get("CI") and environ.get("TERM") != "dumb"


class Progress:
    """Call with the number of files done so far; ``close()`` erases the line (if one was drawn)."""

    def __init__(self, total: int, verb: str = "linted", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.verb, self.clock = total, verb, clock
        self.stream = sys.stderr if stream is None else stream
        self.enabled = total > 1 and shows_progress(self.stream)
        self.started = clock()
        self.drawn_at: float | None = None

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.started < SHOW_AFTER or (self.drawn_at is not None and now - self.drawn_at < _EVERY):
            return
        self.stream.write(f"\r{self.verb} {done} of {self.total} files\x1b[K")
        self.stream.flush()
        self.drawn_at = now

    def close(self) -> None:
        if self.drawn_at is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn_at = None
