"""The cache: module summaries and per-file results, kept on disk between runs.

Layout (``.np2torch_lint_cache/`` beside the configuration, or ``--cache-dir``)::

    .np2torch_lint_cache/
      .gitignore                 "*": the cache is never committed
      CACHEDIR.TAG               backup tools skip it
      <settings key>/<path key>.json

The settings key covers the tool's version, a digest of its own code (every module and library model of the
installed package: each checkout says 0.1.0, and another build may find otherwise) and every setting that changes
results (fix style, users' model rows, source roots), so runs with other settings or builds never read each
other's entries. An entry is the file's
content digest, what it imports, its summary, and its findings (for every rule: which are reported is decided
when they are read, from ``select``/``ignore`` and ``# noqa``), with the digests of the summaries of the modules
they depended on. An entry is used only when the file's content and every dependency's summary are unchanged;
a corrupt, foreign or stale entry is ignored and rewritten, never trusted. Every entry read is checked in full
against ``ENTRY`` (each field's type, each finding's fields, known keys only; a summary against its digest) before
any of it is used; one that does not fit is logged once (``np2torch-lint --verbose``) and rewritten by this run.
Entries are written to a temporary file and renamed over, so a reader never sees half an entry; a cache folder that
cannot be written is read only.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from .. import __version__
from ..diagnostics import Applicability
from ..writing import replace_file
from .entry_schema import Choice, Exactly, ListOf, MapOf, Optional, Position, Record, SchemaError, check

FORMAT = 4  # 4: an entry's first field is its own check digest; 3: summaries say which parameter a function moves
_CHECK = b'{"check":"'  # an entry's file begins with its check digest: that of the rest, as written
_GITIGNORE = "# written by np2torch-lint: its cache is never committed\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by np2torch-lint.\n")


_CODE_PACKAGE = Path(__file__).resolve().parents[1]

#: a finding as ``jobs.FileResult`` keeps it (positions 1-based)
_FINDING = Record(
    {"code": str, "message": str, "line": Position, "column": Position, "end_line": Position, "end_column": Position,
     "fix": Optional(Record({"applicability": Choice(tuple(a.value for a in Applicability)), "title": str}))},
    optional={"edits": ListOf(Record({"content": str, "start": ListOf(Position, 2), "end": ListOf(Position, 2)}))})
#: one file's entry: always its path and content digest, then what the run added (``update``)
ENTRY = Record(
    {"check": str, "format": Exactly(FORMAT), "path": str, "content": str},
    optional={
        "result": Record({"diagnostics": ListOf(_FINDING), "error": Optional(str), "dependencies": MapOf(str, str),
                          "facts": str, "has_edits": bool},
                         # findings in other modules' code through this file's calls, by module (``jobs.incoming``)
                         optional={"contributions": MapOf(str, ListOf(_FINDING))}),
        # the summary's own shape is the analysis's (``analysis.exported``): it is checked against its digest
        "summary": dict, "summary_digest": str, "summary_dependencies": MapOf(str, str),
        "changes_default_dtype": bool, "keeps_float32_default": bool,
    })


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def digest_of(exported: dict) -> str:
    """A summary's digest (``analysis.exported`` data)."""
    return digest(json.dumps(exported, sort_keys=True))


