"""What the analysis knows about one expression: the abstract value.

A value is small and immutable. Unknown facts are ``None``: the rules only speak when a fact is known, so an
unknown value never produces a finding (see ``docs/inference.md``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Callable, Iterable

import libcst as cst

from . import known_apis as api


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    NONE = "None"
    NUMBER = "number"  # a Python int/float/bool literal or result; ``dtype`` says which ("int", "float", "bool")
    STRING = "string"  # ``literal`` holds the text when it is a plain literal
    REF = "ref"  # an imported module, function, class or constant: ``qualname`` says which (or ``items``: one
    #              of these, chosen at run time)
    LOCAL = "local"  # the project's own code, not followed (a relative import): it shadows any import
    FUNCTION = "function"  # a function, method or lambda of this file: ``definition`` says which
    CLASS = "class"  # a class of this file: ``definition`` says which
    NDARRAY = "ndarray"
    NUMPY_VALUE = "numpy value"  # an ndarray or a NumPy scalar (``a[0]``, ``a.mean()``): same dtype, unknown rank
    TENSOR = "tensor"
    NN_MODULE = "nn.Module"
    DEVICE = "device"
    DATALOADER = "DataLoader"
    INSTANCE = "instance"  # an object of a modelled library class: ``qualname`` is the class (models.py)
    SEQUENCE = "sequence"  # a list, tuple, generator or other iterable: ``element`` is what iterating gives
    MAPPING = "mapping"  # a dict: ``keys`` and ``items`` when its keys are string literals; ``element`` its values
    OTHER = "other"  # known not to be an array or tensor


@dataclass(frozen=True, slots=True)
class ParameterMove:
    """A function returns its parameter ``item`` (or what it made from it) moved to a device: the one its parameter
    ``device`` names, or (None) one fixed in its body. Read from the body (``torch_semantics._tensor_move``); a call
    in a loop that passes the loop's item is then a per-item transfer (NPT005, ``summaries._helper_transfer``)."""

    #: the function whose body was read (``definitions.FunctionInfo``)
    function: object
    item: str
    device: str | None
    #: the item was of unknown kind where it moved: it counts only where the results are stacked
    item_kind_unknown: bool
    #: as ``Value.transfer_needs_stack``, for the device the body saw
    needs_stack: bool


