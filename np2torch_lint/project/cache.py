"""The cache: module summaries and per-file results, kept on disk between runs.

Layout (``.np2torch_lint_cache/`` beside the configuration, or ``--cache-dir``)::

    .np2torch_lint_cache/
      .gitignore                 "*": the cache is never committed
      CACHEDIR.TAG               backup tools skip it
      <settings key>/<path key>.json

The settings key covers the tool's version and every setting that changes results (fix style, users' model rows,
source roots), so runs with other settings or versions never read each other's entries. An entry is the file's
content digest, what it imports, its summary, and its findings (for every rule: which are reported is decided
when they are read, from ``select``/``ignore`` and ``# noqa``), with the digests of the summaries of the modules
they depended on. An entry is used only when the file's content and every dependency's summary are unchanged;
a corrupt, foreign or stale entry is ignored and rewritten, never trusted. Entries are written to a temporary
file and renamed over, so a reader never sees half an entry; a cache folder that cannot be written is read only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import __version__
from ..writing import replace_file

FORMAT = 3  # 3: summaries say which parameter a function moves to a device (``mv``)
_GITIGNORE = "# written by np2torch-lint: its cache is never committed\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by np2torch-lint.\n")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def settings_key(*parts: object) -> str:
    """The folder for results made with these settings (and this version of np2torch-lint)."""
    data = json.dumps([FORMAT, __version__, *parts], sort_keys=True, default=str)
    return f"v{FORMAT}-{hashlib.sha256(data.encode()).hexdigest()[:16]}"


class Cache:
    """Entries by file path; ``entry`` checks the content digest, ``update`` merges and writes atomically."""

    def __init__(self, folder: Path, key: str) -> None:
        self.root = folder
        self.folder = folder / key
        self.writable = True
        self._entries: dict[Path, dict] = {}

    @classmethod
    def open(cls, folder: Path, key: str) -> Cache:
        cache = cls(folder, key)
        try:
            cache.folder.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
                if not (folder / name).exists():
                    (folder / name).write_text(text, encoding="utf-8")
        except OSError:
            cache.writable = False  # read-only folder or disk: run without writing, using what is there
        return cache

    def _file(self, path: Path) -> Path:
        return self.folder / (hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".json")

    def entry(self, path: Path, content: str) -> dict | None:
        """The entry for a file whose content has digest ``content``; None when missing, stale or corrupt."""
        entry = self._entries.get(path)
        if entry is None:
            try:
                entry = json.loads(self._file(path).read_text(encoding="utf-8"))
            except (OSError, ValueError, UnicodeDecodeError):
                return None
            if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("path") != str(path):
                return None  # another version's, or damaged: rewritten by the next update
            self._entries[path] = entry
        return entry if entry.get("content") == content else None

    def update(self, path: Path, content: str, write: bool = True, **fields: object) -> None:
        """Add fields to a file's entry (a new one if the content changed) and write it (``write``: or leave it to
        the next update of the same entry)."""
        entry = self.entry(path, content)
        entry = {"format": FORMAT, "path": str(path), "content": content} if entry is None else dict(entry)
        entry.update(fields)
        self._entries[path] = entry
        if not self.writable or not write:
            return
        target = self._file(path)
        try:  # dumps uses the C encoder; dump does not
            replace_file(target, json.dumps(entry, separators=(",", ":")).encode("utf-8"), ".entry-")
        except OSError:
            self.writable = False  # the folder went read-only, or the disk is full: keep going without writing
