"""Single tensors and arrays: to_numpy, from_numpy, to_numpy_async."""

from __future__ import annotations

import mmap
from typing import Any, Union

import numpy as np
import torch

Device = Union[torch.device, str, int]

# numpy dtype <-> torch dtype for everything torch.from_numpy accepts (native byte order).
# getattr: torch.uint16/32/64 only exist in newer releases.
_TORCH_DTYPE_OF_NUMPY: dict[np.dtype, torch.dtype] = {
    np.dtype(name): getattr(torch, name)
    for name in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
    if hasattr(torch, name)
}
_NUMPY_DTYPE_OF_TORCH: dict[torch.dtype, np.dtype] = {t: n for n, t in _TORCH_DTYPE_OF_NUMPY.items()}

# Torch dtypes numpy lacks, mapped to the smallest numpy dtype that holds every value exactly.
# The float8 formats with a 4- or 5-bit exponent fit float16 (checked over all 256 bit patterns);
# float8_e8m0fnu has an 8-bit exponent and needs float32, as bfloat16 does.
_UPCAST_FOR_NUMPY: dict[torch.dtype, torch.dtype] = {
    getattr(torch, name): wider
    for name, wider in (
        ("bfloat16", torch.float32),
        ("complex32", torch.complex64),
        ("float8_e4m3fn", torch.float16),
        ("float8_e5m2", torch.float16),
        ("float8_e4m3fnuz", torch.float16),
        ("float8_e5m2fnuz", torch.float16),
        ("float8_e8m0fnu", torch.float32),
    )
    if hasattr(torch, name)
}


def _type_name(obj: object) -> str:
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


# ---------------------------------------------------------------------------------------------
# Tensor -> ndarray


def _numpy_ready(t: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """`t` detached, dense, in a dtype numpy has and with no conj/neg bit, on t's own device.

    The flag says whether the result is new memory (True) or may still alias `t` (False).
    """
    if t.is_meta:
        raise TypeError("to_numpy() got a meta tensor, which has no data to convert")
    if t.is_nested:
        raise TypeError(
            "to_numpy() got a nested tensor, which has no single array shape; "
            "convert its components instead: [to_numpy(c) for c in t.unbind()]"
        )
    ready, fresh = t.detach(), False
    if ready.is_quantized:
        ready, fresh = ready.dequantize(), True
    if ready.layout != torch.strided:  # sparse COO/CSR/CSC/BSR/BSC, mkldnn
        ready, fresh = ready.to_dense(), True
    if ready.dtype not in _NUMPY_DTYPE_OF_TORCH:
        wider = _UPCAST_FOR_NUMPY.get(ready.dtype)
        if wider is None:
            raise TypeError(f"to_numpy() cannot convert a tensor of dtype {ready.dtype}: numpy has no such dtype")
        ready, fresh = ready.to(wider), True
    if ready.is_conj() or ready.is_neg():
        ready, fresh = ready.resolve_conj().resolve_neg(), True
    return ready, fresh


def _host_tensor(t: torch.Tensor, *, copy: bool) -> torch.Tensor:
    """A CPU tensor that `.numpy()` accepts; it aliases `t` only when neither `copy` nor grad forbid it."""
    host, fresh = _numpy_ready(t)
    if host.device.type != "cpu":
        host, fresh = host.cpu(), True  # a blocking copy: the data has landed when .cpu() returns
    # A write through an array that aliases a grad tensor would change it behind autograd's back.
    if not fresh and (copy or t.requires_grad):
        host = host.clone()
    return host


def to_numpy(t: torch.Tensor | np.ndarray, *, copy: bool = False) -> np.ndarray:
    """Convert a tensor to an ndarray, whatever its device, dtype, layout or autograd state.

    Shares: with ``copy=False``, a CPU tensor that does not require grad, is strided, has no
    conjugate/negative bit and has a dtype numpy knows gives an array that shares its memory
    (writes through one show in the other). A tensor that requires grad (a parameter, an
    activation) is always copied: ``to_numpy(p.detach())`` is how to ask for an alias of it.
    Copies: every other tensor, and every tensor when ``copy=True``. Sparse tensors are densified,
    quantized ones dequantized to float32, conjugate/negative views resolved. Dtypes numpy lacks
    are upcast to the smallest numpy dtype that holds every value exactly: bfloat16 and
    float8_e8m0fnu -> float32, the other float8 formats -> float16, complex32 -> complex64.
    Synchronizes: a tensor on an accelerator is copied to the host with a blocking copy, which
    waits for the work queued on the current stream; the returned array is always complete.

    An ndarray is returned unchanged (a copy of it when ``copy=True``). Anything else raises
    TypeError naming its type.
    """
    if isinstance(t, torch.Tensor):
        # Fast path for the common case: numpy(force=True) detaches, moves and resolves conj/neg
        # in one call, and shares memory only for a CPU tensor without those bits.
        if (
            not copy
            and not t.requires_grad
            and t.layout == torch.strided
            and t.dtype in _NUMPY_DTYPE_OF_TORCH
            and not t.is_meta
            and not t.is_nested
        ):
            return t.numpy(force=True)
        return _host_tensor(t, copy=copy).numpy()
    if isinstance(t, np.ndarray):
        return t.copy() if copy else t
    raise TypeError(f"to_numpy() expects a torch.Tensor or a numpy.ndarray, got {_type_name(t)}")


class PendingArray:
    """A device-to-host copy in flight. ``result()`` waits for it and returns the ndarray."""

    __slots__ = ("_host", "_copy_done", "_array")

    def __init__(self, host: torch.Tensor, copy_done: Any = None) -> None:
        self._host = host
        self._copy_done = copy_done  # a torch.cuda.Event recorded after the copy, or None when done
        self._array: np.ndarray | None = None

    def done(self) -> bool:
        """Whether the copy has completed, without waiting. Synchronizes nothing."""
        return self._copy_done is None or self._copy_done.query()

    def result(self) -> np.ndarray:
        """The array, once the copy has completed.

        Synchronizes: blocks the host on the event recorded after the copy (not on the whole
        device). Shares: each call returns the same array, which no tensor aliases.
        """
        if self._array is None:
            if self._copy_done is not None:
                # Pinned memory read before the copy lands holds stale bytes (FACTS.md section 6).
                self._copy_done.synchronize()
                self._copy_done = None
            self._array = self._host.numpy()
        return self._array


def to_numpy_async(t: torch.Tensor | np.ndarray) -> PendingArray:
    """Start copying a tensor to the host; ``.result()`` on the handle returns the ndarray.

    Copies: always; the array is a snapshot of ``t`` as of the work queued before this call, so
    later in-place updates of ``t`` (an optimizer step) do not show in it. Dtypes, layouts and
    bits are handled as in ``to_numpy`` (conversions run on t's device before the copy).
    Shares: nothing with ``t``.
    Synchronizes: for a CUDA tensor, nothing at call time: the copy goes into pinned host memory
    with ``non_blocking=True`` on the current stream, followed by an event; ``result()`` waits on
    that event only. For a CPU tensor (or an ndarray, which is copied) the copy is done before
    this returns; on other accelerators it is a blocking copy.
    """
    if isinstance(t, np.ndarray):
        return PendingArray(torch.from_numpy(t.copy()))
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"to_numpy_async() expects a torch.Tensor or a numpy.ndarray, got {_type_name(t)}")
    if t.device.type != "cuda":
        return PendingArray(_host_tensor(t, copy=True))
    source, _ = _numpy_ready(t)
    host = torch.empty_like(source, device="cpu", pin_memory=True)
    host.copy_(source, non_blocking=True)
    copy_done = torch.cuda.Event()
    copy_done.record(torch.cuda.current_stream(source.device))
    return PendingArray(host, copy_done)