@dataclass(frozen=True, slots=True)
class Value:
    kind: Kind
    qualname: str | None = None
    literal: str | None = None
    #: canonical dtype name ("float64", "float32", "int64", ...), or None when unknown.
    dtype: str | None = None
    #: a float64 that NumPy chose by default (``np.zeros(3)``), not one the code spelled out.
    float64_by_default: bool = False
    requires_grad: bool | None = None
    on_accelerator: bool | None = None
    #: for an nn.Module: whether calling it gives outputs that require grad (it has trainable parameters).
    has_params: bool | None = None
    #: what iterating gives (SEQUENCE), and the items of a literal display or tuple, when known.
    element: Value | None = None
    items: tuple[Value, ...] | None = None
    #: ``items`` are only the first items: the length is unknown (``gym``'s ``env.step()``).
    open_ended: bool = False
    #: the names of ``items``: a dict's string keys (MAPPING), or a named tuple's or a dataclass object's fields
    #: (``batch.state``, ``batch["state"]``)
    keys: tuple[str, ...] | None = None
    #: the conversion calls that made this tensor a float64 from a NumPy default, with no dtype decision since.
    float64_origins: frozenset[cst.Call] = frozenset()
    #: the loop (its id) whose item this value is, or is made from.
    loop_item: int | None = None
    #: the per-item ``.to(device)``/``.cuda()`` call that moved this value, when it was moved inside a loop.
    transfer: cst.Call | None = None
    #: ``transfer`` moved an item of unknown kind: it counts only where the moved items are stacked
    #: (``torch.stack``/``torch.cat`` take tensors), see ``loops._note_stacked``.
    transfer_needs_stack: bool = False
    #: ``transfer`` moved a host tensor made in the loop's body (not an item of what it iterates: a frame read from
    #: a file, a step's reward): it counts only where the moved value goes nowhere but into a list that is stacked
    #: (``calls._sequence_method``), since a value used on the device in the same step must move each step
    transfer_per_step: bool = False
    #: while a function's body is read: (the function, a parameter's name) when this value is that parameter or is
    #: made from it as a loop's item is (``loop_item``); and the move of that parameter to a device it holds.
    parameter: tuple[object, str] | None = None
    moves_parameter: ParameterMove | None = None
    #: for an ndarray: whether it may have a negative stride (``a[::-1]``, ``np.flip``), which torch rejects.
    negative_strides: bool | None = None
    #: for an ndarray: whether it may be read-only (``np.broadcast_to``, a memmap opened "r").
    read_only: bool | None = None
    #: for a host tensor: the ``non_blocking=True`` device-to-host copy that made it, until a sync (NPT007).
    pending_copy: cst.Call | None = None
    #: what the value has of an accelerator (being on one, a device naming one, a pending copy from one) holds only
    #: where this test is true: ``if torch.cuda.is_available(): x = x.cuda()`` (``control_flow.device_test``);
    #: where the same test is false, it has none of it
    device_test: str | None = None
    #: what the file says of a function, class or object of its own (``definitions.FunctionInfo``/``ClassInfo``).
    definition: object | None = None
    #: for a wrapper (a ``gym.Wrapper``, or an object of a class of the file derived from one): the object it was
    #: built around, whose methods its own delegate to (``models.py``: ``wraps=N``, the ``wrapped`` kind).
    wrapped: Value | None = None
    #: for a list or deque kept on an object of a class of this file: (the class, the attribute), so that what
    #: is put into it through any name reaches what the attribute holds (``containers.py``).
    holder: tuple[object, str] | None = None
    #: for a value not known as a whole: what unpacking it into exactly that many names gives (old gym's
    #: ``env.reset()`` is the observation, gym >= 0.26's is ``(observation, info)``: ``s, _ = env.reset()``
    #: says which; ``models.py``: ``or-item=N``).
    unpacked: tuple[Value, ...] | None = None
    #: for a value two paths made differently (an object of one class or of another, ``(opdict, visdict)`` or
    #: ``opdict``): what each path made. Its kind stays UNKNOWN, so that nothing reads it as either; attribute
    #: lookups, subscripts, method calls and unpacking read each choice and join what they give
    #: (``expressions``, ``calls``, ``statements``).
    choices: tuple[Value, ...] | None = None

    def but(self, **changes: object) -> Value:
        """A copy with ``changes`` made (``dataclasses.replace``, only faster: see ``_copy_with_changes``)."""
        if not _FIELDS.issuperset(changes):
            raise TypeError(f"Value has no field {sorted(set(changes) - _FIELDS)}")
        return _copy_with_changes(self, changes)

    @property
    def is_numpy(self) -> bool:
        return self.kind is Kind.NDARRAY or self.kind is Kind.NUMPY_VALUE


def _compiled_copy_with_changes() -> Callable[[Value, dict[str, object]], Value]:
    """A function that copies a value, taking the fields in ``changes`` from there, and writes each slot directly.

    ``dataclasses.replace`` goes through ``__init__`` and a frozen class's ``object.__setattr__`` per field: about
    13 us a copy, and the analysis makes about 130 copies per file. Generated once from the fields, as dataclasses
    makes ``__init__``, this takes about 3 us."""
    names = [each.name for each in dataclasses.fields(Value)]
    source = "\n".join([
        "def copy_with_changes(value, changes):",
        "    new = make(Value)",
        "    given = changes.get",
        *(f"    set_{name}(new, given({name!r}, value.{name}))" for name in names),
        "    return new",
    ])
    namespace: dict[str, object] = {"make": object.__new__, "Value": Value}
    namespace.update((f"set_{name}", getattr(Value, name).__set__) for name in names)
    exec(source, namespace)  # our own text, made from the field names
    return namespace["copy_with_changes"]  # type: ignore[return-value]


_FIELDS = frozenset(each.name for each in dataclasses.fields(Value))
_copy_with_changes = _compiled_copy_with_changes()

UNKNOWN = Value(Kind.UNKNOWN)
NONE = Value(Kind.NONE)
OTHER = Value(Kind.OTHER)
LOCAL = Value(Kind.LOCAL)


def ref(qualname: str) -> Value:
    return Value(Kind.REF, qualname=qualname)


