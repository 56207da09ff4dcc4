"""Batches of arrays: stack_to_device and the pinned staging buffer it shares with the prefetcher."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from ._convert import (
    _TORCH_DTYPE_OF_NUMPY,
    Device,
    _as_ndarray,
    _check_dtype_argument,
    _check_dtype_supported,
    _host_numpy_dtype,
)


class _PinnedStaging:
    """A host buffer reused across host-to-device copies, pinned so the copies can be non-blocking.

    A non-blocking copy still reads the buffer after the host has moved on, so each copy out of it
    is followed by an event (``guard``) and the next ``view`` waits for that event before handing
    the memory out again. ``pin_memory=False`` exists so the reuse logic can be tested on a CPU.
    """

    def __init__(self, *, pin_memory: bool = True) -> None:
        self._pin_memory = pin_memory
        self._buffer: torch.Tensor | None = None
        self._last_copy_done: Any = None  # torch.cuda.Event of the last copy out of the buffer

    def view(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A tensor of `shape` and `dtype` over the buffer, once no copy reads the buffer any more."""
        if self._last_copy_done is not None:
            self._last_copy_done.synchronize()
            self._last_copy_done = None
        nbytes = math.prod(shape) * dtype.itemsize
        if self._buffer is None or self._buffer.numel() < nbytes:
            self._buffer = torch.empty(nbytes, dtype=torch.uint8, pin_memory=self._pin_memory)
        return self._buffer[:nbytes].view(dtype).view(shape)

    def guard(self, copy_done: Any) -> None:
        """Record the event that completes the copy just queued out of the buffer."""
        self._last_copy_done = copy_done


_staging_per_thread = threading.local()


def _staging_for(device: torch.device) -> _PinnedStaging:
    """This thread's staging buffer for `device`: threads never fill one another's buffer."""
    by_device = _staging_per_thread.__dict__.setdefault("by_device", {})
    index = device.index if device.index is not None else torch.cuda.current_device()
    return by_device.setdefault(index, _PinnedStaging())


def _checked_arrays(arrays: Iterable[np.ndarray]) -> list[np.ndarray]:
    checked = []
    supported: set[np.dtype] = set()
    for a in arrays:
        if type(a) is not np.ndarray:  # subclasses, masked arrays, numpy scalars, other types: the full check
            a = _as_ndarray(a, "stack_to_device")
        elif a.dtype not in supported:  # a plain array: its dtype is checked once per call, not once per array
            _check_dtype_supported(a.dtype, "stack_to_device")
            supported.add(a.dtype)
        checked.append(a)
    if not checked:
        raise ValueError("stack_to_device() needs at least one array")
    first = checked[0].shape
    for index, array in enumerate(checked):
        if array.shape != first:
            raise ValueError(
                f"stack_to_device() needs arrays of one shape: array {index} has shape {array.shape}, "
                f"array 0 has shape {first}"
            )
    return checked


def stack_to_device(
    arrays: Iterable[np.ndarray],
    device: Device,
    *,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Stack N same-shaped arrays into one (N, *shape) tensor on `device`, moving the data once.

    Shares: nothing; the result owns its memory and the arrays may be reused on return.
    Copies: each array once into the batch, casting in the same pass (numpy casting rules, like
    ``astype``); without ``dtype`` the batch has the arrays' common numpy dtype. On CUDA the arrays
    are stacked into a pinned staging buffer, reused from call to call on each thread, and the
    batch is copied to the device with ``non_blocking=True``; narrowing casts (float64 -> float32)
    happen on the host before the transfer, widening ones (uint8 -> float32) on the device after
    it. Dtypes numpy lacks (bfloat16) are cast by torch after stacking.
    Synchronizes: nothing with the device, unless this thread's previous copy out of the staging
    buffer is still running, in which case it waits for that copy only. The batch is used on the
    current stream, after the copy. On other accelerators the copy is blocking.

    Raises ValueError for an empty input or arrays of different shapes (naming the first array
    that differs), and TypeError as ``from_numpy`` does for dtypes torch cannot hold.
    """
    checked = _checked_arrays(arrays)
    _check_dtype_argument(dtype, "stack_to_device")
    target = torch.device(device)
    moves = target.type != "cpu"
    common = np.result_type(*{array.dtype for array in checked})  # a set: result_type takes at most 64
    host_dtype = _host_numpy_dtype(common, dtype, moves_to_device=moves)
    shape = (len(checked), *checked[0].shape)

    if target.type == "cuda":
        batch = _stack_through_pinned_staging(checked, shape, host_dtype, target)
    else:
        # numpy allocates the host batch: its large allocations get huge pages (FACTS.md 8).
        host = np.empty(shape, dtype=host_dtype)
        np.stack(checked, out=host, casting="unsafe")
        batch = torch.from_numpy(host).to(target)  # a no-op on the CPU
    # A no-op unless the cast was left to the device (widening) or to torch (bfloat16, ...).
    return batch if dtype is None else batch.to(dtype)


def _stack_through_pinned_staging(
    arrays: list[np.ndarray], shape: tuple[int, ...], host_dtype: np.dtype, device: torch.device
) -> torch.Tensor:
    staging = _staging_for(device)
    pinned = staging.view(shape, _TORCH_DTYPE_OF_NUMPY[host_dtype])
    np.stack(arrays, out=pinned.numpy(), casting="unsafe")
    batch = torch.empty(shape, dtype=pinned.dtype, device=device)
    batch.copy_(pinned, non_blocking=True)
    copy_done = torch.cuda.Event()
    copy_done.record(torch.cuda.current_stream(device))
    staging.guard(copy_done)
    return batch
