"""The project around the files being linted: its modules' summaries, and what holds for the whole program.

A module's summary (``analysis.exported``) says what its top-level names give; a file that imports from another
module of the project (``from .data import load``; ``from mypkg.nets import Net`` resolved against the source
roots; a script's sibling module) sees those names as the summary says. A summary is computed when first needed,
by parsing and analysing the module, or read from the cache when the module and every summary it used are
unchanged. Modules outside the project (installed packages) stay what the library models say.

Import cycles: modules that import each other, directly or around a cycle, see each other's names as unknown.
That is decided from the import graph alone, so a result never depends on which file was linted first, on
``-j``, or on the cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator

from ..files import SourceError, read_source
from .cache import Cache, digest, digest_of
from .modules import (ModuleFiles, absolute_module, imported_modules, strongly_connected,
                      top_level_imports)

# The analysis (and LibCST) is imported where a module is analysed or a summary read: a run answered from the cache
# needs neither.
if TYPE_CHECKING:
    import libcst

    from ..analysis.facts import Facts
    from ..analysis.models import Models
    from ..analysis.values import Value

#: the prefix of a result's dependency on another module's text (its function bodies were read), not its summary
TEXT_DEPENDENCY = "text:"

#: files whose text calls a setter of torch's default dtype (a definition of one is not a call); confirmed by
#: analysing them
_SETS_DEFAULT = re.compile(r"(?<!def )\bset_default_(?:dtype|tensor_type)\s*\(")


@dataclass(frozen=True)
class ProjectFacts:
    """What holds for the programs of the project."""

    #: modules (paths relative to the root) that change torch's default dtype or default tensor type
    default_dtype_changed_in: tuple[str, ...] = ()
    #: module (relative path) -> those of them that can run in the same program: a module that imports it
    #: (directly or not) imports both. A default set in one module holds for the code that runs after it there,
    #: which is the modules it imports and those that import it, not an entry script that never imports it.
    default_dtype_reaches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: those of ``default_dtype_changed_in`` whose every call names a float32 type
    #: (``set_default_tensor_type(torch.cuda.FloatTensor)``): they do not make float64 wanted
    float32_default_set_in: tuple[str, ...] = ()

    @property
    def changes_default_dtype(self) -> bool:
        return bool(self.default_dtype_changed_in)

    def default_dtype_changed_for(self, module: str) -> tuple[str, ...]:
        """The modules that change torch's default dtype in a program that runs ``module`` (a relative path)."""
        return dict(self.default_dtype_reaches).get(module, ())


@dataclass
class ForeignModule:
    """Another module of the project as a caller reads its functions' bodies with the caller's arguments: its
    tree, its text's digest, its top-level names as its summary says, and its definitions by name."""

    path: Path
    content: str
    text: str
    tree: libcst.Module
    names: dict[str, Value]
    #: ``("load",)`` -> its ``def``; ``("Buffer", "sample")`` -> a method's (top-level definitions only)
    definitions: dict[tuple[str, ...], libcst.FunctionDef]


def definitions_of(tree: libcst.Module) -> dict[tuple[str, ...], libcst.FunctionDef]:
    """The functions and methods a module defines at its top level, by name (the last of one name wins, as the
    module's summary has it)."""
    import libcst as cst

    found: dict[tuple[str, ...], cst.FunctionDef] = {}
    for statement in tree.body:
        if isinstance(statement, cst.FunctionDef):
            found[(statement.name.value,)] = statement
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    found[(statement.name.value, member.name.value)] = member
    return found


@dataclass
class ModuleSummary:
    path: Path
    #: the summary as data (``analysis.exported``); ``names`` reads it when first asked
    data: dict
    #: a digest of the summary's data: results that used it stay right while it stays the same
    digest: str
    _names: dict[str, Value] | None = None

    @property
    def names(self) -> dict[str, Value]:
        if self._names is None:
            from ..analysis.exported import decode_names

            self._names = decode_names(self.data, self.path)
        return self._names