def member(owner: Value, name: str) -> Value:
    """``owner.name`` for an imported module or class (or for each of several, chosen at run time)."""
    if owner.items is not None:
        return Value(Kind.REF, items=tuple(member(choice, name) for choice in owner.items))
    qualname = f"{owner.qualname}.{name}"
    return ref(api.REMOVED_NUMPY_ALIASES.get(qualname, qualname))


#: the most values a sequence remembers of what it holds, counted as a tree through nested sequences (a value held
#: twice counts twice). ``a = (a, a)`` repeated doubles that tree, and every walk over it (joins, loop items,
#: summaries) with it: past the bound a sequence forgets its items (keeping its element when that fits), so the
#: cost stays linear in the file.
MAX_REMEMBERED = 64


def sequence(items: tuple[Value, ...], element: Value | None = None, keys: tuple[str, ...] | None = None,
             kind: Kind = Kind.SEQUENCE) -> Value:
    """A list or tuple of these items (``element``: what iterating gives; ``keys``: their names, for a named tuple,
    or a dict of ``kind`` MAPPING), as much of it as fits the bound."""
    if _remembers_more_than(MAX_REMEMBERED, items):
        fits = element is not None and not _remembers_more_than(MAX_REMEMBERED, (element,))
        return Value(kind, element=element if fits else None)
    return Value(kind, items=items, element=element, keys=keys)


def parts_of(value: Value) -> tuple[Value, ...]:
    """What a value holds, as far as known: its items, or (known only by what iterating gives) its element."""
    return value.items if value.items is not None else () if value.element is None else (value.element,)


def _remembers_more_than(bound: int, values: tuple[Value, ...]) -> bool:
    """Whether these values hold more than ``bound`` values through their items (or, for a sequence known only by
    what iterating gives, its element), walked no further than the bound."""
    stack = list(values)
    count = len(stack)
    while stack and count <= bound:
        value = stack.pop()
        parts = parts_of(value)
        count += len(parts)
        stack.extend(parts)
    return count > bound


def either(a: bool | None, b: bool | None) -> bool | None:
    """Join two "may be" facts: true if either path makes it true, false only if both say false."""
    if a or b:
        return True
    if a is False and b is False:
        return False
    return None


