"""Processes forked while an audit runs (a DataLoader's workers, with the default ``fork`` start method on Linux).

A forked child inherits the hooks, so its conversions are watched too (``torch.tensor(self.data[i])`` in a
dataset's ``__getitem__`` runs there); what it sees goes to a spool folder, a file per process, written every
``FLUSH_EVERY`` seconds and when it exits, and each audit adds the files of the children forked while it ran when
it ends. A child still running then has told what it saw up to its last write; one started with ``spawn`` or
``forkserver`` inherits nothing, and is not watched.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing.util
import os
import shutil
import tempfile
import threading
from pathlib import Path

from typing import TYPE_CHECKING, Callable

from .findings import Observed, Recorder

if TYPE_CHECKING:
    from .hooks import Hooks

FLUSH_EVERY = 0.2  # seconds
_installed: Callable[[], Hooks | None] | None = None
_writer: _Writer | None = None  # in a forked child: its spool file's writer


def watch_forked_children(installed: Callable[[], Hooks | None]) -> None:
    """Have children forked while ``installed()`` gives hooks report to their parent's audits (Python cannot
    unregister fork handlers: they are registered once per process, and do nothing while no audit runs)."""
    global _installed
    if _installed is None:
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    _installed = installed


def _before_fork() -> None:
    installed = _installed() if _installed is not None else None
    if installed is not None and installed.spool is None:
        installed.spool = tempfile.mkdtemp(prefix="np2torch-audit-")


def _after_fork_in_child() -> None:
    installed = _installed() if _installed is not None else None
    if installed is None or installed.spool is None:
        return
    # what the parent saw stays the parent's: the child reports only its own, for the audits running at the fork
    serials = installed.spool_serials or [session.serial for session in installed.sessions]
    child = Recorder()
    child.label = installed.sessions[0].label if installed.sessions else None
    installed.sessions[:] = [child]
    installed.spool_serials = serials
    global _writer
    writer = _writer = _Writer(Path(installed.spool) / f"{os.getpid()}.json", serials, child)
    # a multiprocessing child's normal exit runs its finalizers, which it clears first thing after the fork: the
    # one that writes is registered when the child's after-fork callbacks run, after that
    multiprocessing.util.register_after_fork(writer, _write_at_exit)
    atexit.register(writer.write)  # any other child's normal exit
    threading.Thread(target=writer.write_every, args=(FLUSH_EVERY,), daemon=True,
                     name="np2torch-audit-spool").start()


def _write_at_exit(writer: _Writer) -> None:
    multiprocessing.util.Finalize(None, writer.write, exitpriority=100)


class _Writer:
    def __init__(self, path: Path, serials: list[int], recorder: Recorder) -> None:
        self.path = path
        self.serials = serials
        self.recorder = recorder
        self.lock = threading.Lock()

    def write(self) -> None:
        with self.lock:
            observed = [item.as_data() for item in list(self.recorder.observed.values())]
            if not observed:
                return
            partial = self.path.with_suffix(".partial")
            try:
                partial.write_text(json.dumps({"serials": self.serials, "observed": observed}), encoding="utf-8")
                os.replace(partial, self.path)
            except OSError:  # the parent removed the folder: its audits are over
                pass

    def write_every(self, seconds: float) -> None:
        stop = threading.Event()
        while not stop.wait(seconds):
            self.write()


def collected(spool: str | None, serial: int) -> list[Observed]:
    """What children told the audit ``serial`` (forked while it ran)."""
    if spool is None:
        return []
    found = []
    for path in sorted(Path(spool).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if serial in data.get("serials", ()):
            found.extend(Observed.from_data(item) for item in data.get("observed", ()))
    return found


def remove(spool: str | None) -> None:
    if spool is not None:
        shutil.rmtree(spool, ignore_errors=True)