@dataclass
class Project:
    """The modules of one project. ``link(path)`` is what the analysis of one of its files talks to."""

    root: Path
    files: ModuleFiles
    models: Models | None = None
    cache: Cache | None = None
    #: globs (relative to ``root``) of files that are not the project's own code, as for linting
    exclude: tuple[str, ...] = ()
    _summaries: dict[Path, ModuleSummary | None] = field(default_factory=dict)
    running: set[Path] = field(default_factory=set)
    _texts: dict[Path, tuple[str, str] | None] = field(default_factory=dict)
    _graph: dict[Path, list[Path]] = field(default_factory=dict)
    _components: dict[Path, Path] = field(default_factory=dict)
    _facts: ProjectFacts | None = None
    _resolved: dict[str | Path, Path] = field(default_factory=dict)
    #: files this run will analyse in this process (``lint_files``), and the trees of those among them that were
    #: parsed before their turn, to summarise them for an importer (a module reached as an attribute,
    #: ``pkg.sub.f``, is not ordered before its user) or for the project facts: linting takes the tree instead of
    #: parsing the file again, and writes their cache entries
    linting: set[Path] = field(default_factory=set)
    _trees: dict[Path, tuple[str, libcst.Module]] = field(default_factory=dict)
    #: the analyses of those trees, when their turn will see what they saw (``_analysed``)
    _analyses: dict[Path, tuple[libcst.Module, Facts, ModuleLink]] = field(default_factory=dict)
    #: modules whose functions a caller read with its arguments, and the trees of linted modules kept for that
    _foreign: dict[Path, ForeignModule | None] = field(default_factory=dict)
    _reversed: dict[Path, list[Path]] | None = None
    _files: list[Path] | None = None
    _linted_trees: dict[Path, tuple[str, libcst.Module]] = field(default_factory=dict)

    @classmethod
    def at(cls, root: Path, src: Iterable[str] = (".", "src"), models: Models | None = None,
           cache: Cache | None = None, exclude: Iterable[str] = (), facts: ProjectFacts | None = None) -> Project:
        """``facts``: the project facts when another process already worked them out."""
        root = root.resolve()
        roots = tuple(dict.fromkeys((root / entry).resolve() for entry in src))
        files = ModuleFiles(tuple(path for path in roots if path.is_dir()))
        return cls(root, files, models, cache, tuple(exclude), _facts=facts)

    def resolved(self, path: str | Path) -> Path:
        """A path with its links resolved, once per run (a linted file's path is asked for at each step)."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = Path(path).resolve()
        return found

    def relative(self, path: str | Path) -> str:
        """A file's path relative to the project's folder, as the project facts name modules."""
        return _relative(self.resolved(path), self.root)

    def contains(self, path: str | Path) -> bool:
        """Whether a file lies in the project's folder (files elsewhere are linted on their own)."""
        return self.resolved(path).is_relative_to(self.root)

    def link(self, path: str | Path) -> ModuleLink:
        resolved = self.resolved(path)
        found = self.files.module_of(resolved)
        return ModuleLink(self, resolved, found[0] if found else None, found[1] if found else False)

    def text_of(self, path: Path) -> tuple[str, str] | None:
        """A module's text and its content digest, read once per run (None: it cannot be read)."""
        if path not in self._texts:
            try:
                text = read_source(str(path)).text
                self._texts[path] = (text, digest(text))
            except SourceError:
                self._texts[path] = None
        return self._texts[path]

    def knows_text(self, path: Path, text: str, content: str) -> None:
        """A linted file's text as read by the caller, so it is not read again."""
        self._texts[self.resolved(path)] = (text, content)

    # -- the import graph

    def same_cycle(self, first: Path, second: Path) -> bool:
        return first == second or self.component(first) == self.component(second)

    def component(self, path: Path) -> Path:
        """The import cycle a module is in (its root module), from the import graph of what it reaches."""
        if path not in self._components:
            self._explore(path)
            strongly_connected(self._graph, path, self._components)
        return self._components[path]

    def _explore(self, start: Path) -> None:
        pending = [start]
        while pending:
            path = pending.pop()
            if path in self._graph:
                continue
            self._graph[path] = targets = []
            read = self.text_of(path)
            if read is None:
                continue
            for target in self._imported_project_modules(path, read[0]):
                targets.append(target)
                pending.append(target)

    def _imported_project_modules(self, path: Path, text: str) -> Iterator[Path]:
        """The other modules of the project that ``text`` (the file at ``path``) imports, each once."""
        found = self.files.module_of(path)
        name, is_package = found if found else (None, False)
        for module in dict.fromkeys(imported_modules(text, name, is_package)):
            target = self.files.path_of(module, path.parent)
            if target is not None and target != path:
                yield target

    def may_have_findings(self, path: str | Path, text: str) -> bool:
        """Whether a file of the project needs reading: it mentions what a tensor needs (``could_have_findings``),
        or it imports another module of the project, whose functions its calls may pass what the analysis knows (an
        entry script that only builds the project's network and hands it to the project's ``train`` says neither
        "torch" nor "numpy")."""
        from ..parsing import could_have_findings

        if could_have_findings(text, project=True):
            return True
        return next(self._imported_project_modules(self.resolved(path), text), None) is not None

    def levels(self, paths: list[Path]) -> list[list[int]]:
        """The positions of ``paths`` in levels: a file comes after the files among them that it imports (files of
        one import cycle share a level), so that linting level by level finds every summary already made."""
        wanted = {path: index for index, path in enumerate(paths)}
        level: dict[Path, int] = {}
        started: set[Path] = set()  # a file reached again by another path is explored once (diamonds are common)
        for start in paths:
            self.component(start)
            work = [(start, False)]
            while work:
                path, expanded = work.pop()
                if path in level or (not expanded and path in started):
                    continue
                deps = [target for target in self._graph.get(path, ()) if target in wanted
                        and self._components.get(target) != self._components.get(path)]
                if not expanded:
                    started.add(path)
                    work.append((path, True))
                    work.extend((dep, False) for dep in deps if dep not in level)
                    continue
                level[path] = 1 + max((level.get(dep, 0) for dep in deps), default=-1)
        grouped: dict[int, list[int]] = {}
        for path, index in wanted.items():
            grouped.setdefault(level.get(path, 0), []).append(index)
        return [sorted(grouped[key]) for key in sorted(grouped)]

    # -- summaries

    def summary_of(self, path: Path) -> ModuleSummary | None:
        """A module's summary: remembered, from the cache, or computed now (None: it cannot be read or parsed)."""
        if path in self._summaries:
            return self._summaries[path]
        if path in self.running:
            return None  # only reached through an import the graph did not show: unknown, as in a cycle
        self.running.add(path)
        try:
            summary = self._cached_summary(path) or self._computed_summary(path)
        finally:
            self.running.discard(path)
        self._summaries[path] = summary
        return summary

    def remember(self, link: ModuleLink, exported: dict) -> ModuleSummary:
        """A module's summary, computed by analysing it (while linting it, or for an importer): kept, and cached
        when its text was read here, so that importers need not compute it again.

        The first summary of a run stays: a module reached through an import the graph does not show (a package's
        submodule read as an attribute, ``pkg.sub.f``) may be summarised for an importer while a module it imports
        is still being summarised, and so know less than when it is linted later; the files that used the first
        summary recorded its digest, and replacing it would make a warm run analyse them again."""
        known = self._summaries.get(link.path)
        if known is not None:
            return known
        summary = ModuleSummary(link.path, exported, digest_of(exported))
        self._summaries[link.path] = summary
        read = self._texts.get(link.path)
        if read is not None:
            self._cache(link.path, read[1], summary=exported, summary_digest=summary.digest,
                        summary_dependencies=link.dependencies)
        return summary

    def _cache(self, path: Path, content: str, **fields: object) -> None:
        """Add to a module's cache entry: written now, or with its findings when its turn in this run is to come
        (``linting``: one write per file)."""
        if self.cache is not None:
            self.cache.update(path, content, path not in self.linting, **fields)

    def dependencies_unchanged(self, dependencies: object) -> bool:
        """Whether every module a result used still has the summary it had (by digest), and every module whose
        function bodies it read still has the text it had."""
        if not isinstance(dependencies, dict):
            return False
        for path, expected in dependencies.items():
            if not isinstance(path, str):
                return False
            if path.startswith(TEXT_DEPENDENCY):
                read = self.text_of(Path(path[len(TEXT_DEPENDENCY):]))
                if (read[1] if read is not None else None) != expected:
                    return False
                continue
            current = self.summary_of(Path(path))
            if (current.digest if current is not None else None) != expected:
                return False
        return True

    def _cached_summary(self, path: Path) -> ModuleSummary | None:
        read = self.text_of(path)
        if self.cache is None or read is None:
            return None
        entry = self.cache.entry(path, read[1])  # checked in full, its summary against its digest
        if entry is None or "summary" not in entry:
            return None
        if not self.dependencies_unchanged(entry.get("summary_dependencies")):
            return None
        return ModuleSummary(path, entry["summary"], entry["summary_digest"])

    def _computed_summary(self, path: Path) -> ModuleSummary | None:
        read = self.text_of(path)
        if read is None:
            return None
        try:
            tree = self._parsed(path, read[0])
        except SourceError:
            return None
        return self._analysed(path, tree)[2]

    def _analysed(self, path: Path, tree: libcst.Module) -> tuple[Facts, ModuleLink, ModuleSummary]:
        """A module analysed, its summary remembered. When that is before its turn (for an importer, or for the
        project facts), the analysis of a file this run lints is kept for its turn, unless a module it imports was
        still being summarised (which its turn would see summarised): the turn would see the same summaries and
        find the same."""
        from ..analysis import Analyzer

        link = self.link(path)
        analyzer = Analyzer(self.models, link)
        facts = analyzer.analyze(tree)
        summary = self.remember(link, analyzer.exported())
        analyzer.release()
        kept = self._trees.get(path)
        if kept is not None and kept[1] is tree and not link.saw_a_summary_running:
            self._analyses[path] = (tree, facts, link)
        return facts, link, summary

    def analysis_for_its_turn(self, path: str | Path, tree: libcst.Module) -> tuple[Facts, ModuleLink]:
        """The analysis of a file being linted: the one made before its turn from this same tree when it was
        kept (``_analysed``), else made now."""
        resolved = self.resolved(path)
        kept = self._analyses.pop(resolved, None)
        if kept is not None and kept[0] is tree:
            return kept[1], kept[2]
        facts, link, _ = self._analysed(resolved, tree)
        return facts, link

    def _parsed(self, path: Path, text: str) -> libcst.Module:
        """A module parsed before its turn (for an importer, or for the project facts); a file this run will lint
        keeps its tree for then."""
        from ..parsing import parse

        kept = self._trees.get(path)
        if kept is not None and kept[0] == text:
            return kept[1]
        tree = parse(text, tabs_expanded=True)
        if path in self.linting and self.may_have_findings(path, text):  # it will be analysed
            self._trees[path] = (text, tree)
        return tree

    def foreign_module(self, path: Path) -> ForeignModule | None:
        """A module of the project whose functions a caller reads (None: it cannot be read, parsed or summarised).
        Its tree is the one it was linted from in this run when there is one, else it is parsed now (once)."""
        if path in self._foreign:
            return self._foreign[path]
        found = None
        read = self.text_of(path)
        summary = self.summary_of(path) if read is not None else None
        if read is not None and summary is not None:
            kept = self._linted_trees.get(path)
            try:
                tree = kept[1] if kept is not None and kept[0] == read[0] else self._parsed(path, read[0])
            except SourceError:
                tree = None
            if tree is not None:
                found = ForeignModule(path, read[1], read[0], tree, summary.names, definitions_of(tree))
        self._foreign[path] = found
        return found

    def keep_linted_tree(self, path: str | Path, text: str, tree: libcst.Module) -> None:
        """A linted module's tree, for the callers linted after it that read its functions' bodies."""
        self._linted_trees[self.resolved(path)] = (text, tree)

    def parsed_before_its_turn(self, path: str | Path, text: str) -> libcst.Module | None:
        """The tree of a file being linted when it was parsed already (for an importer or the project facts), from
        this same text."""
        kept = self._trees.pop(self.resolved(path), None)
        return kept[1] if kept is not None and kept[0] == text else None

    def done_linting(self, path: Path) -> None:
        """A file's turn is over (linted, or skipped as clean): a tree kept for it goes, and a summary made for an
        importer later is cached at once, as nothing will write its entry again."""
        self.linting.discard(path)
        self._trees.pop(path, None)
        self._analyses.pop(path, None)

    # -- what holds for the whole program

    def facts(self) -> ProjectFacts:
        """Which modules of the project change the default dtype or tensor type (every file of the project, as
        linting finds them, excludes applied, scanned for the call and confirmed by analysing it), and which
        modules can run in a program with each."""
        if self._facts is None:
            files = self._all_files()
            changed, float32 = [], []
            for path in files:
                if path.suffix == ".pyi":
                    continue  # a stub never runs
                read = self.text_of(path)
                if read is None or not _calls_a_default_setter(read[0]):
                    continue
                changes, keeps_float32 = self._changes_default_dtype(path, read)
                if changes:
                    changed.append(path)
                    if keeps_float32:
                        float32.append(_relative(path, self.root))
            reaches = self._programs_with(changed) if changed else {}
            self._facts = ProjectFacts(
                tuple(_relative(path, self.root) for path in changed),
                tuple(sorted((_relative(path, self.root), tuple(_relative(s, self.root) for s in setters))
                             for path, setters in reaches.items())),
                tuple(float32))
        return self._facts

    def _programs_with(self, setters: list[Path]) -> dict[Path, list[Path]]:
        """Module -> the setters among ``setters`` that can run in one program with it: some module of the
        project imports both, directly or not (a module counts as importing itself)."""
        self._importers()  # (every file explored)
        # importing ``pkg.sub`` runs ``pkg/__init__.py`` first: an ``__init__`` that sets the default at import
        # (neurodiffeq's) sets it for its importers' importers, which name only its submodules
        graph = {path: [*targets, *(init for target in targets for init in self._package_inits(target))]
                 for path, targets in self._graph.items()}
        importers = _reversed(graph)
        reaches: dict[Path, list[Path]] = {}
        for setter in setters:
            programs = _reachable(setter, importers)  # the modules whose imports reach the setter
            for module in _reachable_from(programs, graph):
                reaches.setdefault(module, []).append(setter)
        return reaches

    def _package_inits(self, path: Path) -> list[Path]:
        """The ``__init__`` files of the packages a module sits in, which run before it when it is imported."""
        found = self.files.module_of(path)
        if found is None:
            return []
        parts = found[0].split(".")  # (a package's own name is its last part, as a module's is)
        prefixes = (".".join(parts[:end]) for end in range(1, len(parts)))
        return [init for prefix in prefixes if (init := self.files.path_of(prefix)) is not None and init != path]

    def _changes_default_dtype(self, path: Path, read: tuple[str, str]) -> tuple[bool, bool]:
        """Whether a module sets the default dtype or tensor type, and whether every call of it names float32."""
        if self.cache is not None:
            entry = self.cache.entry(path, read[1])
            if entry is not None and "changes_default_dtype" in entry and "keeps_float32_default" in entry:
                return entry["changes_default_dtype"], entry["keeps_float32_default"]
        try:
            facts = self._analysed(path, self._parsed(path, read[0]))[0]
            changes, keeps_float32 = facts.sets_default_dtype, facts.keeps_float32_default
        except SourceError:
            changes = keeps_float32 = False
        self._cache(path, read[1], changes_default_dtype=changes, keeps_float32_default=keeps_float32)
        return changes, keeps_float32

    def importers_of(self, paths: list[Path]) -> list[Path]:
        """The project's modules that import one of ``paths``, directly or not (excluded files aside), in path
        order, ``paths`` themselves aside: their calls may pass its functions what the analysis knows."""
        return sorted(_reachable_from(set(paths), self._importers()) - set(paths))

    def _importers(self) -> dict[Path, list[Path]]:
        """Module -> the project's modules that import it (the import graph of every file, reversed), once per
        run."""
        if self._reversed is None:
            for path in self._all_files():
                self._explore(path)
            self._reversed = _reversed(self._graph)
        return self._reversed

    def _all_files(self) -> list[Path]:
        """The project's files as linting finds them (excludes applied), in path order; found once per run."""
        if self._files is None:
            from ..files import iter_python_files

            roots = [str(root) for root in self.files.src_roots if root.is_relative_to(self.root)] or [
                str(self.root)]
            self._files = sorted(self.resolved(item) for item in iter_python_files(roots, self.exclude, self.root)
                                 if isinstance(item, str) and item.endswith((".py", ".pyi")))
        return self._files


