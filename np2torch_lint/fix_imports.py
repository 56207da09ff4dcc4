"""The names a fix writes and the imports it adds: never a name the file already uses for something else, and
each import where isort's default profile puts it.

A fix that calls ``to_numpy`` must not change what any other line of the file means. So before a name is
written, every use of it in the module is looked at (``NameUses``): imports, ``def``/``class``, assignment,
loop, ``with`` and comprehension targets, parameters, ``global``/``nonlocal``, ``del``, match captures, and
star imports. A name is written bare only when nothing else binds it; otherwise the runtime module is imported
under an alias nothing uses (``from np2torch_lint import runtime as npt_runtime``, then ``npt_runtime.to_numpy``).
"""

from __future__ import annotations

import dataclasses
import enum
import re
import sys
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import libcst as cst

from .positions import Span

RUNTIME_MODULE = "np2torch_lint.runtime"
#: the names tried, in order, for the runtime module and for torch and numpy when they must be imported anew
RUNTIME_ALIASES = ("npt_runtime", "npt_runtime_", "npt_runtime__")
MODULE_NAMES = {"numpy": ("np", "numpy", "npt_numpy"), "torch": ("torch", "npt_torch")}
ISORT_LINE_LENGTH = 79  # isort's default ``line_length``


class Binding(enum.Enum):
    FREE = "free"  # nothing in the module uses the name
    BOUND = "bound"  # only module-level imports of one thing bind it, and nothing else does
    TAKEN = "taken"  # anything else: a def, an assignment, a parameter, another import, a global, ...


@dataclass(frozen=True)
class NameUse:
    binding: Binding
    target: str | None = None  # what the imports bind it to, for BOUND ("numpy", "np2torch_lint.runtime.to_numpy")


# --- who uses a name ---------------------------------------------------------------------------------------

_BINDING_FIELDS = {  # (node type, field) whose Name (or the Names of a tuple/list in it) is bound
    (cst.AssignTarget, "target"), (cst.AnnAssign, "target"), (cst.AugAssign, "target"),
    (cst.NamedExpr, "target"), (cst.For, "target"), (cst.CompFor, "target"), (cst.AsName, "name"),
    (cst.FunctionDef, "name"), (cst.ClassDef, "name"), (cst.Param, "name"), (cst.NameItem, "name"),
    (cst.Del, "target"), (cst.MatchAs, "name"), (cst.MatchStar, "name"), (cst.MatchMapping, "rest"),
}
for _type_name, _field in (("TypeVar", "name"), ("TypeVarTuple", "name"), ("ParamSpec", "name"),
                           ("TypeAlias", "name")):
    if hasattr(cst, _type_name):  # Python 3.12 syntax, in newer LibCST releases
        _BINDING_FIELDS.add((getattr(cst, _type_name), _field))
_NOT_NAMES = {(cst.Attribute, "attr"), (cst.Arg, "keyword")}  # ``x.name`` and ``f(name=...)`` bind nothing
_TARGET_KEEPERS = (cst.Tuple, cst.List, cst.Element, cst.StarredElement, cst.AssignTarget)
_NEW_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
               cst.GeneratorExp)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node_type: type) -> tuple[str, ...]:
    names = _FIELDS.get(node_type)
    if names is None:
        names = _FIELDS[node_type] = tuple(f.name for f in dataclasses.fields(node_type))
    return names