@cache
def code_digest() -> str:
    """A digest of np2torch-lint's own code: the RECORD of the wheel it was installed from (which holds each file's
    digest), else every module and library model of the package (a source checkout) by path, size and time of last
    change: an edit or a checkout of another commit changes the time, and reading the stat of each file costs a
    tenth of reading the files (start-up time)."""
    for record in _CODE_PACKAGE.parent.glob("np2torch_lint-*.dist-info/RECORD"):
        try:
            text = record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            break
        if "\nnp2torch_lint/__init__.py," in f"\n{text}":  # this folder's package, not an editable install's
            return digest(text)[:16]
    stats = []
    for folder, subfolders, names in os.walk(_CODE_PACKAGE):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in names:
            if name.endswith((".py", ".toml")):
                path = os.path.join(folder, name)
                stat = os.stat(path)
                stats.append(f"{os.path.relpath(path, _CODE_PACKAGE)}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return digest("\n".join(sorted(stats)))[:16]


def settings_key(*parts: object) -> str:
    """The folder for results made with these settings (and this build of np2torch-lint)."""
    data = json.dumps([FORMAT, __version__, code_digest(), *parts], sort_keys=True, default=str)
    return f"v{FORMAT}-{hashlib.sha256(data.encode()).hexdigest()[:16]}"


def entry_file(entry: dict) -> bytes:
    """An entry as its file holds it: JSON whose first field is the check digest of the rest of the text."""
    rest = json.dumps({key: value for key, value in entry.items() if key != "check"},
                      separators=(",", ":")).encode("utf-8", "surrogatepass")  # dumps uses the C encoder; dump not
    return _CHECK + hashlib.sha256(rest).hexdigest()[:32].encode() + b'",' + rest[1:]


def _check_holds(data: bytes) -> bool:
    start = len(_CHECK) + 32 + 2
    return data.startswith(_CHECK) and data[start - 2:start] == b'",' and (
        hashlib.sha256(b"{" + data[start:]).hexdigest()[:32].encode() == data[len(_CHECK):start - 2])


class Cache:
    """Entries by file path; ``entry`` checks the content digest, ``update`` merges and writes atomically."""

    def __init__(self, folder: Path, key: str) -> None:
        self.root = folder
        self.folder = folder / key
        self.writable = True
        self._entries: dict[Path, dict] = {}
        self._refused: set[Path] = set()  # entries that did not fit, logged once and left for ``update``

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
            if path in self._refused:
                return None
            file = self._file(path)
            try:
                data = file.read_bytes()
                if not _check_holds(data):  # damaged on disk, or cut short: what JSON and the schema cannot see
                    return self._refuse(path, file, "its check digest does not match what it holds")
                entry = json.loads(data)
            except FileNotFoundError:
                return None
            except (OSError, ValueError, RecursionError) as error:  # ValueError: not JSON, or not UTF-8
                return self._refuse(path, file, f"cannot read it ({type(error).__name__})")
            problem = self._problem(entry, path)
            if problem is not None:
                return self._refuse(path, file, problem)
            self._entries[path] = entry
        return entry if entry["content"] == content else None

    @staticmethod
    def _problem(entry: object, path: Path) -> str | None:
        """Why an entry read from disk cannot be used for ``path``, or None when every field fits ``ENTRY``."""
        try:
            check(ENTRY, entry)
        except SchemaError as error:
            return str(error)
        assert isinstance(entry, dict)
        if entry["path"] != str(path):
            return "it was written for another file"  # a copied cache, or a collision of path digests
        if ("summary" in entry) != ("summary_digest" in entry):
            return "a summary without its digest"
        if "summary" in entry:
            try:
                matches = digest_of(entry["summary"]) == entry["summary_digest"]
            except RecursionError:
                matches = False
            if not matches:
                return "its summary does not match its digest"
        return None

    def _refuse(self, path: Path, file: Path, problem: str) -> None:
        """An entry that does not fit: logged once, and not read again this run (the next ``update`` rewrites it)."""
        import logging  # only here: a run that trusts its cache never pays for the logging module (start-up time)

        self._refused.add(path)
        logging.getLogger("np2torch_lint.cache").info(
            "np2torch-lint: ignored the cache entry of %s (%s): %s; it is written anew", path, file, problem)
        return None

    def update(self, path: Path, content: str, write: bool = True, **fields: object) -> None:
        """Add fields to a file's entry (a new one if the content changed) and write it (``write``: or leave it to
        the next update of the same entry)."""
        entry = self.entry(path, content)
        entry = {"check": "", "format": FORMAT, "path": str(path), "content": content} if entry is None else dict(
            entry)
        entry.update(fields)
        self._entries[path] = entry
        if not self.writable or not write:
            return
        target = self._file(path)
        try:
            replace_file(target, entry_file(entry), ".entry-")
        except OSError:
            self.writable = False  # the folder went read-only, or the disk is full: keep going without writing