def join(a: Value, b: Value) -> Value:
    """The value a name has after two control-flow paths meet."""
    if a is b or a == b:
        return a
    if a.kind is Kind.NONE:  # ``x = None`` then ``if ...: x = tensor``: a tensor or nothing
        return b
    if b.kind is Kind.NONE:
        return a
    if a.choices is not None or b.choices is not None or _made_differently(a, b):
        return _one_of(a, b)
    if a.kind is not b.kind:
        for either_item, other in ((a, b), (b, a)):
            if either_item.unpacked is not None and either_item.kind is Kind.UNKNOWN:
                # ``state = env.reset()`` (old gym's observation, or gym >= 0.26's ``(observation, info)``) before
                # the loop and ``state = next_state`` in it: the other path says which the program's name holds
                same = next((item for item in either_item.unpacked if item.kind is other.kind), None)
                if same is not None:
                    return join(same, other)
        if {a.kind, b.kind} == {Kind.NUMBER, Kind.NUMPY_VALUE}:
            # ``0.0`` on one path, ``np.sqrt(5)`` on the other (or both in one list, ``[1, 1 / phi, phi]``): Python
            # numbers are weak in NumPy's and torch's promotion, so what converts it is what the NumPy scalar says
            return a if a.kind is Kind.NUMPY_VALUE else b
        if Kind.TENSOR in (a.kind, b.kind) and (Kind.UNKNOWN in (a.kind, b.kind) or Kind.NUMBER in (a.kind, b.kind)):
            # (a number on one path: ``loss_melody = 0`` while the melody is not trained yet, a loss tensor after)
            return _maybe_tensor(*((a, b) if a.kind is Kind.TENSOR else (b, a)))
        if Kind.UNKNOWN in (a.kind, b.kind) and Kind.NN_MODULE in (a.kind, b.kind):
            return _maybe_module(a if a.kind is Kind.NN_MODULE else b)
        return UNKNOWN
    if a.kind is Kind.UNKNOWN and b.kind is Kind.UNKNOWN and (a.on_accelerator or b.on_accelerator):
        # what an unknown network gave from tensors on an accelerator on one path (``_placed_like_inputs``), and
        # from host tensors on the other (``if gpu: out = net(x.cuda()) else: out = net(x)``): where it is used as
        # a tensor it may be on the accelerator, under that path's device test
        return Value(Kind.UNKNOWN, on_accelerator=True, device_test=_joined_device_test(a, b),
                     loop_item=_joined_loop_item(a, b))
    if a.kind is Kind.REF and a.qualname != b.qualname:
        # ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``: one of these, chosen at run time
        choices = tuple(dict.fromkeys((*(a.items or (a,)), *(b.items or (b,)))))
        return Value(Kind.REF, items=choices) if len(choices) <= _MAX_CHOICES else UNKNOWN
    if a.kind is Kind.UNKNOWN or (a.qualname != b.qualname and a.kind is not Kind.NN_MODULE):
        return UNKNOWN
    element = a.element if b.element is None else b.element if a.element is None else _join_elements(
        a.element, b.element)
    if a.kind is Kind.MAPPING and a.keys != b.keys and None not in (a.keys, b.keys, a.items, b.items):
        return _joined_dicts(a, b, element)
    return Value(
        a.kind,
        qualname=a.qualname if a.qualname == b.qualname else None,
        literal=a.literal if a.literal == b.literal else None,
        dtype=a.dtype if a.dtype == b.dtype else None,
        float64_by_default=a.float64_by_default and b.float64_by_default,
        requires_grad=either(a.requires_grad, b.requires_grad),
        on_accelerator=either(a.on_accelerator, b.on_accelerator),
        has_params=either(a.has_params, b.has_params),
        element=element,
        items=_joined_items(a, b) if a.keys == b.keys else None,
        open_ended=a.open_ended if a.open_ended == b.open_ended else False,
        keys=a.keys if a.keys == b.keys else None,
        float64_origins=a.float64_origins | b.float64_origins,
        loop_item=_joined_loop_item(a, b),
        **_joined_transfer(a, b),
        parameter=a.parameter if a.parameter == b.parameter else None,
        moves_parameter=a.moves_parameter if a.moves_parameter == b.moves_parameter else None,
        negative_strides=either(a.negative_strides, b.negative_strides),
        read_only=either(a.read_only, b.read_only),
        # pending if pending on any path
        pending_copy=a.pending_copy if a.pending_copy is not None else b.pending_copy,
        device_test=_joined_device_test(a, b),
        definition=a.definition if a.definition is b.definition else None,
        wrapped=None if a.wrapped is None or b.wrapped is None else join(a.wrapped, b.wrapped),
        holder=a.holder if a.holder == b.holder else None,
    )


def keyed(value: Value, key: str) -> Value | None:
    """The item named ``key`` of a dict or record (``outputs["loss"]``, ``batch.state``), when known."""
    if value.keys is None or value.items is None or key not in value.keys:
        return None
    return value.items[value.keys.index(key)]


def with_key(value: Value, key: str, item: Value) -> Value:
    """A dict after ``d[key] = item``: that key holds ``item`` now. A dict of unknown keys (``decompose(code)``)
    becomes one whose other keys are unknown (open-ended): ``d[key]`` is then ``item``, any other key any value."""
    element = item if value.element is None else join(value.element, item)
    if value.keys is None or value.items is None:
        if value.kind is not Kind.MAPPING or value.keys is not None:
            return value.but(element=element)
        return sequence((item,), element, (key,), value.kind).but(open_ended=True)
    if key in value.keys:
        items = list(value.items)
        items[value.keys.index(key)] = item
        element = join_all(items) if not value.open_ended else element
        return sequence(tuple(items), element, value.keys, value.kind).but(open_ended=value.open_ended)
    return sequence((*value.items, item), element, (*value.keys, key), value.kind).but(open_ended=value.open_ended)


def has_a_device_fact(value: Value) -> bool:
    """Whether a value has something of an accelerator that a device test may decide (``Value.device_test``)."""
    return value.on_accelerator is True or value.pending_copy is not None


def _joined_device_test(a: Value, b: Value) -> str | None:
    """Two paths hold what they have of an accelerator only where one test is true: so does the join; a path with
    nothing of one (on the host, or not known to be on one) adds no condition."""
    if a.device_test == b.device_test:
        return a.device_test
    if a.device_test is None and not has_a_device_fact(a):
        return b.device_test
    if b.device_test is None and not has_a_device_fact(b):
        return a.device_test
    return None