class NameUses:
    """How one module uses a few names, found in one walk of the tree (only for names its text mentions)."""

    def __init__(self, module: cst.Module, text: str, names: Iterable[str]) -> None:
        self.star_import = _has_star_import(module)
        self._module = module
        self._text = text
        self._names = set(names)
        self._mentioned: dict[str, bool] = {}
        self._uses: dict[str, list[tuple[str, str | None, bool]]] | None = None

    def _mentions(self, name: str) -> bool:
        if name not in self._mentioned:
            self._mentioned[name] = re.search(rf"(?<![\w.]){re.escape(name)}\b", self._text) is not None
        return self._mentioned[name]

    def of(self, name: str) -> NameUse:
        if not self._mentions(name):  # the text never says it: no walk needed
            return NameUse(Binding.FREE)
        if self._uses is None or name not in self._uses:
            self._uses = {each: [] for each in self._names | {name} if self._mentions(each)}
            self._walk(self._module)
        uses = self._uses[name]
        if not uses:
            return NameUse(Binding.FREE)
        targets = {target for kind, target, _ in uses if kind == "import"}
        if (any(kind == "bind" for kind, _, _ in uses) or len(targets) != 1
                or not any(kind == "import" and top_level for kind, _, top_level in uses)):
            return NameUse(Binding.TAKEN)  # loads alone (no import here) are a builtin or a star import's
        return NameUse(Binding.BOUND, targets.pop())

    def _walk(self, module: cst.Module) -> None:
        uses = self._uses
        assert uses is not None
        # (node, parent, field, in a binding target, in a nested scope, a direct statement of the module)
        stack: list[tuple[cst.CSTNode, cst.CSTNode | None, str, bool, bool, bool]] = [
            (statement, module, "body", False, False, True) for statement in module.body]
        while stack:
            node, parent, name, in_target, nested, top = stack.pop()
            node_type = type(node)
            if node_type is cst.Name:
                if node.value in uses and (type(parent), name) not in _NOT_NAMES:
                    uses[node.value].append(("bind" if in_target or (type(parent), name) in _BINDING_FIELDS
                                             else "load", None, False))
                continue
            if node_type is cst.Import or node_type is cst.ImportFrom:
                self._note_import(node, not nested and top)
                continue
            if node_type in (cst.Attribute, cst.Subscript, cst.Call):
                in_target = False  # ``a.b = 1``, ``a[i] = 1``: a and i are read, not bound
            elif not isinstance(node, _TARGET_KEEPERS):
                in_target = False
            inner_nested = nested or isinstance(node, _NEW_SCOPES)
            inner_top = top and node_type is cst.SimpleStatementLine
            for child_field in _fields(node_type):
                child = getattr(node, child_field)
                binds = in_target or (node_type, child_field) in _BINDING_FIELDS
                if isinstance(child, cst.CSTNode):
                    stack.append((child, node, child_field, binds, inner_nested, inner_top))
                elif isinstance(child, (tuple, list)):
                    for item in child:
                        if isinstance(item, cst.CSTNode):
                            stack.append((item, node, child_field, binds, inner_nested, inner_top))

    def _note_import(self, node: cst.Import | cst.ImportFrom, top_level: bool) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            dotted = _dotted(alias.name)
            if isinstance(node, cst.Import):
                bound = alias.asname.name.value if alias.asname else dotted.split(".")[0]  # type: ignore[union-attr]
                target = dotted if alias.asname else bound
            else:
                module = "." * len(node.relative) + (_dotted(node.module) if node.module else "")
                bound = alias.asname.name.value if alias.asname else dotted  # type: ignore[union-attr]
                target = f"{module}.{dotted}"
            if self._uses is not None and bound in self._uses:
                self._uses[bound].append(("import", target, top_level))


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _has_star_import(module: cst.Module) -> bool:
    return any(isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar)
               for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
               for small in statement.body)


# --- what a fix writes -------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Import:
    """``import module [as asname]`` (``name`` None) or ``from module import name [as asname]``."""

    module: str
    name: str | None = None
    asname: str | None = None