@dataclass
class ModuleLink:
    """What the analysis of one module asks of the project; it notes the summaries the module used."""

    project: Project
    path: Path
    module: str | None
    is_package: bool
    #: path -> digest of each summary this module's analysis used
    dependencies: dict[str, str] = field(default_factory=dict)
    #: a module it imports was being summarised (an import the graph did not show): seen as unknown this time
    saw_a_summary_running: bool = False
    _lookups: dict[str, Value | None] = field(default_factory=dict)

    def absolute(self, level: int, module: str | None) -> str | None:
        return absolute_module(self.module, self.is_package, level, module)

    def foreign_module(self, path: object) -> ForeignModule | None:
        """Another module whose function bodies this one reads with its own arguments: its result depends on that
        module's text from now on (noted as a dependency)."""
        if not isinstance(path, Path) or path == self.path:
            return None
        found = self.project.foreign_module(path)
        if found is not None:
            self.dependencies[TEXT_DEPENDENCY + str(path)] = found.content
        return found

    def lookup(self, qualname: str) -> Value | None:
        if qualname not in self._lookups:
            found = None
            if self.project.files.has_top(qualname.partition(".")[0], self.path.parent):
                found = self._member(qualname)
            self._lookups[qualname] = found
        return self._lookups[qualname]

    def names_of(self, module: str, seen: frozenset[str] = frozenset()) -> dict[str, Value]:
        """``from module import *``: the module's public names (those without a leading underscore). Around an
        import cycle, where its summary is not used, what its unindented imports bind, its star imports followed (a
        submodule's ``from pkg import *`` of a package whose ``__init__`` star-imports ``.utils``: the ``np`` and
        ``nn`` of ``utils`` are NumPy's and torch's whichever module runs first)."""
        summary = self._summary(module)
        if summary is not None:
            return {name: value for name, value in summary.names.items() if not name.startswith("_")}
        path = self.project.files.path_of(module, self.path.parent)
        read = self.project.text_of(path) if path is not None and self.project.same_cycle(self.path, path) else None
        if read is None or module in seen:
            return {}
        from ..analysis.values import ref

        self.dependencies[TEXT_DEPENDENCY + str(path)] = read[1]
        found = self.project.files.module_of(path)
        name, is_package = found if found else (None, False)
        bindings, starred = top_level_imports(read[0], name, is_package)
        names: dict[str, Value] = {}
        for other in starred:
            names.update(self.names_of(other, seen | {module}))
        names.update((bound, ref(qualname)) for bound, qualname in bindings.items() if not bound.startswith("_"))
        return names

    def _summary(self, module: str) -> ModuleSummary | None:
        path = self.project.files.path_of(module, self.path.parent)
        if path is None or (self.project.same_cycle(self.path, path) and not self._inside_own_package(path)):
            return None  # not the project's, or imported around a cycle: unknown
        summary = self.project.summary_of(path)
        if summary is not None:
            self.dependencies[str(path)] = summary.digest
        elif path in self.project.running:
            self.saw_a_summary_running = True
        return summary

    def _inside_own_package(self, path: Path) -> bool:
        """Whether this module is a package's ``__init__`` and ``path`` one of that package's modules. Around an
        import cycle, such an ``__init__`` still sees its submodules' summaries (``from .nets import Net``, where
        ``nets.py`` imports from the package): a submodule sees its package's names as unknown, so each of those
        summaries is made without this one, and which runs first changes nothing."""
        return self.is_package and path != self.path and self.path.parent in path.parents

    def _member(self, qualname: str) -> Value | None:
        from ..analysis.values import Kind

        files = self.project.files
        is_a_module = files.path_of(qualname, self.path.parent) is not None
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if files.path_of(module, self.path.parent) is None:
                continue
            summary = self._summary(module)
            if summary is None:
                return None
            value = summary.names.get(parts[cut])
            if is_a_module and (value is None or (value.kind is Kind.REF and value.qualname == qualname)):
                # ``pkg.sub`` is a module itself: it stays a name, and its members are looked up; but where the
                # package binds the name to something else (``from .PVRNet import PVRNet`` in its ``__init__``),
                # ``from pkg import PVRNet`` gets that, as Python does
                return None
            for attribute in parts[cut + 1:]:
                value = _member_of(value, attribute) if value is not None else None
            if value is not None and value.kind is Kind.REF and value.qualname and value.qualname != qualname:
                return self.lookup(value.qualname) or value  # a re-export: follow it
            return value
        return None


