"""Host-to-device pipelines: DevicePrefetcher and NumpyBatchLoader."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import torch

from ._batches import _PinnedStaging
from ._convert import (
    _TORCH_DTYPE_OF_NUMPY,
    Device,
    _as_ndarray,
    _check_dtype_argument,
    _check_dtype_supported,
    _host_numpy_dtype,
    _transfer_dtype,
    from_numpy,
)

_EXHAUSTED = object()


def _is_numeric_array(leaf: Any) -> bool:
    return isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "biufc"


def _map_leaves(item: Any, convert: Callable[[Any], Any]) -> Any:
    """`item` with `convert` applied to each tensor and numeric array in it, through tuples, lists and dicts."""
    if isinstance(item, torch.Tensor) or _is_numeric_array(item):
        return convert(item)
    if isinstance(item, tuple) and hasattr(item, "_fields"):  # a namedtuple
        return type(item)(*(_map_leaves(x, convert) for x in item))
    if isinstance(item, (tuple, list)):
        return type(item)(_map_leaves(x, convert) for x in item)
    if isinstance(item, dict):
        return {key: _map_leaves(value, convert) for key, value in item.items()}
    return item  # strings, ints, string arrays, None: not tensor data


class DevicePrefetcher:
    """Iterate over batches already on `device`, copying the next ones while the current is used.

    Items may be ndarrays, tensors, or tuples, lists, namedtuples and dicts of them; other
    leaves (strings, file names) pass through unchanged. ``dtype`` casts floating-point leaves
    only: integer and bool leaves (labels, indices, masks) keep their dtype. ``channels_last``
    gives 4-d leaves the channels_last memory format (no copy when they already have it).

    Shares: nothing; every yielded tensor owns its memory on every device, so in-place
    augmentations never write into the source arrays.
    Copies: on CUDA each leaf is copied into a pinned staging buffer (one per in-flight batch,
    reused, guarded by an event), then to the device with ``non_blocking=True`` on a side stream;
    narrowing casts happen on the host, widening ones on the device; up to ``depth`` batches are
    in flight while the consumer works on the current one. On the CPU and other devices it is
    a plain iterator that converts each item as it is requested, with the same results.
    Synchronizes: the consumer's current stream waits (on the GPU, not the host) for an event
    recorded after the batch's copy; ``wait_event`` rather than ``wait_stream`` so it does not also
    wait for the batches queued behind it. Each yielded tensor is ``record_stream``-ed on the
    consumer's stream, so the allocator does not hand its memory to the next copy while the
    consumer still reads it. The host waits only to reuse a staging buffer whose copy is still
    running, and for the side stream when iteration stops early (the buffers are freed then).
    """

    def __init__(
        self,
        iterable: Iterable[Any],
        device: Device,
        *,
        depth: int = 2,
        dtype: torch.dtype | None = None,
        channels_last: bool = False,
    ) -> None:
        if depth < 1:
            raise ValueError(f"DevicePrefetcher() needs depth >= 1, got {depth}")
        _check_dtype_argument(dtype, "DevicePrefetcher")
        self._iterable = iterable
        self._device = torch.device(device)
        self._depth = depth
        self._dtype = dtype
        self._channels_last = channels_last

    def __len__(self) -> int:
        return len(self._iterable)  # type: ignore[arg-type]  # TypeError for unsized iterables

    def __iter__(self) -> Iterator[Any]:
        if self._device.type == "cuda":
            return self._prefetch_on_cuda()
        return (_map_leaves(item, self._convert_now) for item in self._iterable)

    def _leaf_dtype(self, floating: bool) -> torch.dtype | None:
        return self._dtype if floating else None

    def _finish(self, tensor: torch.Tensor) -> torch.Tensor:
        if self._channels_last and tensor.dim() == 4:
            tensor = tensor.contiguous(memory_format=torch.channels_last)
        return tensor

    def _convert_now(self, leaf: Any) -> torch.Tensor:
        """One leaf, converted synchronously: the path off CUDA."""
        if isinstance(leaf, torch.Tensor):
            dtype = self._leaf_dtype(leaf.is_floating_point())
            return self._finish(leaf.detach().to(self._device, dtype, copy=True))
        array = _as_ndarray(leaf, "DevicePrefetcher")
        dtype = self._leaf_dtype(array.dtype.kind == "f")
        return self._finish(from_numpy(array, dtype=dtype, device=self._device, copy=True))

    def _prefetch_on_cuda(self) -> Iterator[Any]:
        device = self._device
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        copy_stream = torch.cuda.Stream(device)
        # depth + 1: the batch just yielded keeps its buffer while `depth` others fill theirs.
        staging_per_slot: list[list[_PinnedStaging]] = [[] for _ in range(self._depth + 1)]
        in_flight: deque[tuple[Any, list[torch.Tensor], Any]] = deque()
        items = iter(self._iterable)
        launched = 0

        def launch_next() -> None:
            nonlocal launched
            item = next(items, _EXHAUSTED)
            if item is not _EXHAUSTED:
                slot = staging_per_slot[launched % len(staging_per_slot)]
                in_flight.append(self._copy_to_cuda(item, device, copy_stream, slot))
                launched += 1

        try:
            for _ in range(self._depth):
                launch_next()
            while in_flight:
                item, made_here, copy_done = in_flight.popleft()
                consumer = torch.cuda.current_stream(device)
                consumer.wait_event(copy_done)
                for tensor in made_here:
                    tensor.record_stream(consumer)
                launch_next()
                yield item
        finally:
            # The staging buffers are about to be freed; no copy may still be reading them.
            copy_stream.synchronize()

    def _copy_to_cuda(
        self, item: Any, device: torch.device, copy_stream: Any, slot: list[_PinnedStaging]
    ) -> tuple[Any, list[torch.Tensor], Any]:
        """Queue `item`'s copy on `copy_stream`.

        Returns it on the device, its tensors and the event that completes the copy.
        """
        made_here: list[torch.Tensor] = []
        stagings_used = 0

        def next_staging() -> _PinnedStaging:
            nonlocal stagings_used
            if stagings_used == len(slot):
                slot.append(_PinnedStaging())
            stagings_used += 1
            return slot[stagings_used - 1]

        def leaf_to_cuda(leaf: Any) -> torch.Tensor:
            if isinstance(leaf, torch.Tensor) and leaf.device.type != "cpu":
                # Made on another stream: the copy stream must not read it before it is written.
                copy_stream.wait_stream(torch.cuda.current_stream(leaf.device))
                if leaf.device == device:  # record_stream needs a stream of the tensor's own device
                    leaf.record_stream(copy_stream)
                converted = leaf.detach().to(device, self._leaf_dtype(leaf.is_floating_point()), copy=True)
            else:
                pinned, dtype = self._stage(leaf, next_staging)
                converted = torch.empty(pinned.shape, dtype=pinned.dtype, device=device)
                converted.copy_(pinned, non_blocking=True)
                if dtype is not None:
                    converted = converted.to(dtype)  # widening: on the device, after the transfer
            converted = self._finish(converted)
            made_here.append(converted)
            return converted

        with torch.cuda.stream(copy_stream):
            on_device = _map_leaves(item, leaf_to_cuda)
            copy_done = torch.cuda.Event()
            copy_done.record(copy_stream)
        for staging in slot[:stagings_used]:
            staging.guard(copy_done)
        return on_device, made_here, copy_done

    def _stage(
        self, leaf: np.ndarray | np.generic | torch.Tensor, next_staging: Callable[[], _PinnedStaging]
    ) -> tuple[torch.Tensor, torch.dtype | None]:
        """Pinned host data for a host leaf, and the dtype still to cast to on the device (or None)."""
        if isinstance(leaf, torch.Tensor):
            target = self._leaf_dtype(leaf.is_floating_point())
            transfer = _transfer_dtype(leaf.dtype, target, moves_to_device=True)
            if leaf.is_pinned() and transfer == leaf.dtype:
                return leaf.detach(), target  # already pinned: copy straight from it
            pinned = next_staging().view(tuple(leaf.shape), transfer)
            pinned.copy_(leaf.detach())
            return pinned, target
        array = _as_ndarray(leaf, "DevicePrefetcher")
        target = self._leaf_dtype(array.dtype.kind == "f")
        host_dtype = _host_numpy_dtype(array.dtype, target, moves_to_device=True)
        pinned = next_staging().view(array.shape, _TORCH_DTYPE_OF_NUMPY[host_dtype])
        np.copyto(pinned.numpy(), array, casting="unsafe")  # one pass: cast, byte order, any strides
        return pinned, target


class NumpyBatchLoader:
    """Batches of an NHWC image array as NCHW tensors on `device`, prefetched.

    Each batch of ``images_nhwc`` (N, H, W, C), uint8 or float, becomes a (B, C, H, W) tensor of
    ``dtype`` on ``device``, multiplied by ``scale`` when given (1/255 for uint8 images). The
    result is a permuted view of an NHWC batch, which is already channels_last: no
    ``.contiguous()`` copy is made. ``channels_last=False`` asks for plain NCHW memory (one copy
    on the device). Batches go through ``DevicePrefetcher``; uint8 data crosses the bus as uint8
    and is converted on the device. ``shuffle`` draws a new order each epoch from a generator
    seeded once with ``seed``, so a seeded loader repeats the same sequence of epochs.

    Shares: nothing with ``images_nhwc``; each batch owns its memory (in-place work is safe).
    Copies: each image once into pinned memory, once to the device, and once for the dtype cast
    and scale on the device (or in host memory on the CPU); shuffled batches are gathered first.
    Synchronizes: as ``DevicePrefetcher``: the consumer's stream waits for each batch's copy, the
    host does not.
    """

    def __init__(
        self,
        images_nhwc: np.ndarray,
        batch_size: int,
        device: Device,
        *,
        dtype: torch.dtype = torch.float32,
        scale: float | None = None,
        channels_last: bool = True,
        drop_last: bool = False,
        shuffle: bool = False,
        seed: int | None = None,
    ) -> None:
        if not isinstance(images_nhwc, np.ndarray):
            raise TypeError(f"NumpyBatchLoader() expects a numpy.ndarray of images, got {type(images_nhwc).__name__}")
        if images_nhwc.ndim != 4:
            raise ValueError(
                f"NumpyBatchLoader() needs images of shape (N, H, W, C), got shape {images_nhwc.shape}"
            )
        _check_dtype_supported(images_nhwc.dtype, "NumpyBatchLoader")
        _check_dtype_argument(dtype, "NumpyBatchLoader")
        if batch_size < 1:
            raise ValueError(f"NumpyBatchLoader() needs batch_size >= 1, got {batch_size}")
        self._images = images_nhwc
        self._batch_size = batch_size
        self._device = torch.device(device)
        self._dtype = dtype
        self._scale = scale
        self._channels_last = channels_last
        self._drop_last = drop_last
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        count, rest = divmod(len(self._images), self._batch_size)
        return count + (1 if rest and not self._drop_last else 0)

    def _host_batches(self) -> Iterator[np.ndarray]:
        order = self._rng.permutation(len(self._images)) if self._shuffle else None
        for index in range(len(self)):
            start = index * self._batch_size
            stop = start + self._batch_size
            yield self._images[start:stop] if order is None else self._images[order[start:stop]]

    def __iter__(self) -> Iterator[torch.Tensor]:
        # Floating images are cast by the prefetcher (narrowing on the host); uint8 ones arrive as uint8.
        for batch_nhwc in DevicePrefetcher(self._host_batches(), self._device, dtype=self._dtype):
            # The prefetcher's batch is ours, so the cast may return it and scale may work in place.
            images = batch_nhwc.to(self._dtype)
            if self._scale is not None:
                images.mul_(self._scale)
            images = images.permute(0, 3, 1, 2)  # NCHW view, channels_last in memory
            yield images if self._channels_last else images.contiguous()