@dataclass
class Spelling:
    """How fixes in one file write torch, numpy and the runtime helpers; each choice is made once per file (a
    fix adds no binding but its own import, so a choice stays right in later passes)."""

    #: the names the analysis saw bound to the modules at module level, e.g. {"torch": "th", "numpy": "np"}
    module_names: Mapping[str, str] = field(default_factory=dict)
    chosen: dict[str, tuple[str, Import | None]] = field(default_factory=dict)

    def helper(self, name: str, uses: NameUses) -> tuple[str, Import]:
        """``(expression text, import)`` for runtime helper ``name``."""
        key = f"helper:{name}"
        if key not in self.chosen:
            use = uses.of(name)
            if (use.binding is Binding.FREE and not uses.star_import) or (
                    use.binding is Binding.BOUND and use.target == f"{RUNTIME_MODULE}.{name}"):
                self.chosen[key] = (name, Import(RUNTIME_MODULE, name))
            else:
                alias = self._runtime_alias(uses)
                self.chosen[key] = (f"{alias}.{name}", Import("np2torch_lint", "runtime", alias))
        written, needed = self.chosen[key]
        assert needed is not None
        return written, needed

    def _runtime_alias(self, uses: NameUses) -> str:
        for alias in RUNTIME_ALIASES:
            use = uses.of(alias)
            if use.binding is Binding.FREE or (use.binding is Binding.BOUND and use.target == RUNTIME_MODULE):
                return alias
        raise NameClash("np2torch_lint.runtime")

    def module(self, qualname: str, uses: NameUses) -> tuple[str, Import | None]:
        """``(name, import or None)`` for the module ``torch`` or ``numpy``."""
        if qualname not in self.chosen:
            self.chosen[qualname] = self._module(qualname, uses)
        return self.chosen[qualname]

    def _module(self, qualname: str, uses: NameUses) -> tuple[str, Import | None]:
        existing = self.module_names.get(qualname)
        candidates = ([existing] if existing else []) + [n for n in MODULE_NAMES.get(qualname, (qualname,))
                                                         if n != existing]
        for name in candidates:
            use = uses.of(name)
            if use.binding is Binding.BOUND and use.target == qualname:
                return name, Import(qualname, None, None if name == qualname else name)
            if use.binding is Binding.FREE and name != existing:
                return name, Import(qualname, None, None if name == qualname else name)
        raise NameClash(qualname)


class NameClash(Exception):
    """Every name tried for an import is used for something else in the file: the fix is not applied."""


# --- where an import goes ----------------------------------------------------------------------------------


class ImportLayout:
    """Where one module's imports are, worked out once for every fix of it (a file can have thousands): its
    top-level import statements, the docstring and ``from __future__`` head, and the first import block's groups
    with their isort sections."""

    def __init__(self, module: cst.Module, spans: Mapping[cst.CSTNode, Span]) -> None:
        self.module, self.spans = module, spans
        self.statements = _top_level_imports(module, spans)
        self.head = _head(module)
        self.groups = _groups(_first_block(module, self.head))
        self.sections = [_group_section(group) for group in self.groups]
        self._length: int | None = None

    @property
    def length(self) -> int:
        """The module's length as printed (needed only where it has no import block nor another statement)."""
        if self._length is None:
            self._length = len(self.module.code)
        return self._length

    def edits(self, needed: Iterable[Import], before: int) -> list[tuple[int, int, str]]:
        """Text edits ``(start, end, new text)`` that add ``needed`` imports to the module's first import block,
        where isort's default profile would put them (third-party section, sorted; after a docstring and
        ``from __future__``); an import the block already has before offset ``before`` is not added again."""
        module, spans, statements = self.module, self.spans, self.statements
        newline = module.default_newline
        present = {imported for statement, _ in statements if spans[statement].start < before
                   for imported in _imports_of(statement)}
        wanted = sorted(set(needed) - present)
        if not wanted:
            return []
        edits: list[tuple[int, int, str]] = []
        # names from a module the block already imports from, on one plain line: merged into that line (as isort)
        from_names: dict[str, list[Import]] = {}
        for item in wanted:
            if item.name is not None:
                from_names.setdefault(item.module, []).append(item)
        lines: list[tuple[Import, str]] = []
        for module_name, items in sorted(from_names.items()):
            merged = False
            for statement, small in statements:
                if (isinstance(small, cst.ImportFrom) and spans[statement].start < before
                        and _plain_from_line(statement, small) and not small.relative
                        and _dotted(small.module) == module_name):  # type: ignore[arg-type]
                    names = [_alias_text(alias) for alias in small.names]  # type: ignore[union-attr]
                    names += [_name_text(item) for item in items]
                    span = spans[statement]  # its own line only: the blank lines and comments above it stay
                    edits.append((span.syntactic_start, span.end, _from_line(module_name, names, newline)))
                    merged = True
                    break
            if not merged:
                lines.append((items[0], _from_line(module_name, [_name_text(item) for item in items], newline)))
        lines.extend((item, _import_line(item, newline)) for item in wanted if item.name is None)
        for item, text in lines:
            edits.append(_insertion(self, item, text))
        # several new lines at one place go in isort's order
        edits.sort(key=lambda edit: (edit[0], edit[1]))
        return _join_insertions(edits)


