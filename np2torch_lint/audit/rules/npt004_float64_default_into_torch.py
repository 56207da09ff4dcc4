"""NPT004 at run time: a float64 tensor made from NumPy data without a dtype decision meets float32.

A float64 tensor alone is no mistake (scientific code wants one); the evidence is the meeting: an operation that
takes it and a float32 (or float16, bfloat16) tensor and either promotes the result to float64 or raises a dtype
error (``mat1 and mat2 must have the same dtype``). The tensors made by a conversion without ``dtype=`` are tagged
with where they were made (``Float64Origins``, weak references: a tag dies with its tensor); what is computed from
them stays tagged while it stays float64, unless a call decides the dtype (``.double()``, ``.to(torch.float64)``,
``dtype=``). Following them takes a ``TorchFunctionMode`` (``MeetingWatch``), which the hooks enter only once a
tagged tensor exists: until then nothing is watched.

The finding is at the conversion, where the fix goes, and names where the tensor met float32.
"""

from __future__ import annotations

import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

import torch
from torch.overrides import TorchFunctionMode

from ..findings import AuditFinding, Observed, times
from ..sites import Site

CODE = "NPT004"
NAME = "float64-default-into-torch"
FIX = "pass dtype=torch.float32 or call .float() (or spell float64 out)"
DATA_LOADER_FIX = "make the dataset return float32 (.astype(np.float32)) or call .float() on the batch"

LOWER_FLOATS = frozenset({torch.float32, torch.float16, torch.bfloat16})
_TensorBase = torch._C.TensorBase
#: calls that decide the result's dtype whatever their arguments
_DECIDING = frozenset({_TensorBase.double, _TensorBase.float, _TensorBase.half, _TensorBase.bfloat16})


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a tagged tensor was made, and whether a DataLoader made it (collating the dataset's arrays)."""

    site: Site
    through_data_loading: bool = False


class Float64Origins:
    """float64 tensors made from NumPy data, by identity, each with its ``Origin``; an entry goes with its tensor."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[weakref.ref, Origin]] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def tag(self, tensor: torch.Tensor, origin: Origin) -> None:
        key = id(tensor)
        by_id = self._by_id

        def forget(ref: weakref.ref, key: int = key) -> None:
            entry = by_id.get(key)
            if entry is not None and entry[0] is ref:
                del by_id[key]

        by_id[key] = (weakref.ref(tensor, forget), origin)

    def origin_of(self, value: object) -> Origin | None:
        entry = self._by_id.get(id(value))
        if entry is None or entry[0]() is not value:
            return None
        return entry[1]

    def first_in(self, values: Iterable) -> Origin | None:
        """The origin of the first tagged value among ``values`` (a list or tuple's items included)."""
        by_id = self._by_id
        for value in values:
            entry = by_id.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
            if type(value) in (list, tuple):
                for item in value:
                    entry = by_id.get(id(item))
                    if entry is not None and entry[0]() is item:
                        return entry[1]
        return None


def unasked_float64() -> bool:
    """Whether a float64 tensor converted from NumPy data without ``dtype=`` is a dtype no one decided on: unless
    the program made float64 torch's default, which says it wants float64."""
    return torch.get_default_dtype() is not torch.float64


def decides_dtype(func: Callable, args: tuple, kwargs: dict) -> bool:
    """Whether the call picks its result's dtype itself: its result is not the tagged float64's doing."""
    if func in _DECIDING or kwargs.get("dtype") is not None:
        return True
    if any(isinstance(arg, torch.dtype) for arg in args[1:]):  # .to(torch.float64), as_tensor(x, torch.float64)
        return True
    if func is _TensorBase.to:
        return len(args) > 1 and isinstance(args[1], torch.Tensor)  # .to(other): other's dtype
    return func is _TensorBase.type and (len(args) > 1 or "dtype" in kwargs)


#: ``met(origin, "float32: promoted to float64", error or None)``
MetCallback = Callable[[Origin, str, "BaseException | None"], None]


class MeetingWatch(TorchFunctionMode):
    """Sees every torch call of its thread: where a tagged float64 tensor meets a lower-precision float tensor,
    calls ``met(origin, how, error)``; a float64 result of a tagged input is tagged in turn."""

    def __init__(self, origins: Float64Origins, met: MetCallback) -> None:
        super().__init__()
        self.origins = origins
        self.met = met

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if kwargs is None:
            kwargs = {}
        if not len(self.origins):
            return func(*args, **kwargs)
        origin = self.origins.first_in(args) or (self.origins.first_in(kwargs.values()) if kwargs else None)
        if origin is None:
            return func(*args, **kwargs)
        lower = _lower_float(args) or (_lower_float(kwargs.values()) if kwargs else None)
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            if lower is not None or "double" in str(error).lower():
                self.met(origin, f"{_name(lower)}: raised {type(error).__name__}", error)
            raise
        if lower is not None and _any_float64(result):
            self.met(origin, f"{_name(lower)}: promoted to float64", None)
        if not decides_dtype(func, args, kwargs):
            for item in (result if type(result) in (list, tuple) else (result,)):
                if (isinstance(item, torch.Tensor) and item.dtype is torch.float64
                        and self.origins.origin_of(item) is None):
                    self.origins.tag(item, origin)
        return result


def _lower_float(values: Iterable) -> torch.dtype | None:
    """The dtype of the first float32, float16 or bfloat16 tensor among ``values`` (a list or tuple's items
    included)."""
    for value in values:
        for item in (value if type(value) in (list, tuple) else (value,)):
            if isinstance(item, torch.Tensor) and item.dtype in LOWER_FLOATS:
                return item.dtype
    return None


def _name(dtype: torch.dtype | None) -> str:
    return "another dtype" if dtype is None else str(dtype).removeprefix("torch.")


def _any_float64(result: object) -> bool:
    items = result if type(result) in (list, tuple) else (result,)
    return any(isinstance(item, torch.Tensor) and item.dtype is torch.float64 for item in items)  # type: ignore


def note(origin: Origin) -> str:
    """What the audit adds to a dtype error that a tagged tensor caused."""
    fix = DATA_LOADER_FIX if origin.through_data_loading else FIX
    return f"np2torch-audit: {CODE}: this float64 tensor was made from NumPy data at {origin.site}: {fix}"


def describe(observed: Observed) -> AuditFinding:
    meetings: Counter = observed.related
    (where, how), count = meetings.most_common(1)[0]
    others = len(meetings) - 1
    elsewhere = f", and {others} other place{'s' if others > 1 else ''}" if others else ""
    if observed.through_data_loading:
        made = "a DataLoader batch collated here from float64 NumPy arrays"
        fix = DATA_LOADER_FIX
    else:
        made = "a float64 tensor made here from NumPy data without a dtype"
        fix = FIX
    partner, outcome = how.split(": ", 1)
    message = f"{made} met {partner} at {where} ({outcome}, {times(count)}{elsewhere}): {fix}"
    return AuditFinding(CODE, message, observed.site, observed.count, properties={"met": [
        {**site.as_dict(), "how": what, "count": n} for (site, what), n in meetings.most_common()]})
