"""Finding the files to lint (include, exclude, .gitignore) and reading them: bytes -> text, with the encoding, BOM
and newlines kept. (Writing them back is ``writing.py``'s.)"""

from __future__ import annotations

import fnmatch
import io
import os
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from .ignore_files import Ignores, ignore_files_above

#: the files linted when found inside folders (ruff's default); ``include``/``extend-include`` in the config
DEFAULT_INCLUDE = ("*.py", "*.pyi", "*.ipynb")
NOTEBOOK_SUFFIX = ".ipynb"
_SUFFIX_PATTERN = re.compile(r"\*\.[^*?\[\]/]+")
# Folders never worth linting (ruff's defaults); a folder holding ``pyvenv.cfg`` is a virtual environment too.
SKIPPED_FOLDERS = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "__pycache__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
    "venv",
})


class SourceError(Exception):
    """A file that cannot be linted; the message says why, and where when it is about a position."""


@dataclass(frozen=True, slots=True)
class Source:
    text: str  # decoded, without the BOM
    encoding: str  # the codec to write it back with ("utf-8-sig" when there was a BOM)


@dataclass(frozen=True, slots=True)
class PathProblem:
    """A path given or found that cannot be walked (missing, a symlink loop, unreadable folder)."""

    path: str
    reason: str


def is_notebook(path: str) -> bool:
    """A Jupyter notebook, read as JSON by ``np2torch_lint.notebooks`` rather than as Python."""
    return path.endswith(NOTEBOOK_SUFFIX)


_TEST_FOLDERS = frozenset({"test", "tests", "testing"})


def is_test_module(path: str) -> bool:
    """Whether a module is a test by pytest's and unittest's conventions: ``test_*.py``, ``*_test.py``,
    ``conftest.py``, or any module under a ``test``/``tests``/``testing`` folder (of the path as given: relative to
    the project where there is one)."""
    parts = Path(path).parts
    name = parts[-1] if parts else ""
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part in _TEST_FOLDERS for part in parts[:-1]))