def _join_insertions(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    joined: list[tuple[int, int, str]] = []
    for start, end, text in edits:
        if joined and start == end == joined[-1][0] == joined[-1][1]:
            joined[-1] = (start, end, _merge_blocks(joined[-1][2], text))
        else:
            joined.append((start, end, text))
    return joined


def _merge_blocks(first: str, second: str) -> str:
    """Two insertions at one offset: their import lines together, sorted, with the blank lines around kept."""
    lead = first[:len(first) - len(first.lstrip("\r\n"))]
    first_body, second_body = first.strip("\r\n"), second.strip("\r\n")
    trail = first[len(first.rstrip("\r\n")):]
    newline = "\r\n" if "\r\n" in first else "\r" if "\r" in first and "\n" not in first else "\n"
    body = newline.join(sorted([first_body, second_body], key=_isort_line_key))
    return lead + body + trail


def _isort_line_key(line: str) -> tuple[int, str]:
    is_from = line.startswith("from ")
    return int(is_from), line.split()[1].lower()


def _top_level_imports(module: cst.Module, spans: Mapping[cst.CSTNode, Span]
                       ) -> list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]:
    found = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and statement in spans:
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    found.append((statement, small))
    return found


def _imports_of(statement: cst.SimpleStatementLine) -> Iterable[Import]:
    for small in statement.body:
        if isinstance(small, cst.Import):
            for alias in small.names:
                yield Import(_dotted(alias.name), None, alias.asname.name.value if alias.asname else None)
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and not small.relative:
            for alias in small.names:
                yield Import(_dotted(small.module), _dotted(alias.name),  # type: ignore[arg-type]
                             alias.asname.name.value if alias.asname else None)


def _plain_from_line(statement: cst.SimpleStatementLine, small: cst.ImportFrom) -> bool:
    """One ``from m import a, b`` on its own line, no parentheses, star or comment: safe to rewrite whole."""
    return (len(statement.body) == 1 and not isinstance(small.names, cst.ImportStar) and small.lpar is None
            and statement.trailing_whitespace.comment is None)


def _alias_text(alias: cst.ImportAlias) -> str:
    name = _dotted(alias.name)
    return f"{name} as {alias.asname.name.value}" if alias.asname else name  # type: ignore[union-attr]


def _name_text(item: Import) -> str:
    return f"{item.name} as {item.asname}" if item.asname else str(item.name)


def _from_line(module_name: str, names: Sequence[str], newline: str) -> str:
    """``from m import a, b``, names in isort's order; wrapped in isort's grid style past 79 characters."""
    ordered = sorted(dict.fromkeys(names), key=_isort_name_key)
    line = f"from {module_name} import {', '.join(ordered)}"
    if len(line) <= ISORT_LINE_LENGTH:
        return line + newline
    opening = f"from {module_name} import ("
    lines, current = [], opening
    for index, name in enumerate(ordered):
        piece = name + (")" if index == len(ordered) - 1 else ",")
        candidate = current + ("" if current.endswith("(") else " ") + piece
        if len(candidate) > ISORT_LINE_LENGTH and not current.endswith("("):
            lines.append(current)
            current = " " * len(opening) + piece
        else:
            current = candidate
    lines.append(current)
    return newline.join(lines) + newline


def _isort_name_key(name: str) -> tuple[int, str]:
    """isort's ``order_by_type``: CONSTANTS, then Classes, then functions; each case-insensitively."""
    bare = name.split(" as ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare.lower()


def _import_line(item: Import, newline: str) -> str:
    return f"import {item.module}" + (f" as {item.asname}" if item.asname else "") + newline


def _section(small: cst.Import | cst.ImportFrom) -> str:
    if isinstance(small, cst.ImportFrom):
        if small.relative:
            return "local"
        top = _dotted(small.module).split(".")[0] if small.module else ""  # type: ignore[arg-type]
    else:
        top = _dotted(small.names[0].name).split(".")[0]
    if top == "__future__":
        return "future"
    return "stdlib" if top in _STDLIB else "thirdparty"


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))


def _sort_key(small: cst.Import | cst.ImportFrom) -> tuple[int, str]:
    if isinstance(small, cst.ImportFrom):
        return 1, _dotted(small.module).lower() if small.module else ""  # type: ignore[arg-type]
    return 0, _dotted(small.names[0].name).lower()


