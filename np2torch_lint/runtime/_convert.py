"""Single tensors and arrays: to_numpy, from_numpy, to_numpy_async."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import _devices
from ._devices import Device, check_device_available
from ._dtypes import (
    _NUMPY_DTYPE_OF_TORCH,
    _TORCH_DTYPE_OF_NUMPY,
    _UPCAST_FOR_NUMPY,
    _as_ndarray,
    _check_copy_argument,
    _check_dtype_argument,
    _check_dtype_supported,
    _host_copy,
    _is_file_backed,
    _torch_dtype_of,
    _torch_view,
    _transfer_dtype,
    _type_name,
    _why_torch_cannot_view,
)

# Re-exported: the names other modules of the package imported from here before the split.
__all__ = [
    "Device", "PendingArray", "from_numpy", "to_numpy", "to_numpy_async",
    "_TORCH_DTYPE_OF_NUMPY", "_NUMPY_DTYPE_OF_TORCH", "_as_ndarray", "_check_dtype_argument",
    "_check_dtype_supported", "_transfer_dtype",
]


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


def _why_to_numpy_copies(t: torch.Tensor) -> str | None:
    """Why the array cannot alias `t` (what to_numpy(copy=False) refuses), or None when it can."""
    if t.requires_grad:
        return "it requires grad, so an alias would let writes bypass autograd; alias it with to_numpy(t.detach())"
    if t.device.type != "cpu":
        return f"it is on {t.device}, and an array lives in host memory"
    if t.is_quantized:
        return "it is quantized, and numpy gets the dequantized values"
    if t.layout != torch.strided:
        return f"its layout is {t.layout}, and numpy arrays are dense"
    if t.dtype not in _NUMPY_DTYPE_OF_TORCH:
        return f"numpy has no {t.dtype}"
    if t.is_conj() or t.is_neg():
        return "it is a conjugate or negative view, which numpy cannot express"
    return None


def _host_tensor(t: torch.Tensor, *, copy: bool) -> torch.Tensor:
    """A CPU tensor that `.numpy()` accepts; it aliases `t` only when neither `copy` nor grad forbid it."""
    host, fresh = _numpy_ready(t)
    if host.device.type != "cpu":
        host, fresh = host.cpu(), True  # a blocking copy: the data has landed when .cpu() returns
    # A write through an array that aliases a grad tensor would change it behind autograd's back.
    if not fresh and (copy or t.requires_grad):
        host = host.clone()
    return host


def to_numpy(t: torch.Tensor | np.ndarray, *, copy: bool | None = None) -> np.ndarray:
    """Convert a tensor to an ndarray, whatever its device, dtype, layout or autograd state.

    ``copy`` means what it means to ``np.asarray`` and ``torch.asarray``: None shares when it can,
    True always copies, False never copies and raises ValueError (saying why) where a copy is needed.
    Shares: a CPU tensor that does not require grad, is strided, has no conjugate/negative bit and
    has a dtype numpy knows gives an array that shares its memory (writes through one show in the
    other). A tensor that requires grad (a parameter, an activation) is copied: ``to_numpy(p.detach())``
    is how to ask for an alias of it.
    Copies: every other tensor, and every tensor when ``copy=True``. Sparse tensors are densified,
    quantized ones dequantized to float32, conjugate/negative views resolved. Dtypes numpy lacks
    are upcast to the smallest numpy dtype that holds every value exactly: bfloat16 and
    float8_e8m0fnu -> float32, the other float8 formats -> float16, complex32 -> complex64.
    Synchronizes: a tensor on an accelerator is copied to the host with a blocking copy, which
    waits for the work queued on the current stream. A pinned CPU tensor may be the target of a
    copy still in flight (``x.to("cpu", non_blocking=True)``), so once CUDA is initialized the current
    device is synchronized before such a tensor is read. The returned array is always complete.

    An ndarray is returned unchanged (a copy of it when ``copy=True``). Anything else raises
    TypeError naming its type.
    """
    if isinstance(t, torch.Tensor):
        if copy is not None and copy is not True and copy is not False:
            _check_copy_argument(copy, "to_numpy")
        if t.is_cpu:
            _devices.backend.wait_for_copies_into(t)
        if copy is False:
            reason = _why_to_numpy_copies(t)
            if reason is not None:
                raise ValueError(f"to_numpy(copy=False) cannot share the tensor's memory: {reason}")
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
        return _host_tensor(t, copy=bool(copy)).numpy()
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
                # pinned memory read before the copy lands holds stale bytes: .numpy() does not wait
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
    backend = _devices.backend
    device = backend.device_of(t)
    if device.type != "cuda":
        if device.type == "cpu":
            backend.wait_for_copies_into(t)
        return PendingArray(_host_tensor(t, copy=True))
    source, _ = _numpy_ready(t)
    host = backend.pinned_empty_like(source)
    backend.copy(host, source)
    copy_done = backend.new_event()
    copy_done.record(backend.current_stream(device))
    return PendingArray(host, copy_done)


# ---------------------------------------------------------------------------------------------
# ndarray -> tensor


def _why_from_numpy_copies(array: np.ndarray, dtype: torch.dtype | None, device: torch.device | None) -> str | None:
    """Why the tensor cannot alias `array` (what from_numpy(copy=False) refuses), or None when it can.

    Memmaps are aliased when asked: a tensor over the file is what ``copy=False`` requests.
    """
    if device is not None and device.type != "cpu":
        return f"the tensor goes to {device}"
    if dtype is not None and dtype != _torch_dtype_of(array):
        return f"it is {array.dtype} and the tensor is to be {dtype}"
    return _why_torch_cannot_view(array)


def from_numpy(
    a: np.ndarray | np.generic,
    *,
    dtype: torch.dtype | None = None,
    device: Device | None = None,
    copy: bool | None = None,
) -> torch.Tensor:
    """Convert an ndarray (or numpy scalar) to a tensor, sharing memory when that is safe.

    ``copy`` means what it means to ``torch.asarray``: None shares when it can, True always copies,
    False never copies and raises ValueError (saying why) where the tensor cannot alias ``a``.
    Shares: with no ``dtype`` change and a CPU result, the tensor aliases ``a`` (as
    ``torch.from_numpy`` does) when ``a`` is writable, aligned, native-endian, has non-negative
    strides and (unless ``copy=False``) is not a memmap. Non-contiguous views keep their strides.
    Copies: arrays torch rejects or would misuse: negative strides (``a[::-1]``, BGR->RGB flips),
    big-endian dtypes, read-only arrays (torch would return a writable tensor over them) and
    memmaps (in-place ops would write to the file); also every array when ``copy=True``, a dtype
    change or a ``device`` other than the CPU. A numpy scalar becomes a 0-d tensor.
    ``dtype`` is applied in the same pass as the copy, never through a float64 intermediate:
    torch casts (numpy casts to float16, which it rounds once where torch rounds twice, and reads
    the arrays torch cannot view), including to dtypes numpy lacks such as bfloat16.
    ``device`` moves the data once: narrowing casts (float64 -> float32 or bfloat16) happen on the
    host before the transfer, so fewer bytes cross; widening ones (uint8 -> float32) after it, on the device.
    Synchronizes: nothing with the device on CUDA: the host-to-device copy is queued on the current
    stream with ``non_blocking=True`` from pageable memory, which the driver has read when the call
    returns, so ``a`` may be modified at once; from pinned memory (where a non-blocking copy would
    still be reading ``a``) and on other accelerators the copy is blocking.

    Object, string, bytes, datetime, timedelta, structured and extended-precision dtypes, masked
    arrays and non-numpy inputs raise TypeError naming the dtype or type and what to do. A device
    this process cannot use (CUDA on a CPU-only torch) raises RuntimeError saying so.
    """
    array = _as_ndarray(a, "from_numpy")
    if dtype is not None and not isinstance(dtype, torch.dtype):
        _check_dtype_argument(dtype, "from_numpy")
    if copy is not None and copy is not True and copy is not False:
        _check_copy_argument(copy, "from_numpy")
    target = None if device is None else torch.device(device)
    moves = target is not None and target.type != "cpu"
    if moves:
        check_device_available(target, "from_numpy")
    if copy is False:
        reason = _why_from_numpy_copies(array, dtype, target)
        if reason is not None:
            raise ValueError(f"from_numpy(copy=False) cannot share the array's memory: {reason}")
    source = _torch_dtype_of(array)
    transfer = source if dtype is None else _transfer_dtype(source, dtype, moves_to_device=moves)
    view = _torch_view(array)
    # A copy made here is the result on the CPU, or the pageable source of the one transfer.
    fresh = (transfer != source or (copy is True and not moves)
             or (copy is None and (view is None or _is_file_backed(array))))
    tensor = _host_copy(array, transfer, view) if fresh else view
    if moves:
        backend = _devices.backend
        # From pinned memory a non-blocking copy reads `a` after the return; from pageable memory it does not.
        non_blocking = target.type == "cuda" and (fresh or not backend.is_pinned(tensor))
        tensor = backend.to_device(tensor, target, non_blocking=non_blocking)
    # Only when the cast was left to the device (widening).
    return tensor if dtype is None or tensor.dtype == dtype else tensor.to(dtype)
