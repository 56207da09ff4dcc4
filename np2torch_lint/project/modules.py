"""The project's modules as files: names to paths, what each file imports, and the import graph's cycles.

An import resolves against the project's source roots (``src``, like ruff's) and then the importing file's own
folder (where a script's sibling modules live, as ``sys.path[0]`` makes them importable); in a folder that is no
package, a folder of scripts, the siblings come first, as ``sys.path[0]`` does. Imports are read
with a cheap line scan, not a parse: the graph only decides which modules import each other in a cycle, and a
spurious edge can only make a cycle bigger (names inside it unknown), never a finding wrong.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(.*)|import[ \t]+(.*))$", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_COMMENT = re.compile(r"#[^\n]*")
#: a name an unindented statement assigns, defines or deletes (``np = None``, ``def np():``, ``del np``)
_REBOUND = re.compile(r"^(?:def\s+|class\s+|del\s+)?([A-Za-z_]\w*)\s*(?:[:=(]|$)", re.MULTILINE)


@dataclass
class ModuleFiles:
    """Where modules are: a module name and the importing file's folder -> a path; cached per run."""

    src_roots: tuple[Path, ...]
    #: module -> its file under a source root (shared by every importing folder)
    _in_roots: dict[str, Path | None] = field(default_factory=dict)
    _tops: dict[tuple[str, Path | None], bool] = field(default_factory=dict)
    #: (module, importing folder) -> its file
    _answers: dict[tuple[str, Path | None], Path | None] = field(default_factory=dict)
    #: folder -> (its files, its subfolders)
    _listings: dict[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)

    def module_of(self, path: Path) -> tuple[str, bool] | None:
        """The dotted name of the module a file (a resolved path) is, and whether it is a package's ``__init__``;
        None outside the source roots."""
        for root in sorted(self.src_roots, key=lambda p: len(p.parts), reverse=True):
            try:
                relative = path.relative_to(root)
            except ValueError:
                continue
            parts = list(relative.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            if parts and all(part.isidentifier() for part in parts):
                return ".".join(parts), is_package
        return None

    def path_of(self, module: str, folder: Path | None = None) -> Path | None:
        """The file of a module (``a/b.py`` or ``a/b/__init__.py``) under a source root or else ``folder``."""
        key = (module, folder)
        if key not in self._answers:  # asked for every dotted name the analysis meets: answered once
            self._answers[key] = self._path_of(module, folder)
        return self._answers[key]

    def _path_of(self, module: str, folder: Path | None) -> Path | None:
        if not self.has_top(module.partition(".")[0], folder):
            return None  # another library's module (torch, numpy, ...): one probe for its top-level name
        beside = folder is not None and folder not in self.src_roots
        if beside and "__init__.py" not in self._listing(str(folder))[0]:
            # a folder of scripts, no package: ``sys.path[0]`` puts a script's own siblings before the roots
            # (``experiments/train.py``'s ``from helper import *`` is ``experiments/helper.py``)
            return self._module_file(module, (folder,)) or self._under_a_root(module)
        found = self._under_a_root(module)
        if found is not None or not beside:
            return found
        return self._module_file(module, (folder,))

    def _under_a_root(self, module: str) -> Path | None:
        if module not in self._in_roots:
            self._in_roots[module] = self._module_file(module, self.src_roots)
        return self._in_roots[module]

    def has_top(self, top: str, folder: Path | None = None) -> bool:
        """Whether a top-level name is a package or module of the project: under a source root, or beside the
        importing file."""
        if self._top_under(top, None):
            return True
        return folder is not None and folder not in self.src_roots and self._top_under(top, folder)

    def _top_under(self, top: str, folder: Path | None) -> bool:
        key = (top, folder)
        if key not in self._tops:
            roots = self.src_roots if folder is None else (folder,)
            listings = (self._listing(str(root)) for root in roots)
            self._tops[key] = any(top in folders or f"{top}.py" in files for files, folders in listings)
        return self._tops[key]

    def _module_file(self, module: str, roots: tuple[Path, ...]) -> Path | None:
        """``a/b.py`` or ``a/b/__init__.py`` under the first of ``roots`` that has it."""
        *packages, last = module.split(".")
        for root in roots:
            folder = str(root)
            for package in packages:
                if package not in self._listing(folder)[1]:
                    break
                folder = os.path.join(folder, package)
            else:
                files, folders = self._listing(folder)
                if f"{last}.py" in files:
                    return Path(folder, f"{last}.py").resolve()
                if last in folders and "__init__.py" in self._listing(os.path.join(folder, last))[0]:
                    return Path(folder, last, "__init__.py").resolve()
        return None

    def _listing(self, folder: str) -> tuple[frozenset[str], frozenset[str]]:
        """A folder's files and subfolders (symbolic links followed), read once per run: each dotted name the
        analysis meets under a project package (``torch.float32`` in torch's own sources) is looked up in them
        instead of probing the disk for two files."""
        if folder not in self._listings:
            files, folders = [], []
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            if entry.is_dir():
                                folders.append(entry.name)
                            elif entry.is_file():
                                files.append(entry.name)
                        except OSError:
                            continue  # a broken link, or one that cannot be read: not a module
            except OSError:
                pass  # not a folder, or not readable: nothing is found in it
            self._listings[folder] = (frozenset(files), frozenset(folders))
        return self._listings[folder]


def absolute_module(module: str | None, is_package: bool, level: int, name: str | None) -> str | None:
    """``from <level dots><name> import ...`` in ``module`` as an absolute module name, or None."""
    if module is None:
        return None
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        if level - 1 > len(package):
            return None
        package = package[:len(package) - (level - 1)]
    parts = package + (name.split(".") if name else [])
    return ".".join(parts) or None


def _import_statements(text: str, module: str | None, is_package: bool) -> Iterator[tuple[bool, str | None, list[str]]]:
    """Each import statement, read line by line (parenthesised lists included): whether it is unindented, the
    absolute module a ``from`` statement imports from (None for a plain ``import``), and its comma-separated parts,
    stripped (``numpy as np``, ``load``, ``*``)."""
    for match in _IMPORT.finditer(text):
        dots, source, names, plain = match.groups()
        unindented = match.group(0)[:1] not in (" ", "\t")
        if plain is not None:
            plain = plain.split("#", 1)[0]  # ``import replay  # noqa: E402``
            yield unindented, None, [part.strip() for part in plain.split(",")]
            continue
        base = absolute_module(module, is_package, len(dots), source or None) if dots else source
        if not base:
            continue
        if names.strip().startswith("("):
            end = text.find(")", match.end(3) - len(names))
            names = text[match.start(3):end if end != -1 else match.end(3)]
        names = _COMMENT.sub("", names)  # ``from .data import load  # comment``, and comments inside ( ... )
        yield unindented, base, [part.strip() for part in
                                 names.replace("(", " ").replace(")", " ").replace("\\", " ").split(",")]


def imported_modules(text: str, module: str | None, is_package: bool) -> list[str]:
    """The absolute names a module's import statements may bring in (``from a import b`` gives ``a`` and
    ``a.b``, since ``b`` may be a submodule)."""
    found: list[str] = []
    for _, base, parts in _import_statements(text, module, is_package):
        if base is None:
            found.extend(part.split(" as ")[0].strip() for part in parts if _NAME.match(part))
            continue
        found.append(base)
        for part in parts:
            word = part.split(" as ")[0].strip()
            if word.isidentifier():
                found.append(f"{base}.{word}")
    return found


def top_level_imports(text: str, module: str | None, is_package: bool) -> tuple[dict[str, str], list[str]]:
    """What a module's unindented import statements bind: name -> the qualified name it refers to (``import numpy
    as np`` gives ``np`` -> ``numpy``; ``from .data import load`` gives ``load`` -> ``pkg.data.load``), and the
    modules it star-imports (absolute names). These hold whatever order the modules of an import cycle run in, so
    they are what a star import around a cycle can be sure of. A name that an unindented statement also assigns,
    defines or deletes is left out, and a module that sets ``__all__`` gives nothing (its star import binds what
    ``__all__`` lists)."""
    if "__all__" in text:
        return {}, []
    found: dict[str, str] = {}
    starred: list[str] = []
    for unindented, base, parts in _import_statements(text, module, is_package):
        if not unindented:
            continue  # inside a block: an ``if``, a ``try`` or a function decides whether it runs
        if base is not None and parts == ["*"]:
            starred.append(base)
            continue
        for part in parts:
            name, _, alias = (piece.strip() for piece in part.partition(" as "))
            if base is not None:
                if name.isidentifier() and (not alias or alias.isidentifier()):
                    found[alias or name] = f"{base}.{name}"
            elif _NAME.fullmatch(name) and not alias:
                top = name.split(".", 1)[0]  # ``import os.path`` binds ``os``
                found[top] = top
            elif _NAME.fullmatch(name) and alias.isidentifier():
                found[alias] = name
    rebound = set(_REBOUND.findall(text))
    return {name: qualname for name, qualname in found.items() if name not in rebound}, starred


def strongly_connected(graph: dict[Path, list[Path]], start: Path, components: dict[Path, Path]) -> None:
    """Tarjan's algorithm, without recursion, over what ``start`` reaches; each node of a new component gets the
    component's root in ``components`` (nodes already there keep theirs: a component is complete once found)."""
    if start in components:
        return
    index: dict[Path, int] = {start: 0}
    low: dict[Path, int] = {start: 0}
    stack: list[Path] = [start]
    on_stack: set[Path] = {start}
    # each node on the work stack keeps one iterator over its successors, resumed after each child is done
    work: list[tuple[Path, Iterator[Path]]] = [(start, iter(graph.get(start, ())))]
    while work:
        node, successors = work[-1]
        for successor in successors:
            if successor in components:
                continue  # its component is complete (found earlier): no cycle through it reaches back here
            if successor not in index:
                index[successor] = low[successor] = len(index)
                stack.append(successor)
                on_stack.add(successor)
                work.append((successor, iter(graph.get(successor, ()))))
                break
            if successor in on_stack:
                low[node] = min(low[node], index[successor])
        else:
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    components[member] = node
                    if member == node:
                        break
