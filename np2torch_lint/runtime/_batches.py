"""Batches of arrays: stack_to_device, through the pinned staging pool of its thread and device."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch

from . import _devices
from ._devices import Device, check_device_available, resolved
from ._dtypes import (
    _NUMPY_DTYPE_OF_TORCH,
    _TORCH_DTYPE_OF_NUMPY,
    _as_ndarray,
    _check_dtype_argument,
    _check_dtype_supported,
    _transfer_dtype,
)
from ._staging import _PinnedStaging, staging_pool_for

__all__ = ["stack_to_device", "_PinnedStaging"]


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


def _stack_on_host(arrays: list[np.ndarray], shape: tuple[int, ...], common: np.dtype,
                   transfer: torch.dtype, out: torch.Tensor | None = None) -> torch.Tensor:
    """The arrays stacked into `out` (new host memory when None) as `transfer`, casting while stacking."""
    numpy_dtype = _NUMPY_DTYPE_OF_TORCH.get(transfer)
    if numpy_dtype is not None:
        # numpy allocates a new host batch: its large allocations get huge pages, torch's do not
        host = torch.from_numpy(np.empty(shape, dtype=numpy_dtype)) if out is None else out
        np.stack(arrays, out=host.numpy(), casting="unsafe")
        return host
    # A dtype numpy lacks (bfloat16, float8): stacked in the arrays' dtype, then cast by torch on the host.
    stacked = torch.from_numpy(np.stack(arrays).astype(common, copy=False))
    return stacked.to(transfer) if out is None else out.copy_(stacked)


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
    are stacked straight into a pinned staging buffer and the batch is copied to the device with
    ``non_blocking=True`` on the current stream. Narrowing casts (float64 -> float32, bfloat16)
    happen on the host before the transfer, so fewer bytes cross; widening ones (uint8 -> float32)
    on the device after it. Dtypes numpy lacks (bfloat16) are cast by torch on the host.
    Synchronizes: nothing with the device. Each thread keeps up to four staging buffers per device,
    and a call takes one whose last copy is done, so several calls in one step (images, labels)
    never wait for each other; only when all four are still in flight does the host wait, for the
    oldest copy. The batch is used on the current stream, after the copy. On other accelerators the
    copy is blocking.

    Raises ValueError for an empty input or arrays of different shapes (naming the first array
    that differs), TypeError as ``from_numpy`` does for dtypes torch cannot hold, and RuntimeError
    for a device this process cannot use.
    """
    checked = _checked_arrays(arrays)
    _check_dtype_argument(dtype, "stack_to_device")
    target = torch.device(device)
    moves = target.type != "cpu"
    if moves:
        check_device_available(target, "stack_to_device")
    common = np.result_type(*{array.dtype for array in checked})  # a set: result_type takes at most 64
    common = np.dtype(common.newbyteorder("=").str)  # native order, and the type numbers torch knows
    transfer = _transfer_dtype(_TORCH_DTYPE_OF_NUMPY[common], dtype, moves_to_device=moves)
    shape = (len(checked), *checked[0].shape)

    if target.type == "cuda":
        batch = _stack_through_pinned_staging(checked, shape, common, transfer, resolved(target))
    else:
        batch = _stack_on_host(checked, shape, common, transfer)
        if moves:
            batch = _devices.backend.to_device(batch, target, non_blocking=False)
    # A no-op unless the cast was left to the device (widening).
    return batch if dtype is None else batch.to(dtype)


def _stack_through_pinned_staging(arrays: list[np.ndarray], shape: tuple[int, ...], common: np.dtype,
                                  transfer: torch.dtype, device: torch.device) -> torch.Tensor:
    backend = _devices.backend
    staging = staging_pool_for(device).take(math.prod(shape) * transfer.itemsize)
    pinned = _stack_on_host(arrays, shape, common, transfer, out=staging.view(shape, transfer))
    batch = backend.empty(shape, transfer, device)
    backend.copy(batch, pinned)
    copy_done = backend.new_event()
    copy_done.record(backend.current_stream(device))
    staging.guard(copy_done)
    return batch
