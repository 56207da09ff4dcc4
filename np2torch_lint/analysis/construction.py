"""An object's own attributes while its ``__init__`` runs, before anything else can have set them, and a method's own
stores.

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

Any other method sees its own stores the same way, from the store on, until a call that may run another method::

    def generate(self, image):
        assert self.check_type_device(image)    # stores a grad copy in self.image: an escape
        self.image = image                      # from here self.image is the caller's image again
        return deepfool(self.model, self.image)

Before its first store, after an escape, and where a path did not store it, an attribute is the class's join.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .definitions import ClassInfo, FunctionInfo, parameter_names, parameter_names_of
from .syntax import children_of
from .values import UNKNOWN, Kind, Value


@dataclass(eq=False)
class Construction:
    """The ``__init__`` being read: its object's name, its class, what it assigns to the object anywhere, and
    whether a call may have run another method of the object yet."""

    receiver: str
    owner: ClassInfo
    assigned: frozenset[str]
    escaped: bool = False
    #: False for a method other than ``__init__``: its object's attributes were set before it ran, so it reads only
    #: its own stores, where every path made one (``stored_key``)
    init: bool = True
    #: (another method) whether it stored an attribute since it began or since the last escape
    stored: bool = False

    def key(self, attribute: str) -> str:
        return f"{self.receiver}.{attribute}"

    def stored_key(self, attribute: str) -> str:
        return f"{self.receiver}.{attribute} stored"


def construction_of(info: FunctionInfo, assigned_in: dict[cst.FunctionDef, frozenset[str]]) -> Construction | None:
    """The view of its object's attributes ``info``'s body reads, when it is a method of a class (with its
    receiver): the construction of ``__init__``, or another method's own stores (None where it stores none);
    ``assigned_in``: what each method read so far assigns to its object, kept across its reads."""
    node = info.node
    if info.owner is None or info.role != "method" or not isinstance(node, cst.FunctionDef):
        return None
    names = parameter_names(info)
    if not names:
        return None
    assigned = assigned_in.get(node)
    if assigned is None:
        assigned = assigned_in[node] = frozenset(_assigned_attributes(node, names[0]))
    init = node.name.value == "__init__"
    return Construction(names[0], info.owner, assigned, init=init) if init or assigned else None


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
    for child in children_of(part):
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
    """Reads and writes of the object's own attributes in its methods, and the calls that end that view."""

    def _own_attribute(self, node: cst.Attribute) -> Value | None:
        """``self.x`` read in ``__init__`` before an escape: what the body assigned so far; for an attribute it
        never assigns, the class body's value or unknown. In another method: what it stored, where every path here
        stored it since the method began or since the last escape. None: read it as any attribute (the class's
        join)."""
        construction = self.construction
        if construction is None or construction.escaped or not isinstance(node.value, cst.Name) or (
                node.value.value != construction.receiver):
            return None
        attribute = node.attr.value
        owner = construction.owner
        if not construction.init:
            # (the cheap tests first: most reads in a method are of attributes it does not store)
            stored = self.scope.lookup(construction.stored_key(attribute)) if (
                attribute in construction.assigned) else None
            if stored is None or stored.literal != _STORED.literal or owner.method(attribute) is not None:
                return None  # not stored yet, or not on every path that comes here: the class's join
            value = self.scope.lookup(construction.key(attribute))
            return None if value is None or value.kind in (Kind.SEQUENCE, Kind.MAPPING) else value
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
            if not construction.init:
                self.scope.names[construction.stored_key(target.attr.value)] = _STORED
                construction.stored = True

    def _begin_own_stores(self) -> None:
        """A method other than ``__init__`` begins with none of its stores made: every attribute is the class's."""
        construction = self.construction
        if construction is not None and not construction.init:
            for attribute in construction.assigned:
                self.scope.names[construction.stored_key(attribute)] = _NOT_STORED

    def _note_escape(self, node: cst.Call) -> None:
        """A call that may run another method of the object ends ``_own_attribute``'s view for the rest of
        ``__init__`` (in another method, until its next store): ``self.reset()`` (a method, or one of a base class
        not known), ``super().__init__()``, and any call given the object itself. ``self.net(x)`` of an attribute
        that holds a module does not. Outside ``__init__``, ``self.parse_params(**kwargs)`` of a method of the file
        that calls nothing that may run another ends the view only of the attributes it assigns."""
        construction = self.construction
        if construction is None or construction.escaped or not (construction.init or construction.stored):
            return
        escapes, called = _escape(node, construction.receiver, construction.owner)
        if not escapes:
            return
        if construction.init:
            construction.escaped = True
            return
        stores = None if called is None else self._stores_of_method(construction.owner, called)
        for attribute in construction.assigned if stores is None else construction.assigned & stores:
            self.scope.names[construction.stored_key(attribute)] = _NOT_STORED
        if stores is None:
            construction.stored = False

    def _stores_of_method(self, owner: ClassInfo, called: str) -> frozenset[str] | None:
        """The attributes ``self.called(...)`` may assign: those its body assigns, when it calls nothing that may
        run yet another method of the object; None: any."""
        found = owner.method(called)
        if found is None or found.role != "method":
            return None
        node = found.node if found.node is not None else self._foreign_definition(found)  # a base class elsewhere
        if not isinstance(node, cst.FunctionDef):
            return None
        if node not in self.stores_of_method:
            names = parameter_names_of(node)
            self.stores_of_method[node] = None if not names or _calls_escape(node, names[0], owner) else (
                frozenset(_assigned_attributes(node, names[0])))
        return self.stores_of_method[node]


def _escape(node: cst.Call, receiver: str, owner: ClassInfo) -> tuple[bool, str | None]:
    """Whether ``node`` may run another method of ``receiver``'s object, and the method when it is
    ``receiver.method(...)``."""
    func = node.func
    passes_receiver = any(isinstance(arg.value, cst.Name) and arg.value.value == receiver for arg in node.args)
    if isinstance(func, cst.Attribute):
        value, called = func.value, func.attr.value
        if isinstance(value, cst.Name) and value.value == receiver and (
                owner.method(called) is not None or owner.attribute(called) is None):
            return True, None if passes_receiver else called
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "super":
            return True, None
    return passes_receiver, None


def _calls_escape(node: cst.FunctionDef, receiver: str, owner: ClassInfo) -> bool:
    """Whether a call in ``node``'s body (nested functions included) may run another method of the object."""
    return any(_escape(call, receiver, owner)[0] for call in _calls_in(node.body))


def _calls_in(part: cst.CSTNode) -> Iterator[cst.Call]:
    # A plain walk over the children, not ``libcst.matchers.findall``: its visitor made a cold run about 3% slower.
    for child in children_of(part):
        if type(child) is cst.Call:
            yield child
        yield from _calls_in(child)


#: whether a method other than ``__init__`` stored an attribute on this path since it began or since the last escape,
#: kept under ``Construction.stored_key``; paths that differ join to neither, which reads the class's join
_STORED, _NOT_STORED = Value(Kind.STRING, literal="stored"), Value(Kind.STRING, literal="not stored")
