"""Pinned host buffers that host-to-device copies are made from, reused once the copy out of them is done."""

from __future__ import annotations

import math
import threading
from typing import Any

import torch

from . import _devices


class _PinnedStaging:
    """A pinned host buffer, so that the copy out of it can be non-blocking, reused from copy to copy.

    A non-blocking copy still reads the buffer after the host has moved on, so each copy out of it
    is followed by an event (``guard``), and ``view`` waits for that event before handing the memory
    out again: refilling it under an in-flight copy would corrupt the batch in transit.
    """

    def __init__(self) -> None:
        self._buffer: torch.Tensor | None = None
        self._last_copy_done: Any = None  # the event recorded after the last copy out of the buffer

    @property
    def capacity(self) -> int:
        return 0 if self._buffer is None else self._buffer.numel()

    def in_flight(self) -> bool:
        """Whether a copy out of the buffer may still be running. Asks the event; never waits."""
        if self._last_copy_done is not None and self._last_copy_done.query():
            self._last_copy_done = None
        return self._last_copy_done is not None

    def view(self, shape: tuple[int, ...], dtype: torch.dtype, *, channels_last: bool = False) -> torch.Tensor:
        """A tensor of `shape` and `dtype` over the buffer, once no copy reads the buffer any more.

        With `channels_last` a 4-d view has the channels_last layout, so that filling it lays the data
        out as a channels_last tensor on the device wants it and the transfer is one straight copy.
        """
        if self._last_copy_done is not None:
            self._last_copy_done.synchronize()
            self._last_copy_done = None
        nbytes = math.prod(shape) * dtype.itemsize
        if self._buffer is None or self._buffer.numel() < nbytes:
            self._buffer = _devices.backend.pinned_empty(nbytes)
        flat = self._buffer[:nbytes].view(dtype)
        if channels_last and len(shape) == 4:
            batch, channels, height, width = shape
            return flat.view(batch, height, width, channels).permute(0, 3, 1, 2)
        return flat.view(shape)

    def guard(self, copy_done: Any) -> None:
        """Record the event that completes the copy just queued out of the buffer."""
        self._last_copy_done = copy_done


class _StagingPool:
    """Staging buffers for one thread and device: a copy takes one whose last copy is done.

    Two calls in one step (images, then labels) each get a buffer of their own, so neither waits for
    the other's copy, which is queued behind every kernel before it. Only when `most` buffers are all
    in flight does the host wait, for the oldest copy: that bounds the pinned memory held.
    """

    def __init__(self, *, most: int = 4) -> None:
        self._most = most
        self._stagings: list[_PinnedStaging] = []  # least recently used first

    def take(self, nbytes: int) -> _PinnedStaging:
        idle = [staging for staging in self._stagings if not staging.in_flight()]
        if idle:
            fitting = [staging for staging in idle if staging.capacity >= nbytes]
            # the smallest buffer that fits, else the largest idle one (it grows the least)
            staging = min(fitting, key=lambda s: s.capacity) if fitting else max(idle, key=lambda s: s.capacity)
        elif len(self._stagings) < self._most:
            staging = _PinnedStaging()
        else:
            staging = self._stagings[0]  # the oldest copy: its view() waits for it
        if staging in self._stagings:
            self._stagings.remove(staging)
        self._stagings.append(staging)
        return staging


_pools_per_thread = threading.local()


def staging_pool_for(device: torch.device) -> _StagingPool:
    """This thread's staging pool for `device` (an indexed CUDA device): threads never fill one another's."""
    by_device: dict[int, _StagingPool] = _pools_per_thread.__dict__.setdefault("by_device", {})
    return by_device.setdefault(device.index, _StagingPool())
