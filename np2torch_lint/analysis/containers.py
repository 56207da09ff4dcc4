"""Lists and deques kept on ``self``: their elements are what every append site puts into them.

The replay-buffer idiom::

    class ReplayBuffer:
        def __init__(self):
            self.buffer = collections.deque(maxlen=limit)
        def put(self, transition):
            self.buffer.append(transition)
        def sample(self, n):
            for s, a, r in random.sample(self.buffer, n): ...

    memory.put((s, a, r))   # in the training loop

The elements of ``self.buffer`` are the join of what every mutation adds (``append``, ``extend``, ``insert``,
``+=``, item assignment, through ``self.buffer`` or any name holding it) and of what the attribute is assigned.
An append of a parameter adds what that parameter is at every call site: a call ``memory.put(x)`` on an object of
the class reads ``put`` with its arguments (a summary), and what that read appends counts. The read of ``put``
with its parameters unknown is left out only when ``put`` is *completely called*: called at least once, always on
an object of the class, never taken as a value, never past the summaries' limits, and never called on an object
the analysis does not know (a method of that name called on anything unknown).

Anything else makes the elements unknown: a class with bases or subclasses in the file or bases the analysis does
not know, the attribute assigned from outside the class's methods, the attribute of an unknown object mutated or
assigned (by name), the container passed to a function the analysis does not know, ``None`` appended.

Order: the elements are worked out ("sealed") once every call site of the file has been read, so the methods that
read a container are read last (``_read_pending_bodies``); before the seal, a container's elements are unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .definitions import ClassInfo, FunctionInfo
from .values import UNKNOWN, Kind, Value, join, join_all

#: list and deque methods that add: what each adds (``one``: its argument at that position, ``all``: the items of
#: its first argument).
ADDING_METHODS = {"append": ("one", 0), "appendleft": ("one", 0), "insert": ("one", 1), "extend": ("all", 0),
                  "extendleft": ("all", 0)}
#: kinds of values that may be an object of a class of the file whose definition the analysis lost.
_MAYBE_OURS = frozenset({Kind.UNKNOWN, Kind.NN_MODULE, Kind.INSTANCE})


@dataclass(eq=False)
class Container:
    """What was put into one attribute of the objects of one class."""

    #: joined additions from reads that count whatever happens: a method read with a call's arguments, code
    #: that is not a method's generic read.
    added: Value | None = None
    #: joined additions from a method's body read with its parameters unknown, by method: left out at the seal
    #: when every call of that method was read with its arguments.
    added_by_generic_read: dict[FunctionInfo, Value] = field(default_factory=dict)
    spoiled: bool = False
    #: after the seal: what iterating over the container gives (None: unknown).
    element: Value | None = None


class ContainersMixin:
    """Containers kept on ``self``: additions, call sites, and the seal."""

    def _init_containers(self) -> None:
        self.containers: dict[tuple[ClassInfo, str], Container] = {}
        self.containers_sealed = False
        #: methods called on an object of their class (with its arguments), and those called some other way
        self.called_methods: set[FunctionInfo] = set()
        self.escaped_methods: set[FunctionInfo] = set()
        #: method names called on, and attribute names mutated or assigned on, an object the analysis does not know
        self.unknown_receiver_methods: set[str] = set()
        self.unknown_owner_attributes: set[str] = set()
        #: functions whose read gave a container's view, and those that define functions or lambdas inside
        self.container_readers: set[FunctionInfo] = set()
        self.defines_nested: set[FunctionInfo] = set()

    def _container(self, info: ClassInfo, attribute: str) -> Container:
        key = (info, attribute)
        found = self.containers.get(key)
        if found is None:
            found = self.containers[key] = Container()
        return found

    def _container_view(self, info: ClassInfo, attribute: str, stored: Value) -> Value:
        """``self.buffer``: the stored list as a container, once anything was put into it or it was made empty."""
        container = self.containers.get((info, attribute))
        if container is None or stored.kind not in (Kind.SEQUENCE, Kind.NN_MODULE):
            return stored
        if self.function_info is not None:
            self.container_readers.add(self.function_info)
        element = container.element if self.containers_sealed else None
        if element is None and info.node is None and not container.spoiled:
            # another module's class, whose methods this analysis read with its calls' arguments: it holds at least
            # what those reads put into it (``history.append_loss(loss)`` then ``plt.plot(self.losses)``), which
            # is what "may" needs; its own module seals it with the rest
            element = container.added
        if stored.kind is Kind.NN_MODULE:  # an ``nn.ModuleList`` filled by ``append``: a module holding them
            return stored.but(element=element or UNKNOWN, holder=(info, attribute))
        return Value(Kind.SEQUENCE, element=element, holder=(info, attribute))

    def _note_container_assigned(self, info: ClassInfo, attribute: str, value: Value) -> None:
        """``self.x = value``: an empty list or deque becomes a container; an assignment from outside spoils it."""
        owner = self.function_info.owner if self.function_info is not None else None
        empty = value.kind is Kind.SEQUENCE and value.items == () and not value.open_ended
        if owner is not info and not (empty and owner is info.specializes is not None):
            # (a construction here of another module's class, ``History("logs/")``, starts its empty lists: what
            # this analysis's reads put into them counts, ``_container_view``)
            if (info, attribute) in self.containers or value.kind is Kind.SEQUENCE:
                self._container(info, attribute).spoiled = True
        elif empty:
            self._container(info, attribute)
        elif value.kind is Kind.NN_MODULE and value.qualname in api.MODULE_CONTAINERS and value.element is None:
            self._container(info, attribute)  # ``self.critics = nn.ModuleList()``, filled by ``append``

    def _holder_of(self, receiver_node: cst.BaseExpression, receiver: Value) -> tuple[ClassInfo, str] | None:
        """The container a mutation reaches: the receiver's holder, or ``X.attr`` for X an object of a class of
        the file (before the attribute is known). ``X.attr`` of an unknown X marks ``attr`` as unknown."""
        if receiver.holder is not None:
            return receiver.holder  # type: ignore[return-value]
        if not isinstance(receiver_node, cst.Attribute):
            return None
        owner = self.eval_quietly(receiver_node.value)
        attribute = receiver_node.attr.value
        if isinstance(owner.definition, ClassInfo) and owner.kind is not Kind.CLASS:
            return owner.definition, attribute
        if owner.definition is None and owner.kind in _MAYBE_OURS:
            self.unknown_owner_attributes.add(attribute)
        return None

    def _container_added(self, holder: tuple[ClassInfo, str], added: Value) -> None:
        container = self._container(*holder)
        if added.kind is Kind.NONE:
            container.spoiled = True
            return
        added = added.but(loop_item=None, transfer=None, holder=None, parameter=None, moves_parameter=None)
        reading = self.function_info
        if self.generic_read and reading is not None and reading.owner is not None:
            previous = container.added_by_generic_read.get(reading)
            container.added_by_generic_read[reading] = added if previous is None else join(previous, added)
        else:
            container.added = added if container.added is None else join(container.added, added)

    def _container_mutation(self, func: cst.Attribute, receiver: Value, method: str, args: Args) -> None:
        """``x.append(v)``, ``x.extend(vs)``... where ``x`` may be a container kept on an object."""
        how, position = ADDING_METHODS[method]
        if receiver.kind not in (Kind.SEQUENCE, *_MAYBE_OURS):
            return
        holder = self._holder_of(func.value, receiver)
        if holder is None or len(args.positional) <= position:
            return
        given = args.positional[position]
        self._container_added(holder, given if how == "one" else self._element_of(given))

    def _note_method_call(self, receiver: Value, method: str, found: FunctionInfo | None) -> None:
        """A call ``receiver.method(...)``: counts towards the method's call sites, or makes it escape."""
        if found is None:
            if receiver.definition is None and receiver.kind in _MAYBE_OURS:
                self.unknown_receiver_methods.add(method)
        elif receiver.kind is Kind.CLASS:
            self.escaped_methods.add(found)  # ``Class.put(obj, x)``: ``self`` is unknown inside
        else:
            self.called_methods.add(found)

    def _filled_here(self, info: ClassInfo) -> bool:
        """Whether this analysis put something into a container kept on objects of ``info``, another module's class
        (a method read with a call's arguments appended to ``self.losses``)."""
        return info.node is None and any(
            key[0] is info and container.added is not None for key, container in self.containers.items())

    def _spoil_passed_containers(self, args: Args) -> None:
        """A container passed to code the analysis does not know may be filled there."""
        for value in (*args.positional, *args.keywords.values()):
            if value.holder is not None:
                self._container(*value.holder).spoiled = True  # type: ignore[misc]

    # -- the seal

    def _completely_called(self, method: FunctionInfo) -> bool:
        return (method in self.called_methods and method not in self.escaped_methods
                and method.name not in self.unknown_receiver_methods)

    def _seal_containers(self, later: list[FunctionInfo]) -> None:
        """Work out each container's elements, now that every call site of the file was read (``later``: the
        bodies still to read, which read containers; code nested in them is not read yet, so then none is known)."""
        self.containers_sealed = True
        if any(info in self.defines_nested for info in later):
            return
        for (info, attribute), container in self.containers.items():
            container.element = self._sealed_element(info, attribute, container)

    def _sealed_element(self, info: ClassInfo, attribute: str, container: Container) -> Value | None:
        if (container.spoiled or attribute in self.unknown_owner_attributes or info.bases or info.subclassed
                or info.unknown_bases):
            return None
        stored = info.attributes.get(attribute)
        if stored is not None and stored.kind is Kind.NN_MODULE and stored.element is None:
            parts = []  # an empty ``nn.ModuleList``: what is appended
        elif stored is None or stored.kind is not Kind.SEQUENCE or stored.open_ended or (
                stored.element is None and stored.items is None):
            return None  # not a list, or one whose elements are not known
        else:
            parts = [stored.element] if stored.element is not None else list(stored.items or ())
        if container.added is not None:
            parts.append(container.added)
        parts.extend(added for method, added in container.added_by_generic_read.items()
                     if not self._completely_called(method))
        if any(part.kind in (Kind.UNKNOWN, Kind.NONE) for part in parts):
            return None
        element = join_all(parts)
        return None if element is None or element.kind is Kind.UNKNOWN else element
