"""Writing fixed files: all or nothing, even when the process is killed half-way, and the file stays what it was.

A file is written to a temporary file beside it and renamed over it (``os.replace`` is atomic), so a reader,
or a run killed at any moment, sees the old file or the new one, never a mix. The temporary file gets the file's
mode and owner first. What a rename would change is kept instead:

- a symbolic link is followed: its target is written (beside the target), and the link stays a link;
- a file with other hard links, or one whose owner cannot be given to a new file (another user's file, without
  root), or in a folder where no temporary file can be made, is written in place (as black and ruff always
  write): the new bytes are complete and checked before the file is opened, and the file keeps its inode, its
  other names and its owner;
- a file that changed on disk since it was read (an editor saved it meanwhile) is not written: ``ChangedOnDisk``.

A killed run can leave its temporary file behind; the next run removes those of processes no longer running in
each folder it fixes in.
"""

from __future__ import annotations

import os
import re
import stat
import time
from typing import Callable

TEMPORARY_PREFIX = ".np2torch-fix-"
_TEMPORARY = re.compile(rf"^{re.escape(TEMPORARY_PREFIX)}(\d+)-.*\.tmp$")
_STALE_AFTER_SECONDS = 3600  # where a process cannot be asked whether it runs (Windows): an hour old is stale

#: whether bytes on disk are still those the new bytes were made from
StillAsRead = Callable[[bytes], bool]


class ChangedOnDisk(OSError):
    """The file is no longer what was read: writing would lose what changed it."""


class _KeepsItsOwnerOnlyInPlace(Exception):
    """A new file cannot be given the file's owner (or cannot be made beside it): write the file in place."""


def write_atomically(path: str, data: bytes, still_as_read: StillAsRead | None = None) -> None:
    """Replace a file's bytes with ``data``, keeping its mode and owner (``path`` may be a symbolic link: its
    target is written). With ``still_as_read``, raise ``ChangedOnDisk`` instead of writing when the bytes on
    disk, read just before the write, fail it."""
    target = os.path.realpath(path)
    status = os.stat(target)
    mode = stat.S_IMODE(status.st_mode)
    if not mode & stat.S_IWUSR:
        raise OSError(f"{path} is read-only")
    check = None if still_as_read is None else lambda: _check_still_as_read(target, still_as_read)
    if status.st_nlink > 1:  # a rename would give this name a new inode and leave the other names the old text
        _write_in_place(target, data, still_as_read)
        return
    try:
        replace_file(target, data, f"{TEMPORARY_PREFIX}{os.getpid()}-", durable=True, mode=mode,
                     owner=(status.st_uid, status.st_gid), before_replacing=check)
    except _KeepsItsOwnerOnlyInPlace:
        _write_in_place(target, data, still_as_read)


def replace_file(path: str | os.PathLike[str], data: bytes, prefix: str, *, durable: bool = False,
                 mode: int | None = None, owner: tuple[int, int] | None = None,
                 before_replacing: Callable[[], None] | None = None) -> None:
    """Write ``data`` to a temporary file (named ``prefix...tmp``) beside ``path`` and rename it over ``path``;
    the temporary file is removed when anything fails. ``durable``: on disk before the rename; ``owner``:
    ``(uid, gid)`` the temporary file is given (raises ``_KeepsItsOwnerOnlyInPlace`` where that is not
    permitted, or no file can be made in the folder); ``before_replacing`` is called last, and may raise."""
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # (and shutil, random...) for writing only: a run answered from the cache writes nothing

    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    except PermissionError:
        if owner is None:
            raise
        raise _KeepsItsOwnerOnlyInPlace() from None
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if owner is not None:
            _give_owner(temporary, owner)
        if mode is not None:
            os.chmod(temporary, mode)  # after chown, which clears the set-user-ID and set-group-ID bits
        if before_replacing is not None:
            before_replacing()
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _give_owner(path: str, owner: tuple[int, int]) -> None:
    if not hasattr(os, "chown"):
        return  # Windows: files have no POSIX owner to keep
    status = os.stat(path)
    if (status.st_uid, status.st_gid) == owner:
        return
    try:
        os.chown(path, owner[0], owner[1])
    except PermissionError:
        raise _KeepsItsOwnerOnlyInPlace() from None


def _check_still_as_read(path: str, still_as_read: StillAsRead) -> None:
    with open(path, "rb") as stream:
        if not still_as_read(stream.read()):
            raise ChangedOnDisk(f"{path} changed on disk since it was read")


def _write_in_place(path: str, data: bytes, still_as_read: StillAsRead | None) -> None:
    """Overwrite the file through its own inode: one open, the check, one write, the truncation."""
    with open(path, "r+b") as stream:
        if still_as_read is not None and not still_as_read(stream.read()):
            raise ChangedOnDisk(f"{path} changed on disk since it was read")
        stream.seek(0)
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


class StaleTemporaries:
    """Removes, once per folder, the temporary files that killed runs left beside the files being fixed (beside a
    symbolic link's target, where it was written)."""

    def __init__(self) -> None:
        self.cleaned: set[str] = set()

    def clean_beside(self, path: str) -> None:
        folder = os.path.dirname(os.path.realpath(path))
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
