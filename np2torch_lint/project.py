"""The project around the files being linted: its modules, their summaries, and project-wide facts.

A module's summary (``analysis.exported``) says what its top-level names give; a file that imports from another
module of the project (``from .data import load``, ``from mypkg.nets import Net`` resolved against the source
roots, ``src = [".", "src"]``) sees those names as the summary says. A summary is computed when it is first
needed, by parsing and analysing the module (its own imports followed the same way; an import cycle gives
unknown where it closes), or read from the cache when the module and everything it depends on are unchanged.
Modules outside the project (installed packages) stay what the library models say.

Project facts are what holds for the whole program: whether any module changes torch's default dtype or
default tensor type (``torch.set_default_dtype``, ``set_default_tensor_type``), which changes what legacy
constructors make and what float64 is meant to be.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .analysis import Analyzer
from .analysis.exported import decode_names
from .analysis.models import Models
from .analysis.values import Kind, Value
from .files import SourceError, read_source

#: files whose text says this may change torch's default dtype; confirmed by parsing
_SETS_DEFAULT = re.compile(r"\bset_default_(?:dtype|tensor_type)\b")


@dataclass(frozen=True)
class ProjectFacts:
    """What holds for the whole project."""

    #: modules (paths relative to the root) that change torch's default dtype or default tensor type
    default_dtype_changed_in: tuple[str, ...] = ()

    @property
    def changes_default_dtype(self) -> bool:
        return bool(self.default_dtype_changed_in)


@dataclass
class ModuleSummary:
    name: str
    path: Path
    names: dict[str, Value]
    #: a hash of the summary's data: files that used it are still right while it stays the same
    digest: str


@dataclass
class Project:
    """The modules of one project. ``link(path)`` is what the analysis of one of its files talks to."""

    root: Path
    src_roots: tuple[Path, ...]
    models: Models | None = None
    #: a ``cache.Cache``: summaries of modules and results of files, kept between runs
    cache: object | None = None
    #: globs (relative to ``root``) of files that are not part of the project's own code, as for linting
    exclude: tuple[str, ...] = ()
    _summaries: dict[str, ModuleSummary | None] = field(default_factory=dict)
    _running: set[str] = field(default_factory=set)
    _module_paths: dict[str, Path | None] = field(default_factory=dict)
    _facts: ProjectFacts | None = None

    @classmethod
    def at(cls, root: Path, src: Iterable[str] = (".", "src"), models: Models | None = None,
           cache: object | None = None, exclude: Iterable[str] = ()) -> Project:
        root = root.resolve()
        roots = tuple(dict.fromkeys((root / entry).resolve() for entry in src))
        return cls(root, tuple(path for path in roots if path.is_dir()), models, cache, tuple(exclude))

    # -- modules and paths

    def module_of(self, path: str | Path) -> tuple[str, bool] | None:
        """The dotted name of the module a file is (and whether it is a package's ``__init__``), or None."""
        resolved = Path(path).resolve()
        for root in sorted(self.src_roots, key=lambda p: len(p.parts), reverse=True):
            try:
                relative = resolved.relative_to(root)
            except ValueError:
                continue
            parts = list(relative.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            if parts and all(part.isidentifier() for part in parts):
                return ".".join(parts), is_package
        return None

    def path_of(self, module: str) -> Path | None:
        """The file of a module of the project (``a/b.py`` or ``a/b/__init__.py`` under a source root)."""
        if module in self._module_paths:
            return self._module_paths[module]
        found = None
        relative = Path(*module.split("."))
        for root in self.src_roots:
            for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
                if candidate.is_file():
                    found = candidate
                    break
            if found is not None:
                break
        self._module_paths[module] = found
        return found

    def is_package_or_module(self, top: str) -> bool:
        """Whether a top-level name is a package or module of the project (cheap: one probe per name)."""
        key = "\0" + top
        if key not in self._module_paths:
            self._module_paths[key] = next(
                (root for root in self.src_roots if (root / top).is_dir() or (root / f"{top}.py").is_file()), None)
        return self._module_paths[key] is not None

    def link(self, path: str | Path) -> ModuleLink:
        found = self.module_of(path)
        return ModuleLink(self, found[0] if found else None, found[1] if found else False)

    # -- summaries

    def summary(self, module: str) -> ModuleSummary | None:
        """A module's summary: remembered, from the cache, or computed now (None: not a module of the project,
        or it cannot be read or parsed, or it is being summarised further up an import cycle)."""
        if module in self._summaries:
            return self._summaries[module]
        if module in self._running:
            return None
        path = self.path_of(module)
        if path is None:
            self._summaries[module] = None
            return None
        self._running.add(module)
        try:
            summary = self._cached_summary(module, path) or self._computed_summary(module, path)
        finally:
            self._running.discard(module)
        self._summaries[module] = summary
        return summary

    def remember(self, module: str, path: Path, exported: dict, dependencies: dict[str, str]) -> ModuleSummary:
        """A summary computed while linting the file itself: kept so that importers need not compute it."""
        summary = ModuleSummary(module, path, decode_names(exported), digest_of(exported))
        self._summaries[module] = summary
        return summary

    def _cached_summary(self, module: str, path: Path) -> ModuleSummary | None:
        if self.cache is None:
            return None
        entry = self.cache.summary(path)  # type: ignore[attr-defined]
        if entry is None or not self.dependencies_unchanged(entry.get("dependencies", {})):
            return None
        exported = entry.get("summary")
        if not isinstance(exported, dict):
            return None
        return ModuleSummary(module, path, decode_names(exported), digest_of(exported))

    def dependencies_unchanged(self, dependencies: dict) -> bool:
        """Whether every module a result used still has the summary it had (by digest)."""
        for module, digest in dependencies.items():
            current = self.summary(module)
            if (current.digest if current is not None else None) != digest:
                return False
        return True

    def _computed_summary(self, module: str, path: Path) -> ModuleSummary | None:
        from .engine import parse  # the engine imports this module

        try:
            tree = parse(read_source(str(path)).text)
        except SourceError:
            return None
        link = ModuleLink(self, module, path.name == "__init__.py")
        analyzer = Analyzer(self.models, link)
        analyzer.analyze(tree)
        exported = analyzer.exported()
        if self.cache is not None:
            self.cache.store_summary(path, exported, link.dependencies)  # type: ignore[attr-defined]
        return ModuleSummary(module, path, decode_names(exported), digest_of(exported))

    # -- project facts

    def facts(self, files: Iterable[str] | None = None) -> ProjectFacts:
        """Whether any module of the project changes the default dtype; ``files`` are all the project's files
        (the linted ones and the rest), scanned for the call and confirmed by parsing."""
        if self._facts is None:
            changed = []
            for path in sorted(set(files if files is not None else self._all_files())):
                if _changes_default_dtype(Path(path)):
                    changed.append(_relative(Path(path), self.root))
            self._facts = ProjectFacts(tuple(changed))
        return self._facts

    def _all_files(self) -> list[str]:
        from .files import iter_python_files

        return [item for item in iter_python_files([str(root) for root in self.src_roots] or [str(self.root)],
                                                   self.exclude, self.root) if isinstance(item, str)]


@dataclass
class ModuleLink:
    """What the analysis of one module asks of the project; it notes which summaries the module used."""

    project: Project
    module: str | None
    is_package: bool
    #: module -> digest of the summary this module's analysis used
    dependencies: dict[str, str] = field(default_factory=dict)
    _lookups: dict[str, Value | None] = field(default_factory=dict)

    def absolute(self, level: int, module: str | None) -> str | None:
        if self.module is None:
            return None
        package = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
        if level > 1:
            if level - 1 > len(package):
                return None
            package = package[:len(package) - (level - 1)]
        parts = package + (module.split(".") if module else [])
        return ".".join(parts) or None

    def lookup(self, qualname: str) -> Value | None:
        if qualname in self._lookups:
            return self._lookups[qualname]
        found = None
        top = qualname.partition(".")[0]
        if self.project.is_package_or_module(top):
            found = self._member(qualname)
        self._lookups[qualname] = found
        return found

    def _member(self, qualname: str) -> Value | None:
        if self.project.path_of(qualname) is not None:
            return None  # ``pkg.sub`` is a module itself: it stays a name, its members are looked up
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if self.project.path_of(module) is None:
                continue
            summary = self.project.summary(module)
            if summary is None:
                return None
            self.dependencies[module] = summary.digest
            value = summary.names.get(parts[cut])
            for attribute in parts[cut + 1:]:
                value = _member_of(value, attribute) if value is not None else None
            if value is not None and value.kind is Kind.REF and value.qualname and value.qualname != qualname:
                return self.lookup(value.qualname) or value  # a re-export: follow it
            return value
        return None


def _member_of(value: Value, name: str) -> Value | None:
    from .analysis.definitions import ClassInfo

    info = value.definition
    if not isinstance(info, ClassInfo):
        return None
    method = info.method(name)
    if method is not None:
        return Value(Kind.FUNCTION, definition=method)
    return info.attribute(name)


def digest_of(exported: dict) -> str:
    return hashlib.sha256(json.dumps(exported, sort_keys=True).encode()).hexdigest()[:20]


def _changes_default_dtype(path: Path) -> bool:
    try:
        text = read_source(str(path)).text
    except SourceError:
        return False
    if not _SETS_DEFAULT.search(text):
        return False
    from .engine import parse

    try:
        tree = parse(text)
    except SourceError:
        return False
    analyzer = Analyzer()
    return analyzer.analyze(tree).sets_default_dtype


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