def _member_of(value: Value, name: str) -> Value | None:
    from ..analysis.definitions import ClassInfo
    from ..analysis.values import Kind, Value

    info = value.definition
    if not isinstance(info, ClassInfo):
        return None
    method = info.method(name)
    if method is not None:
        return Value(Kind.FUNCTION, definition=method)
    return info.attribute(name)


def _reversed(edges: dict[Path, list[Path]]) -> dict[Path, list[Path]]:
    """Module -> the modules whose edges lead to it."""
    reversed_edges: dict[Path, list[Path]] = {}
    for path, targets in edges.items():
        for target in targets:
            reversed_edges.setdefault(target, []).append(path)
    return reversed_edges


def _reachable(start: Path, edges: dict[Path, list[Path]]) -> set[Path]:
    return _reachable_from({start}, edges)


def _reachable_from(starts: set[Path], edges: dict[Path, list[Path]]) -> set[Path]:
    """``starts`` and every module an edge leads to from them, directly or not."""
    seen = set(starts)
    pending = list(starts)
    while pending:
        for target in edges.get(pending.pop(), ()):
            if target not in seen:
                seen.add(target)
                pending.append(target)
    return seen


def _calls_a_default_setter(text: str) -> bool:
    # the substring first: the expression, which starts with a lookbehind, is tried at every position
    return "set_default_" in text and _SETS_DEFAULT.search(text) is not None


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