# ---------------------------------------------------------------------------------------------
# ndarray -> tensor

_UNSUPPORTED_KIND_ADVICE = {
    "O": "torch has no object tensors; if it holds numbers, convert it first, e.g. "
    "np.asarray(a, dtype=np.float32), or np.stack(a) for an array of arrays",
    "U": "torch has no string tensors; map the strings to numbers first (for example class indices)",
    "S": "torch has no bytes tensors; decode or map them to numbers first",
    "M": "torch has no datetime tensors; convert to numbers first, e.g. a.astype(np.int64) "
    "(counts of the unit) or (a - a.min()) / np.timedelta64(1, 's') (float seconds)",
    "m": "torch has no timedelta tensors; convert to numbers first, e.g. a / np.timedelta64(1, 's')",
    "V": "torch has no structured tensors; select a field (a['x']) or use "
    "numpy.lib.recfunctions.structured_to_unstructured(a)",
}


def _check_dtype_supported(dtype: np.dtype, caller: str) -> None:
    """Raise TypeError, naming the dtype and the way out, for dtypes torch cannot hold."""
    advice = _UNSUPPORTED_KIND_ADVICE.get(dtype.kind)
    if advice is None and dtype.newbyteorder("=") not in _TORCH_DTYPE_OF_NUMPY:
        # longdouble / clongdouble, and uint16-64 on a torch too old to have them
        advice = "torch has no such dtype; convert it first, e.g. a.astype(np.float64)"
    if advice is not None:
        raise TypeError(f"{caller}() cannot convert an array of dtype {dtype}: {advice}")


