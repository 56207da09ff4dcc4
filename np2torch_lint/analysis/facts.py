"""The facts the analysis records for the rules: what was converted, where, and what was known about it.

Rules read only these; they never walk the tree, so a new rule adds no traversal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .values import Value


@dataclass(frozen=True, slots=True)
class TensorToNumpy:
    """``t.numpy()``, or a NumPy function given a tensor (``np.asarray(t)``, ``np.exp(t)``, ``np.sum([t, u])``),
    which converts it with ``Tensor.__array__``: ``t.numpy()`` again."""

    node: cst.Call
    via: str  # "numpy" for the method, else the NumPy function's qualified name
    #: the tensor converted; for several (``np.stack([a, b])``), what may be true of any of them
    tensor: Value
    #: autograd state where the call runs: True, False (no_grad/inference_mode), or None (unknown).
    grad_enabled: bool | None
    #: for a NumPy function: where the converted tensors are written, as (argument, item) positions (item None: the
    #: argument itself; else that item of a list or tuple display), for a fix to move or detach each; empty when
    #: one is not written out there (``np.stack(tensors)``)
    arguments: tuple[tuple[int, int | None], ...] = ()
    #: the tensors were found in a list or tuple given to the function, not given themselves
    in_sequence: bool = False


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


@dataclass(frozen=True, slots=True)
class CollectedTransfer:
    """A per-item ``.to(device)``/``.cuda()`` inside a loop whose results are collected."""

    node: cst.Call  # the transfer call
    loop: cst.CSTNode  # the ``for`` statement or comprehension
    collected_by: str  # "append", "comprehension", "item assignment"
    #: ``torch.stack(<the comprehension>)`` when that is what consumes it
    stacked_by: cst.Call | None = None


@dataclass(frozen=True, slots=True)
class HostReadBeforeSync:
    """A host read (``h.numpy()``, ``float(h)``, ``print(h)``, ``np.*(h)``) of a tensor whose non-blocking copy
    from a device may still be running: no sync on some path from the copy to here."""

    node: cst.Call  # the read
    via: str  # the method ("numpy", "item") or the qualified name of the function ("builtins.print")
    copy: cst.Call  # the ``.to(..., non_blocking=True)`` or ``.copy_(..., non_blocking=True)`` call
    source: Value  # the tensor copied


@dataclass(slots=True)
class Facts:
    tensor_to_numpy: list[TensorToNumpy] = field(default_factory=list)
    numpy_to_tensor: list[NumpyToTensor] = field(default_factory=list)
    collected_transfers: list[CollectedTransfer] = field(default_factory=list)
    host_reads_before_sync: list[HostReadBeforeSync] = field(default_factory=list)
    #: conversions that made a float64 tensor out of NumPy's default float64, and those a dtype decision met.
    float64_conversions: dict[cst.Call, str] = field(default_factory=dict)  # call -> constructor qualname
    dtype_decided: set[cst.Call] = field(default_factory=set)
    #: the file calls ``torch.set_default_dtype``: float64 may be what it wants.
    sets_default_dtype: bool = False
    #: modules of the project (relative paths) that change torch's default dtype or tensor type, this one too
    default_dtype_changed_in: tuple[str, ...] = ()
    #: the names the module binds to ``torch`` and ``numpy`` (``{"numpy": "np"}``), for fixes to write.
    module_names: dict[str, str] = field(default_factory=dict)

    def absorb(self, other: Facts) -> None:
        """Add what ``other`` recorded after what this one did (a method read ahead of its turn)."""
        self.tensor_to_numpy.extend(other.tensor_to_numpy)
        self.numpy_to_tensor.extend(other.numpy_to_tensor)
        self.collected_transfers.extend(other.collected_transfers)
        self.host_reads_before_sync.extend(other.host_reads_before_sync)
        self.float64_conversions.update(other.float64_conversions)
        if other.dtype_decided is not self.dtype_decided:
            self.dtype_decided.update(other.dtype_decided)
        self.sets_default_dtype = self.sets_default_dtype or other.sets_default_dtype
        self.module_names.update(other.module_names)