def device_test_of(values: Iterable[Value]) -> str | None:
    """The test under which what any of ``values`` has of an accelerator holds, when they all agree (a result made
    from them has it only then): None when one holds without a test, or two hold under different tests."""
    found = None
    for value in values:
        if has_a_device_fact(value):
            if value.device_test is None or (found is not None and found != value.device_test):
                return None
            found = value.device_test
    return found


#: kinds of values whose members the analysis reads: two paths that made such values differently keep both
_STRUCTURED = frozenset({Kind.INSTANCE, Kind.NN_MODULE, Kind.SEQUENCE, Kind.MAPPING})


def _made_differently(a: Value, b: Value) -> bool:
    """Objects of two classes (or two objects a construction specialised), or a structured value and another
    known one: ``_one_of`` keeps both."""
    if a.kind is Kind.UNKNOWN or b.kind is Kind.UNKNOWN:
        return False
    if a.kind is not b.kind:
        return a.kind in _STRUCTURED or b.kind in _STRUCTURED
    return a.kind in (Kind.INSTANCE, Kind.NN_MODULE, Kind.CLASS) and a.definition is not None and (
        b.definition is not None and a.definition is not b.definition)


def _one_of(a: Value, b: Value) -> Value:
    """The value two paths made differently: each of them (``Value.choices``), unknown where there are too many or
    one is unknown."""
    choices: list[Value] = []
    for value in (*(a.choices or (a,)), *(b.choices or (b,))):
        if value.kind is Kind.UNKNOWN and value.choices is None:
            return UNKNOWN
        for index, known in enumerate(choices):
            if value is known or value == known:
                break
            if value.kind is known.kind and not _made_differently(value, known):
                # the same class's object on both paths, moved on one (``if cuda: model.cuda()``): one choice
                choices[index] = join(known, value)
                break
        else:
            choices.append(value)
    if len(choices) > _MAX_CHOICES:
        return UNKNOWN
    return Value(Kind.UNKNOWN, choices=tuple(choices))


def _joined_dicts(a: Value, b: Value, element: Value | None) -> Value:
    """Two dicts of different keys (a key set on one path only): each key holds what it holds where it is set (a
    closed dict without it raises KeyError), joined with the other dict's values where that one is open-ended."""
    keys = tuple(dict.fromkeys((*a.keys, *b.keys)))

    def held(value: Value, key: str) -> Value | None:
        found = keyed(value, key)
        return found if found is not None else value.element if value.open_ended else None

    items = []
    for key in keys:
        found = [item for item in (held(a, key), held(b, key)) if item is not None]
        items.append(join(*found) if len(found) == 2 else found[0] if found else UNKNOWN)
    return sequence(tuple(items), element, keys, Kind.MAPPING).but(open_ended=a.open_ended or b.open_ended)


def _join_elements(a: Value, b: Value) -> Value:
    """What a list may hold after two paths: a per-item transfer appended on one of them (waiting for the list to
    be stacked, ``loops._note_collected``) stays on the element."""
    joined = join(a, b)
    if joined.transfer is None and joined.kind is Kind.TENSOR and (a.transfer is None) != (b.transfer is None):
        return joined.but(transfer=a.transfer or b.transfer)
    return joined


def _joined_items(a: Value, b: Value) -> tuple[Value, ...] | None:
    """Two tuples of one length (``(s, a, r)`` made on two paths) join item by item; otherwise unknown."""
    if a.items == b.items:
        return a.items
    if a.items is None or b.items is None or len(a.items) != len(b.items) or a.open_ended != b.open_ended:
        return None
    return tuple(join(x, y) for x, y in zip(a.items, b.items))


_MAX_CHOICES = 4
_NO_TRANSFER: dict[str, object] = {"transfer": None, "transfer_needs_stack": False, "transfer_per_step": False}


def _maybe_tensor(tensor: Value, other: Value) -> Value:
    """An unknown value (or a number) on one path and a tensor on the other (``if cuda: batch = batch.cuda()``):
    where the program uses it as a tensor, what may be true of the tensor path may be true; nothing else is known. Its
    float64 conversions stay, so that a dtype chosen on the join (``if u is None: u = tensor(a)`` then
    ``u.float()``) decides for them; so does a per-item transfer of the loop's item both paths made it from."""
    made = Value(Kind.TENSOR, requires_grad=True if tensor.requires_grad else None,
                 on_accelerator=True if tensor.on_accelerator else None,
                 device_test=tensor.device_test if tensor.on_accelerator else None,
                 float64_origins=tensor.float64_origins)
    if tensor.transfer is not None and tensor.loop_item is not None and tensor.loop_item == other.loop_item:
        made = made.but(loop_item=tensor.loop_item, **_joined_transfer(tensor, other))
    return made