def _as_ndarray(a: Any, caller: str) -> np.ndarray:
    """`a` as an ndarray torch can hold; TypeError for other types and unsupported dtypes."""
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError(
            f"{caller}() got a numpy.ma.MaskedArray, whose mask torch would silently drop; "
            "fill the masked values first with a.filled(value), or pass a.data to drop the mask"
        )
    if isinstance(a, np.ndarray):
        array = a
    elif isinstance(a, np.generic):
        array = np.asarray(a)  # a fresh writable 0-d array
    else:
        hint = " (it is already a tensor: use t.to(device, dtype))" if isinstance(a, torch.Tensor) else ""
        raise TypeError(f"{caller}() expects a numpy.ndarray or numpy scalar, got {_type_name(a)}{hint}")
    _check_dtype_supported(array.dtype, caller)
    return array


def _is_file_backed(array: np.ndarray) -> bool:
    obj: Any = array
    while obj is not None:
        if isinstance(obj, (np.memmap, mmap.mmap)):
            return True
        obj = getattr(obj, "base", None)
    return False


def _torch_can_share(array: np.ndarray) -> bool:
    """Whether torch.from_numpy may alias `array` safely (it would reject or misuse the others)."""
    flags = array.flags
    return (
        flags.writeable  # torch would hand out writable tensors over read-only memory
        and flags.aligned
        and array.dtype.isnative
        and all(stride >= 0 and stride % array.itemsize == 0 for stride in array.strides)
        # a tensor over a file writes to disk on every in-place op and pages in on every read
        and not _is_file_backed(array)
    )


def _transfer_dtype(source: torch.dtype, target: torch.dtype | None, *, moves_to_device: bool) -> torch.dtype:
    """The dtype data has while it is copied: cast before a transfer that shrinks, after one that widens.

    Casting float64 -> float32 on the host halves the bytes moved; widening uint8 -> float32 on
    the device moves a quarter of them. On the host the cast happens while copying either way.
    """
    if target is None or (moves_to_device and target.itemsize > source.itemsize):
        return source
    return target


def _host_numpy_dtype(source: np.dtype, target: torch.dtype | None, *, moves_to_device: bool) -> np.dtype:
    """The numpy dtype of the host-side copy; torch-only targets (bfloat16, ...) are cast by torch later."""
    native = source.newbyteorder("=")
    planned = _transfer_dtype(_TORCH_DTYPE_OF_NUMPY[native], target, moves_to_device=moves_to_device)
    return _NUMPY_DTYPE_OF_TORCH.get(planned, native)


def _check_dtype_argument(dtype: Any, caller: str) -> None:
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"{caller}() needs dtype to be a torch.dtype such as torch.float32, got {dtype!r}")


def from_numpy(
    a: np.ndarray | np.generic,
    *,
    dtype: torch.dtype | None = None,
    device: Device | None = None,
    copy: bool = False,
) -> torch.Tensor:
    """Convert an ndarray (or numpy scalar) to a tensor, sharing memory when that is safe.

    Shares: with ``copy=False``, no ``dtype`` change and a CPU result, the tensor aliases ``a``
    (as ``torch.from_numpy`` does) when ``a`` is writable, aligned, native-endian, has
    non-negative strides and is not a memmap. Non-contiguous views keep their strides.
    Copies: arrays torch rejects or would misuse: negative strides (``a[::-1]``, BGR->RGB flips),
    big-endian dtypes, read-only arrays (torch would return a writable tensor over them) and
    memmaps (in-place ops would write to the file); also every array when ``copy=True``, a dtype
    change or a ``device`` other than the CPU. A numpy scalar becomes a 0-d tensor.
    ``dtype`` is applied in the same pass as the copy, never through a float64 intermediate:
    numpy casts on the host (rounding as numpy does: float64 -> float16 is rounded once, where
    torch rounds twice through float32), torch casts to dtypes numpy lacks such as bfloat16.
    ``device`` moves the data once: narrowing casts happen before the transfer (fewer bytes),
    widening ones (uint8 -> float32) after it, on the device.
    Synchronizes: the host-to-device copy is blocking, so ``a`` may be modified as soon as this
    returns.

    Object, string, bytes, datetime, timedelta, structured and extended-precision dtypes, masked
    arrays and non-numpy inputs raise TypeError naming the dtype or type and what to do.
    """
    array = _as_ndarray(a, "from_numpy")
    _check_dtype_argument(dtype, "from_numpy")
    moves = device is not None and torch.device(device).type != "cpu"
    host_dtype = _host_numpy_dtype(array.dtype, dtype, moves_to_device=moves)
    torch_casts_later = dtype is not None and _TORCH_DTYPE_OF_NUMPY[host_dtype] != dtype
    if host_dtype != array.dtype or not _torch_can_share(array) or (copy and not moves and not torch_casts_later):
        # One pass that casts, byte-swaps and lays negative strides out forwards;
        # order="K" keeps the memory order (a transposed or NHWC layout stays as it is).
        array = array.astype(host_dtype, order="K")
    tensor = torch.from_numpy(array)
    if moves:
        tensor = tensor.to(device)  # the one host-to-device copy
    # A no-op unless the cast was left to the device (widening) or to torch (bfloat16, ...).
    return tensor if dtype is None else tensor.to(dtype)
