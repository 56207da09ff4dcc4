""".gitignore and .ignore files: which files and folders they leave out of a walk (git's rules, via pathspec).

``.gitignore`` files count inside a git repository (with ``.git/info/exclude``), ``.ignore`` files everywhere
(ripgrep's and ruff's convention); a deeper file overrides the ones above it, and ``.ignore`` overrides
``.gitignore`` in the same folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:  # imported where an ignore file is read: a tree without one never needs it (start-up time)
    import pathspec


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The patterns of one ``.gitignore``/``.ignore`` file, relative to the folder holding it."""

    prefix: str  # that folder's absolute path, ending with a separator
    spec: pathspec.GitIgnoreSpec

    def decides(self, absolute_path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!pattern``; None: no pattern matches."""
        relative = absolute_path[len(self.prefix):].replace(os.sep, "/") + ("/" if is_dir else "")
        return self.spec.check_file(relative).include


@dataclass(frozen=True, slots=True)
class Ignores:
    """The ignore files in force in a folder, outermost first; ``in_git`` says whether .gitignore counts there."""

    files: tuple[IgnoreFile, ...]
    in_git: bool

    def is_ignored(self, absolute_path: str, is_dir: bool) -> bool:
        for ignore_file in reversed(self.files):  # the deepest file that has a say decides (git's order)
            decision = ignore_file.decides(absolute_path, is_dir)
            if decision is not None:
                return decision
        return False

    def entering(self, absolute_folder: str, names: Iterable[str]) -> Ignores:
        in_git = self.in_git or ".git" in names
        wanted = (".gitignore", ".ignore") if in_git else (".ignore",)  # .ignore overrides .gitignore (ripgrep)
        found = [read_ignore_file(os.path.join(absolute_folder, name), absolute_folder)
                 for name in wanted if name in names]
        added = tuple(ignore_file for ignore_file in found if ignore_file is not None)
        return Ignores(self.files + added, in_git) if added or in_git != self.in_git else self


def read_ignore_file(path: str, folder: str) -> IgnoreFile | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            lines = stream.read().splitlines()
    except OSError:  # an unreadable ignore file ignores nothing, as in git
        return None
    import pathspec

    return IgnoreFile(os.path.join(folder, ""), pathspec.GitIgnoreSpec.from_lines(lines))


def ignore_files_above(absolute_folder: str) -> Ignores:
    """The ignore files that apply inside ``absolute_folder`` from the folders above it, up to its git repository's
    root (with ``.git/info/exclude``); outside a repository, none (only the walked folders' own ``.ignore``)."""
    here = Path(absolute_folder)
    repository = next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), None)
    if repository is None:
        return Ignores((), False)
    exclude_file = read_ignore_file(str(repository / ".git" / "info" / "exclude"), str(repository))
    ignores = Ignores(() if exclude_file is None else (exclude_file,), True)
    folders = [folder for folder in reversed(here.parents) if folder == repository or repository in folder.parents]
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        ignores = ignores.entering(str(folder), names)
    return ignores