def _joined_transfer(a: Value, b: Value) -> dict[str, object]:
    """The per-item transfer of a join: one both paths made, or one path's of the loop's item both paths hold
    (``if on_cpu: img = transform(x)`` / ``else: img = transform(x).cuda()``: each item moved on that path)."""
    if a.transfer is None and b.transfer is None and not (a.transfer_needs_stack or b.transfer_needs_stack):
        return _NO_TRANSFER  # (most joins: one dict for them all)
    if a.transfer is b.transfer:
        return {"transfer": a.transfer, "transfer_needs_stack": a.transfer_needs_stack or b.transfer_needs_stack,
                "transfer_per_step": a.transfer_per_step and b.transfer_per_step}
    # (two paths moved it by different calls, ``losses.append(torch.tensor(0).cuda())`` in two branches: it may have
    # been moved by either, and one of them is kept, as a value holds one transfer)
    if a.transfer is not None and b.transfer is not None:
        moved = a if a.loop_item == b.loop_item else None
    else:
        moved = a if b.transfer is None else b
    if moved is None or _joined_loop_item(a, b) != moved.loop_item:
        return {"transfer": None, "transfer_needs_stack": a.transfer_needs_stack or b.transfer_needs_stack}
    return {"transfer": moved.transfer, "transfer_needs_stack": moved.transfer_needs_stack,
            "transfer_per_step": moved.transfer_per_step}


def _joined_loop_item(a: Value, b: Value) -> int | None:
    """The loop whose item a join is: both paths', or the step's where one path moved a value it made this step and
    the other made one on the host (``if cuda: r = torch.cuda.FloatTensor(r)`` / ``else: r = torch.FloatTensor(r)``:
    each step's value moved on that path)."""
    if a.loop_item == b.loop_item:
        return a.loop_item
    for moved, other in ((a, b), (b, a)):
        if (moved.transfer_per_step and other.transfer is None and other.loop_item is None
                and other.on_accelerator is False):
            return moved.loop_item
    return None


def _maybe_module(module: Value) -> Value:
    """An unknown value on one path and a module on the other (``if use_cuda: model.cuda()``, which only a module
    does in place): where the program uses it as a module, it may be where the module path put it."""
    return Value(Kind.NN_MODULE, on_accelerator=True if module.on_accelerator else None,
                 device_test=module.device_test if module.on_accelerator else None)


def join_all(values: list[Value]) -> Value | None:
    result: Value | None = None
    for value in values:
        result = value if result is None else join(result, value)
    return result


def either_all(flags: Iterable[bool | None]) -> bool | None:
    flags = list(flags)
    if any(flags):
        return True
    if flags and all(flag is False for flag in flags):
        return False
    return None


def bool_literal(value: Value | None) -> bool | None:
    if value is not None and value.kind is Kind.NUMBER and value.dtype == "bool" and value.literal:
        return value.literal == "True"
    return None


def held_by_module(owner: Value, value: Value) -> Value:
    """``owner.x``, ``value`` as the class assigned it, for what was done to the module since: a submodule, parameter
    or buffer moves with it (``model.to(device)``), and is frozen with it (``model.requires_grad_(False)``)."""
    if owner.kind is not Kind.NN_MODULE or value.kind not in (Kind.NN_MODULE, Kind.TENSOR):
        return value
    if value.kind is Kind.NN_MODULE and owner.on_accelerator and not value.on_accelerator:
        # ``model.cuda()`` moved every submodule: ``self.deconv1(x)`` in its ``forward`` computes there
        value = value.but(on_accelerator=True, device_test=owner.device_test)
    elif value.on_accelerator is False and owner.on_accelerator is not False:
        value = value.but(on_accelerator=None)  # the module may have been moved anywhere
    if owner.has_params is False and value.kind is Kind.NN_MODULE:
        value = value.but(has_params=False)
    elif owner.has_params is False and value.requires_grad:
        value = value.but(requires_grad=None)  # a parameter, frozen with its module, or a tensor kept there
    return value
