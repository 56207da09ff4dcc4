"""Writing fixed files: all or nothing, even when the process is killed half-way.

Each file is written to a temporary file beside it and renamed over it (``os.replace`` is atomic), so a reader,
or a run killed at any moment, sees the old file or the new one, never a mix. A killed run can leave its
temporary file behind; the next run removes those of processes no longer running in each folder it fixes in.
"""

from __future__ import annotations

import os
import re
import stat
import time

TEMPORARY_PREFIX = ".np2torch-fix-"
_TEMPORARY = re.compile(rf"^{re.escape(TEMPORARY_PREFIX)}(\d+)-.*\.tmp$")
_STALE_AFTER_SECONDS = 3600  # where a process cannot be asked whether it runs (Windows): an hour old is stale


def write_atomically(path: str, data: bytes) -> None:
    """Replace a file's bytes by writing a temporary file beside it and renaming it over; keep its mode."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & stat.S_IWUSR:
        raise OSError(f"{path} is read-only")
    replace_file(path, data, f"{TEMPORARY_PREFIX}{os.getpid()}-", durable=True, mode=mode)


def replace_file(path: str | os.PathLike[str], data: bytes, prefix: str, *, durable: bool = False,
                 mode: int | None = None) -> None:
    """Write ``data`` to a temporary file (named ``prefix...tmp``) beside ``path`` and rename it over ``path``;
    the temporary file is removed when anything fails. ``durable``: on disk before the rename."""
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # (and shutil, random...) for writing only: a run answered from the cache writes nothing

    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class StaleTemporaries:
    """Removes, once per folder, the temporary files that killed runs left beside the files being fixed."""

    def __init__(self) -> None:
        self.cleaned: set[str] = set()

    def clean_beside(self, path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        if folder in self.cleaned:
            return
        self.cleaned.add(folder)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            match = _TEMPORARY.match(name)
            if match is None or _still_running(int(match.group(1)), os.path.join(folder, name)):
                continue
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass  # gone already, or not ours to remove: leave it


def _still_running(pid: int, path: str) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        try:
            return time.time() - os.stat(path).st_mtime < _STALE_AFTER_SECONDS
        except OSError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # running, as another user
    return True