def decode_source(data: bytes) -> Source:
    """Decode Python source as the interpreter would: BOM, PEP 263 coding cookie, else UTF-8."""
    if b"\0" in data:
        raise SourceError("binary file (it contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # a bad or unknown coding cookie, or a BOM that contradicts it
        raise SourceError(str(error)) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line, column = line_and_column(data, error.start)
        raise SourceError(f"not valid {encoding}: {error.reason} at {line}:{column}") from None
    except LookupError as error:
        raise SourceError(str(error)) from None
    return Source(text, encoding)


def line_and_column(text: str | bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column of an offset into a text (or its bytes), for messages."""
    newline = "\n" if isinstance(text, str) else b"\n"
    return text.count(newline, 0, offset) + 1, offset - (text.rfind(newline, 0, offset) + 1) + 1  # type: ignore


def read_source(path: str) -> Source:
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as error:
        raise SourceError(error.strerror or str(error)) from None
    return decode_source(data)


def matches_any(relative_path: str, patterns: Iterable[str]) -> bool:
    """Whether a path (relative to the config's folder, '/'-separated) or its last part matches a glob."""
    name = relative_path.rsplit("/", 1)[-1]
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(relative_path, pattern) or fnmatch.fnmatch(name, pattern):
            return True
    return False


def iter_python_files(paths: Iterable[str], exclude: Iterable[str] = (), root: Path | None = None,
                      include: Iterable[str] = DEFAULT_INCLUDE, *, respect_gitignore: bool = True,
                      force_exclude: bool = False) -> Iterator[str | PathProblem]:
    """The Python files and notebooks under ``paths``, in a stable order.

    ``include`` and ``exclude`` (globs relative to ``root``), the default skipped folders and, with
    ``respect_gitignore``, the ``.gitignore`` files of a git repository and any ``.ignore`` files apply to what is
    found inside folders. A path given explicitly is linted anyway, unless ``force_exclude`` (what pre-commit,
    which passes every file, needs) and ``exclude`` or a skipped folder matches it. Symbolic links to folders are
    followed once: a link back into a folder already being walked is reported as a loop.
    """
    exclude = tuple(exclude)
    root = (root or Path.cwd()).resolve()
    included = _Included(tuple(include))
    for path in paths:
        if force_exclude and is_excluded(path, exclude, root):
            continue
        if os.path.isfile(path):
            yield path
        elif os.path.isdir(path):
            absolute = os.path.abspath(path)
            ignores = ignore_files_above(absolute) if respect_gitignore else None
            if ignores is not None and ignores.is_ignored(absolute, True):
                ignores = Ignores((), ignores.in_git)  # an ignored folder given explicitly: only what is inside
            yield from _walk(_Folder(path, absolute, ignores), exclude, root, set(), included)
        elif os.path.islink(path):
            yield PathProblem(path, "broken symbolic link or symbolic link loop")
        else:
            yield PathProblem(path, "no such file or directory")


def is_excluded(path: str, exclude: tuple[str, ...], root: Path) -> bool:
    """Whether ``exclude`` or a skipped folder name matches the path or a folder on the way to it from ``root``."""
    parts = relative_to(path, root).split("/")
    for index in range(len(parts)):
        prefix = "/".join(parts[:index + 1])
        is_folder = index < len(parts) - 1
        if exclude and matches_any(prefix, exclude) or is_folder and parts[index] in SKIPPED_FOLDERS:
            return True
    return False


class _Included:
    """Whether a file found in a folder is to be linted; ``*.py``-style patterns cost one ``str.endswith``."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.suffixes = tuple(p[1:] for p in patterns if _SUFFIX_PATTERN.fullmatch(p))
        self.globs = tuple(p for p in patterns if not _SUFFIX_PATTERN.fullmatch(p))

    def __call__(self, name: str, path: str, root: Path) -> bool:
        return name.endswith(self.suffixes) or bool(self.globs) and matches_any(relative_to(path, root), self.globs)


@dataclass(frozen=True, slots=True)
class _Folder:
    path: str  # as the user gave it, joined with the names below it
    absolute: str
    ignores: Ignores | None  # None: ignore files are not respected


def _walk(folder: _Folder, exclude: tuple[str, ...], root: Path, ancestors: set[tuple[int, int]],
          included: _Included) -> Iterator[str | PathProblem]:
    try:
        status = os.stat(folder.path)
        entries = sorted(os.scandir(folder.path), key=lambda entry: entry.name)
    except OSError as error:
        yield PathProblem(folder.path, error.strerror or str(error))
        return
    identity = (status.st_dev, status.st_ino)
    if identity in ancestors:
        yield PathProblem(folder.path, "symbolic link loop (it leads back into a folder above it)")
        return
    ancestors = ancestors | {identity}
    names = {entry.name for entry in entries}
    if "pyvenv.cfg" in names and ancestors != {identity}:
        return  # a virtual environment found while walking
    ignores = folder.ignores.entering(folder.absolute, names) if folder.ignores is not None else None
    for entry in entries:
        path = os.path.join(folder.path, entry.name)
        if exclude and matches_any(relative_to(path, root), exclude):
            continue
        try:
            is_dir = entry.is_dir()
            is_file = entry.is_file()
        except OSError as error:
            yield PathProblem(path, error.strerror or str(error))
            continue
        absolute = os.path.join(folder.absolute, entry.name)
        if ignores is not None and ignores.files and ignores.is_ignored(absolute, is_dir):
            continue
        if is_dir:
            if entry.name not in SKIPPED_FOLDERS and not entry.name.endswith(".egg-info"):
                yield from _walk(_Folder(path, absolute, ignores), exclude, root, ancestors, included)
        elif is_file and included(entry.name, path, root):
            yield path
        elif entry.is_symlink() and not os.path.exists(path):
            yield PathProblem(path, "broken symbolic link or symbolic link loop")


def relative_to(path: str, root: Path) -> str:
    """``path`` relative to ``root``, '/'-separated, as config patterns are written; as given when outside it."""
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()