def _item_key(item: Import) -> tuple[int, str]:
    return (0 if item.name is None else 1), item.module.lower()


def _insertion(layout: ImportLayout, item: Import, text: str) -> tuple[int, int, str]:
    module, spans, head, groups, sections = layout.module, layout.spans, layout.head, layout.groups, layout.sections
    newline = module.default_newline
    third = next((i for i, group in enumerate(groups) if any(
        _top_module(small) in ("torch", "numpy") for _, small in group)), None)
    if third is None:
        third = next((i for i, section in enumerate(sections) if section == "thirdparty"), None)
    if third is not None:
        group = groups[third]
        key = _item_key(item)
        for statement, small in group:
            if _sort_key(small) > key:
                return _before(statement, spans, module) + (text,)
        return _after(group[-1][0], spans) + (text,)
    # no third-party group: a new one after the standard library's (and __future__'s), else before the others
    previous = [group for group, section in zip(groups, sections) if section in ("future", "stdlib")]
    if previous:
        return _after(previous[-1][-1][0], spans) + (newline + text,)
    if groups:
        start = _before(groups[0][0][0], spans, module)
        return start + (text + newline,)
    # no import block at all: after the docstring and __future__ imports
    after_head = module.body[len(head)] if len(head) < len(module.body) else None
    gap = newline * (2 if isinstance(after_head, (cst.FunctionDef, cst.ClassDef)) else 1)
    if after_head is not None and any(line.comment is None for line in after_head.leading_lines[:1]):
        gap = ""  # the statement already has a blank line above it
    if head:
        end = spans[head[-1]].end if head[-1] in spans else 0
        return end, end, newline + text + gap
    start = spans[after_head].start if after_head is not None and after_head in spans else layout.length
    return start, start, text + gap


def _before(statement: cst.SimpleStatementLine, spans: Mapping[cst.CSTNode, Span],
            module: cst.Module) -> tuple[int, int]:
    """Just above a statement's own comment lines, below the blank lines that end the previous group."""
    span = spans[statement]
    offset = span.start
    for line in statement.leading_lines:
        if line.comment is not None:
            break
        offset += len(module.code_for_node(line))
    return offset, offset


def _after(statement: cst.SimpleStatementLine, spans: Mapping[cst.CSTNode, Span]) -> tuple[int, int]:
    end = spans[statement].end
    return end, end


def _head(module: cst.Module) -> list[cst.BaseStatement]:
    """The docstring and ``from __future__`` imports, which an added import goes after."""
    head: list[cst.BaseStatement] = []
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        first = statement.body[0]
        is_docstring = index == 0 and isinstance(first, cst.Expr) and isinstance(
            first.value, (cst.SimpleString, cst.ConcatenatedString))
        is_future = isinstance(first, cst.ImportFrom) and first.module is not None and _dotted(
            first.module) == "__future__"
        if not (is_docstring or is_future):
            break
        head.append(statement)
    return head


def _first_block(module: cst.Module, head: list[cst.BaseStatement]
                 ) -> list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]:
    block = []
    for statement in module.body[len(head):]:
        if not (isinstance(statement, cst.SimpleStatementLine) and all(
                isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)):
            break
        block.extend((statement, small) for small in statement.body)
    return block


def _groups(block: list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]
            ) -> list[list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]]:
    """isort's sections as the file has them: runs of imports with no blank line between them."""
    groups: list[list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]] = []
    previous = None
    for statement, small in block:
        starts_group = previous is None or (statement is not previous and any(
            line.comment is None for line in statement.leading_lines))
        if starts_group:
            groups.append([])
        groups[-1].append((statement, small))
        previous = statement
    return groups


def _group_section(group: list[tuple[cst.SimpleStatementLine, cst.Import | cst.ImportFrom]]) -> str:
    sections = {_section(small) for _, small in group}
    for section in ("future", "local", "thirdparty", "stdlib"):
        if section in sections:
            return section
    return "thirdparty"


def _top_module(small: cst.Import | cst.ImportFrom) -> str:
    if isinstance(small, cst.ImportFrom):
        return _dotted(small.module).split(".")[0] if small.module else ""  # type: ignore[arg-type]
    return _dotted(small.names[0].name).split(".")[0]
