"""NPT003 at run time: ``torch.tensor(ndarray)`` copied an array that ``torch.from_numpy``/``torch.as_tensor`` would
have shared, or the legacy ``torch.Tensor(ndarray)`` cast (and so copied) an array of another dtype.

The same exceptions as the static rule: a ``dtype=`` that changes the dtype, a ``device=`` off the CPU,
``requires_grad=True`` or ``pin_memory=True`` (copies on purpose), and arrays that sharing would mishandle (negative
strides, read-only, unaligned or byte-swapped arrays, memmaps: NPT008's business, or a copy is right).
"""

from __future__ import annotations

import numpy as np
import torch

from ..findings import AuditFinding, Observed, size, times

CODE = "NPT003"
NAME = "torch-tensor-copies-ndarray"

_torch_dtypes: dict[np.dtype, torch.dtype | None] = {}


def torch_dtype_of(dtype: np.dtype) -> torch.dtype | None:
    """The dtype ``torch.from_numpy`` gives an array of ``dtype`` (None: torch has no such dtype)."""
    if dtype not in _torch_dtypes:
        try:
            _torch_dtypes[dtype] = torch.from_numpy(np.empty(0, dtype=dtype)).dtype
        except TypeError:
            _torch_dtypes[dtype] = None
    return _torch_dtypes[dtype]


def shareable(array: np.ndarray) -> bool:
    """Whether ``torch.from_numpy(array)`` would share it safely."""
    flags = array.flags
    return (flags.writeable and flags.aligned and array.dtype.isnative and not isinstance(array, np.memmap)
            and all(stride >= 0 for stride in array.strides) and torch_dtype_of(array.dtype) is not None)


def on_cpu(device: object) -> bool:
    if device is None:
        return True
    try:
        return torch.device(device).type == "cpu"  # type: ignore[arg-type]
    except (RuntimeError, TypeError):
        return False


def tensor_copies(array: np.ndarray, dtype: object, device: object, requires_grad: object,
                  pin_memory: object) -> bool:
    """Whether ``torch.tensor(array, ...)`` made a copy that sharing would have avoided."""
    return (not requires_grad and not pin_memory and on_cpu(device) and shareable(array)
            and (dtype is None or dtype == torch_dtype_of(array.dtype)))


def legacy_casts(array: np.ndarray) -> torch.dtype | None:
    """The dtype ``torch.Tensor(array)`` cast ``array`` to, when it differs from the array's (None: it shared)."""
    made = torch.get_default_dtype()
    own = torch_dtype_of(array.dtype)
    return made if own is not None and own != made and shareable(array) else None


def describe(observed: Observed) -> AuditFinding:
    call, _ = observed.calls.most_common(1)[0]
    average = size(observed.nbytes / max(observed.count, 1))
    copied = f"{times(observed.count)}, {size(observed.nbytes)} in all, {average} each"
    if call == "torch.tensor":
        message = (f"torch.tensor() copied a NumPy array here ({copied}): torch.from_numpy() or "
                   "torch.as_tensor() shares its memory")
    else:  # 'torch.Tensor float64->float32'
        name, cast = call.split(" ")
        source, made = cast.split("->")
        message = (f"{name}() silently copied a {source} array into {made} here ({copied}): use "
                   f"torch.as_tensor(array, dtype=torch.{made}) to say so")
    return AuditFinding(CODE, message, observed.site, observed.count, observed.nbytes,
                        properties={"calls": dict(observed.calls)})
