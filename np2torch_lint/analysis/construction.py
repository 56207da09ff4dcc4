"""An object's own attributes while its ``__init__`` runs, before anything else can have set them.

A class's attributes are otherwise what all its methods assign, joined (``definitions.py``): ``forward`` sees what
``__init__`` and ``train`` set. Inside ``__init__`` that join is too wide. Until the body calls something that can
run another method of the object (``self.reset()``, ``super().__init__()``, a call given ``self``), no other method
has run, so ``self.x`` is what ``__init__`` itself assigned before the read::

    def __init__(self, alpha, **kwargs):
        self.__dict__.update(kwargs)                # alpha, from the caller: not known
        self.log_alpha = torch.tensor(np.log(self.alpha), requires_grad=True)   # not train()'s tensor

    def train(self):
        self.alpha = self.log_alpha.exp()

What ``__init__`` assigns is kept in its scope under ``"<self>.<name>"`` (not a Python name), so branches join it
as they join names. An attribute ``__init__`` never assigns is, before an escape, the class body's value or unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .definitions import ClassInfo, FunctionInfo, parameter_names
from .values import UNKNOWN, Kind, Value


@dataclass(eq=False)
class Construction:
    """The ``__init__`` being read: its object's name, its class, what it assigns to the object anywhere, and
    whether a call may have run another method of the object yet."""

    receiver: str
    owner: ClassInfo
    assigned: frozenset[str]
    escaped: bool = False

    def key(self, attribute: str) -> str:
        return f"{self.receiver}.{attribute}"


def construction_of(info: FunctionInfo, assigned_in: dict[cst.FunctionDef, frozenset[str]]) -> Construction | None:
    """The construction ``info``'s body reads, when it is a class's ``__init__`` (a method, with its receiver);
    ``assigned_in``: what each ``__init__`` read so far assigns to its object, kept across its reads."""
    node = info.node
    if info.owner is None or info.role != "method" or not isinstance(node, cst.FunctionDef) or (
            node.name.value != "__init__"):
        return None
    names = parameter_names(info)
    if not names:
        return None
    assigned = assigned_in.get(node)
    if assigned is None:
        assigned = assigned_in[node] = frozenset(_assigned_attributes(node, names[0]))
    return Construction(names[0], info.owner, assigned)


def _assigned_attributes(node: cst.FunctionDef, receiver: str) -> set[str]:
    """The attributes of ``receiver`` that ``node``'s statements assign (not those of functions defined inside)."""
    found: set[str] = set()
    for statement in _small_statements(node.body):
        kind = type(statement)
        if kind is cst.Assign:
            targets = [target.target for target in statement.targets]
        elif kind is cst.AnnAssign or kind is cst.AugAssign:
            targets = [statement.target]
        else:
            continue
        for target in targets:
            for element in _unpacked(target):
                if type(element) is cst.Attribute and type(element.value) is cst.Name and (
                        element.value.value == receiver):
                    found.add(element.attr.value)
    return found


def _small_statements(part: cst.CSTNode):
    """The simple statements of a body, through compound statements, walking no expression (the cost of reading a
    large ``__init__`` once is the number of its statements)."""
    for child in part.children:
        kind = type(child)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            yield from child.body
        elif kind in _DESCENDED:
            yield from _small_statements(child)


#: what holds statements: compound statements and their blocks (not a nested ``def`` or ``class``)
_DESCENDED = frozenset({cst.IndentedBlock, cst.If, cst.Else, cst.For, cst.While, cst.With, cst.Try, cst.ExceptHandler,
                        cst.Finally, cst.Match, cst.MatchCase, *((cst.TryStar, cst.ExceptStarHandler)
                                                                 if hasattr(cst, "TryStar") else ())})


def _unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [part for element in target.elements for part in _unpacked(element.value)]
    if isinstance(target, cst.StarredElement):
        return _unpacked(target.value)
    return [target]


class ConstructionMixin:
    """Reads and writes of the object's own attributes in its ``__init__``, and the calls that end that view."""

    def _own_attribute(self, node: cst.Attribute) -> Value | None:
        """``self.x`` read in ``__init__`` before an escape: what the body assigned so far; for an attribute it
        never assigns, the class body's value or unknown. None: read it as any attribute (the class's join)."""
        construction = self.construction
        if construction is None or construction.escaped or not isinstance(node.value, cst.Name) or (
                node.value.value != construction.receiver):
            return None
        attribute = node.attr.value
        owner = construction.owner
        if owner.method(attribute) is not None or owner.attribute(attribute) is None:
            return None  # a method, a property, or nothing any method assigns: as before
        if attribute in construction.assigned:
            value = self.scope.lookup(construction.key(attribute))  # None before its first assignment: as before
        else:
            value = next((info.class_names[attribute] for info in owner.lineage() if attribute in info.class_names),
                         UNKNOWN)
        if value is not None and value.kind in (Kind.SEQUENCE, Kind.MAPPING):
            return None  # a container kept on the object: its elements are every append site's (containers.py)
        return value

    def _note_own_attribute(self, target: cst.Attribute, value: Value) -> None:
        construction = self.construction
        if construction is not None and isinstance(target.value, cst.Name) and (
                target.value.value == construction.receiver):
            self.scope.names[construction.key(target.attr.value)] = value

    def _note_escape(self, node: cst.Call) -> None:
        """A call that may run another method of the object ends ``_own_attribute``'s view for the rest of
        ``__init__``: ``self.reset()`` (a method, or one of a base class not known), ``super().__init__()``, and any
        call given the object itself. ``self.net(x)`` of an attribute that holds a module does not."""
        construction = self.construction
        if construction is None or construction.escaped:
            return
        func = node.func
        receiver = construction.receiver
        if isinstance(func, cst.Attribute):
            owner = func.value
            called = func.attr.value
            if isinstance(owner, cst.Name) and owner.value == receiver and (
                    construction.owner.method(called) is not None or construction.owner.attribute(called) is None):
                construction.escaped = True
            elif isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "super":
                construction.escaped = True
        if any(isinstance(arg.value, cst.Name) and arg.value.value == receiver for arg in node.args):
            construction.escaped = True
