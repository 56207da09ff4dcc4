"""The facts the analysis records for the rules: what was converted, where, and what was known about it.

Rules read only these; they never walk the tree, so a new rule adds no traversal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import libcst as cst

from .values import Value


@dataclass(frozen=True, slots=True)
class CallSite:
    """The call through which a fact holds: a body read with that call's arguments found it, and reading it with
    its parameters unknown did not. A reader checks the finding there (``... (as evaluate is called at line 88)``)."""

    node: cst.Call
    callee: str  # the function's name, as the message says it
    #: the module the call is in: None for the file being analysed, else another module's path (its body was read)
    module: object | None = None


#: ``TensorToNumpy.via`` of a tensor written into a slice of a NumPy array (``ids[:, i] = predicted``)
WRITTEN_INTO_ARRAY = "setitem"


#: where a NumPy function's converted tensors are written: (argument, item) positions (argument: a position, or a
#: keyword's name; item None: the argument itself, else that item of a list or tuple display)
ConvertedArguments = tuple[tuple[int | str, int | None], ...]


@dataclass(frozen=True, slots=True)
class TensorToNumpy:
    """``t.numpy()``, or a NumPy function given a tensor (``np.asarray(t)``, ``np.exp(t)``, ``np.sum([t, u])``),
    or a tensor written into a slice of an array (``ids[:, i] = t``), which NumPy converts with
    ``Tensor.__array__``: ``t.numpy()`` again."""

    node: cst.Call | cst.Subscript
    #: "numpy" for the method, ``WRITTEN_INTO_ARRAY`` for a write into an array, else the NumPy function's
    #: qualified name
    via: str
    #: the tensor converted; for several (``np.stack([a, b])``), what may be true of any of them
    tensor: Value
    #: autograd state where the call runs: True, False (no_grad/inference_mode), or None (unknown).
    grad_enabled: bool | None
    #: for a NumPy function: where the converted tensors are written, for a fix to move or detach each; empty when
    #: one is not written out there (``np.stack(tensors)``)
    arguments: ConvertedArguments = ()
    #: the tensors were found in a list or tuple given to the function, not given themselves
    in_sequence: bool = False
    #: the call through which it holds, when only a body read with a caller's arguments found it
    through: CallSite | None = None


@dataclass(frozen=True, slots=True)
class NumpyToTensor:
    """``torch.tensor(a)``, ``torch.as_tensor(a)``, ``torch.from_numpy(a)``, ``torch.Tensor(a)``, ..."""

    node: cst.Call
    constructor: str  # qualified name, e.g. "torch.tensor"
    source: Value
    keywords: frozenset[str]
    #: the dtype asked for with ``dtype=`` (canonical name), "?" when given but unknown, None when not given.
    dtype: str | None
    device: Value | None
    #: inside an ``if``/conditional expression whose test mentions ``copy``: the copy is a decision.
    under_copy_test: bool
    #: the dtype a legacy constructor (``torch.FloatTensor``...) makes, None for the others.
    legacy_dtype: str | None = None
    #: whether the constructor makes the tensor on an accelerator (``torch.cuda.FloatTensor``): True, False, or
    #: None when it is one of several picked at run time (``alternatives``) that disagree.
    made_on_accelerator: bool | None = False
    #: ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``: the constructors ``Tensor`` may be.
    alternatives: tuple[str, ...] = ()
    #: the call through which it holds, when only a body read with a caller's arguments found it
    through: CallSite | None = None


@dataclass(frozen=True, slots=True)
class CollectedTransfer:
    """A per-item ``.to(device)``/``.cuda()`` inside a loop whose results are collected."""

    node: cst.Call  # the transfer call
    loop: cst.CSTNode  # the ``for`` statement or comprehension
    collected_by: str  # "append", "comprehension", "item assignment"
    #: ``torch.stack(<the comprehension>)`` when that is what consumes it
    stacked_by: cst.Call | None = None
    #: the call through which it holds, when only a body read with a caller's arguments found it
    through: CallSite | None = None


@dataclass(frozen=True, slots=True)
class HostReadBeforeSync:
    """A host read (``h.numpy()``, ``float(h)``, ``print(h)``, ``np.*(h)``) of a tensor whose non-blocking copy
    from a device may still be running: no sync on some path from the copy to here."""

    node: cst.Call  # the read
    via: str  # the method ("numpy", "item") or the qualified name of the function ("builtins.print")
    copy: cst.Call  # the ``.to(..., non_blocking=True)`` or ``.copy_(..., non_blocking=True)`` call
    source: Value  # the tensor copied
    #: the call through which it holds, when only a body read with a caller's arguments found it
    through: CallSite | None = None


@dataclass(slots=True)
class Facts:
    tensor_to_numpy: list[TensorToNumpy] = field(default_factory=list)
    numpy_to_tensor: list[NumpyToTensor] = field(default_factory=list)
    collected_transfers: list[CollectedTransfer] = field(default_factory=list)
    host_reads_before_sync: list[HostReadBeforeSync] = field(default_factory=list)
    #: conversions that made a float64 tensor out of NumPy's default float64, and those a dtype decision met.
    float64_conversions: dict[cst.Call, str] = field(default_factory=dict)  # call -> constructor qualname
    dtype_decided: set[cst.Call] = field(default_factory=set)
    #: conversions whose tensor went where a dtype may be chosen, or may not (``.to(*args)``, ``.to(unknown)``):
    #: not NumPy's default leaking (NPT004), not a known second copy either (NPT010)
    dtype_maybe_decided: set[cst.Call] = field(default_factory=set)
    #: those of ``float64_conversions`` that hold only through a call (``CallSite``)
    float64_through: dict[cst.Call, CallSite] = field(default_factory=dict)
    #: the file calls ``torch.set_default_dtype``: float64 may be what it wants (not where every call names a
    #: float32 type, ``set_default_tensor_type(torch.cuda.FloatTensor)``: ``keeps_float32_default``).
    sets_default_dtype: bool = False
    keeps_float32_default: bool = False
    #: modules of the project (relative paths) that change torch's default dtype or tensor type, this one too
    default_dtype_changed_in: tuple[str, ...] = ()
    #: those of them whose every call names a float32 type (``keeps_float32_default``)
    float32_default_set_in: tuple[str, ...] = ()
    #: the module is a test (``files.is_test_module``): float64 there is nearly always a reference on purpose
    in_test_module: bool = False
    #: the names the module binds to ``torch`` and ``numpy`` (``{"numpy": "np"}``), for fixes to write.
    module_names: dict[str, str] = field(default_factory=dict)
    #: what reading other modules' function bodies with this module's arguments found there: module -> its facts
    #: (``foreign.py``), reported in that module's file
    foreign: dict[object, Facts] = field(default_factory=dict)
    #: the facts ``absorb_call`` took, as they were before it named the call: each is taken once
    _called: set = field(default_factory=set, repr=False, compare=False)

    def note_float64(self, node: cst.Call, constructor: str) -> None:
        """A conversion that makes a float64 tensor from NumPy's default float64, found by the read being made."""
        self.float64_conversions[node] = constructor
        self.float64_through.pop(node, None)

    def dtypes_may_be_decided(self, tensors: list[Value]) -> None:
        """``tensors`` went where their dtype may be decided (cast, compared, fed to a float64 module): the float64
        conversions that made them are no longer NumPy's default leaking into torch."""
        for tensor in tensors:
            self.dtype_decided.update(tensor.float64_origins)

    def absorb(self, other: Facts) -> None:
        """Add what ``other`` recorded after what this one did (a method read ahead of its turn)."""
        self.tensor_to_numpy.extend(other.tensor_to_numpy)
        self.numpy_to_tensor.extend(other.numpy_to_tensor)
        self.collected_transfers.extend(other.collected_transfers)
        self.host_reads_before_sync.extend(other.host_reads_before_sync)
        for node, constructor in other.float64_conversions.items():
            if node not in other.float64_through:
                self.note_float64(node, constructor)
            elif node not in self.float64_conversions:
                self.float64_conversions[node] = constructor
                self.float64_through[node] = other.float64_through[node]
        if other.dtype_decided is not self.dtype_decided:
            self.dtype_decided.update(other.dtype_decided)
        if other.dtype_maybe_decided is not self.dtype_maybe_decided:
            self.dtype_maybe_decided.update(other.dtype_maybe_decided)
        self._absorb_default_setters(other)
        self.module_names.update(other.module_names)
        for module, facts in other.foreign.items():
            if module in self.foreign:
                self.foreign[module].absorb(facts)
            else:
                self.foreign[module] = facts

    def absorb_call(self, other: Facts, site: CallSite, outermost: bool = False) -> None:
        """What a body read with the arguments of the call at ``site`` recorded (``other``): each fact once, as
        holding through the innermost call that made it hold (one already named keeps its call), or through
        ``site`` itself where ``outermost`` says so."""
        taken = self._called
        for name in _LISTS:
            mine = getattr(self, name)
            for fact in getattr(other, name):
                plain = fact if fact.through is None else dataclasses.replace(fact, through=None)
                if plain in taken:
                    continue
                taken.add(plain)
                named = fact.through is not None and not outermost
                mine.append(fact if named else dataclasses.replace(fact, through=site))
        for node, constructor in other.float64_conversions.items():
            if node not in self.float64_conversions:
                self.float64_conversions[node] = constructor
                self.float64_through[node] = site if outermost else other.float64_through.get(node, site)
        if other.dtype_decided is not self.dtype_decided:
            self.dtype_decided.update(other.dtype_decided)
        if other.dtype_maybe_decided is not self.dtype_maybe_decided:
            self.dtype_maybe_decided.update(other.dtype_maybe_decided)
        self._absorb_default_setters(other)

    def _absorb_default_setters(self, other: Facts) -> None:
        if other.sets_default_dtype:
            self.note_default_setter(other.keeps_float32_default)

    def note_default_setter(self, keeps_float32: bool) -> None:
        """A call that sets torch's default dtype or tensor type (or several, ``keeps_float32`` where every one
        names a float32 type): the file keeps float32 only while every setter does."""
        self.keeps_float32_default = keeps_float32 and (self.keeps_float32_default or not self.sets_default_dtype)
        self.sets_default_dtype = True

    @property
    def may_want_float64(self) -> bool:
        """Whether the program may want float64 tensors: this file, or another module that runs with it, sets a
        default dtype or tensor type other than float32 (``sets_default_dtype``)."""
        return (self.sets_default_dtype and not self.keeps_float32_default) or any(
            module not in self.float32_default_set_in for module in self.default_dtype_changed_in)


_LISTS = ("tensor_to_numpy", "numpy_to_tensor", "collected_transfers", "host_reads_before_sync")
