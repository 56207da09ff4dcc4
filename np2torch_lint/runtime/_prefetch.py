"""Host-to-device pipelines: DevicePrefetcher and NumpyBatchLoader."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from . import _devices
from ._collections import BatchWalker, Leaf
from ._convert import from_numpy
from ._devices import Device, check_device_available, resolved
from ._dtypes import (
    _as_ndarray,
    _check_dtype_argument,
    _check_dtype_supported,
    _fill,
    _torch_dtype_of,
    _transfer_dtype,
)
from ._staging import _PinnedStaging

_EXHAUSTED = object()


def _moved_by_its_own_method(obj: Any, device: torch.device) -> Any:
    moved = obj.to(device)
    return obj if moved is None else moved  # a .to() that moves in place and forgets to return self


@dataclass
class _BatchInFlight:
    """A batch whose copy is queued on the side stream, and what handing it out needs."""

    item: Any  # the batch, its data leaves already on the device
    copy_done: Any  # the event recorded on the side stream after the batch's last copy
    made_here: list[torch.Tensor] = field(default_factory=list)  # every device tensor the copies made
    has_movables: bool = False  # objects with their own .to() are moved when the batch is handed out


class DevicePrefetcher:
    """Iterate over batches already on `device`, copying the next ones while the current is used.

    Items may be ndarrays, tensors, or any nesting of mappings (``dict``, ``OrderedDict``,
    ``defaultdict``, ``UserDict`` such as Hugging Face's ``BatchEncoding``), tuples, lists,
    namedtuples and dataclasses of them; each container comes back with its own type. Objects with
    their own ``.to()`` method (``PackedSequence``, ``TensorDict``, a batch class) are moved by it.
    Strings, numbers and other objects pass through unchanged, and so does every value under a key
    (or dataclass / namedtuple field) named in ``skip_keys``. Arrays torch cannot hold (object,
    datetime, structured) raise TypeError naming where they sit. ``dtype`` casts floating-point leaves
    only: integer and bool leaves (labels, indices, masks) keep their dtype. ``channels_last`` gives
    4-d leaves the channels_last memory format.

    Shares: nothing; every yielded tensor owns its memory on every device, so in-place
    augmentations never write into the source arrays.
    Copies: on CUDA each host leaf is copied into a pinned staging buffer (one set per in-flight
    batch, reused, guarded by an event), casting and laying out in the same pass, then to the device
    with ``non_blocking=True`` on a side stream; a CPU tensor already pinned (``DataLoader(pin_memory=True)``)
    is copied straight from. Narrowing casts happen on the host, widening ones on the device. Up to
    ``depth`` batches are in flight while the consumer works on the current one. Leaves already on a
    GPU are copied on the side stream after it waits for the stream that was current when the batch
    was fetched (the producer's). Objects with ``.to()`` are moved on the consumer's stream when their
    batch is handed out. On the CPU and other devices it is a plain iterator that converts each item
    as it is requested, with the same results.
    Synchronizes: the consumer's current stream waits (on the GPU, not the host) for an event
    recorded after the batch's copy; ``wait_event`` rather than ``wait_stream`` so it does not also
    wait for the batches queued behind it. Each yielded tensor is ``record_stream``-ed on the
    consumer's stream, so the allocator does not hand its memory to the next copy while the
    consumer still reads it. The host waits only to reuse a staging buffer whose copy is still
    running, and for the side stream when iteration stops (the buffers are freed then).
    A device this process cannot use raises RuntimeError here, naming it.
    """

    def __init__(
        self,
        iterable: Iterable[Any],
        device: Device,
        *,
        depth: int = 2,
        dtype: torch.dtype | None = None,
        channels_last: bool = False,
        skip_keys: Collection[Any] = (),
    ) -> None:
        if depth < 1:
            raise ValueError(f"DevicePrefetcher() needs depth >= 1, got {depth}")
        _check_dtype_argument(dtype, "DevicePrefetcher")
        if isinstance(skip_keys, str):
            skip_keys = (skip_keys,)
        self._iterable = iterable
        self._device = torch.device(device)
        check_device_available(self._device, "DevicePrefetcher")
        self._depth = depth
        self._dtype = dtype
        self._channels_last = channels_last
        self._walker = BatchWalker("DevicePrefetcher", skip_keys)

    def __len__(self) -> int:
        return len(self._iterable)  # type: ignore[arg-type]  # TypeError for unsized iterables

    def __iter__(self) -> Iterator[Any]:
        if self._device.type == "cuda":
            return self._prefetch_on_cuda(resolved(self._device))
        return (self._walker.map(item, self._convert_now) for item in self._iterable)

    def _leaf_dtype(self, floating: bool) -> torch.dtype | None:
        return self._dtype if floating else None

    def _memory_format(self, ndim: int) -> torch.memory_format:
        return torch.channels_last if self._channels_last and ndim == 4 else torch.contiguous_format

    # -- off CUDA: each leaf converted when its batch is asked for -------------------------------

    def _convert_now(self, leaf: Any, kind: Leaf) -> Any:
        if kind is Leaf.MOVABLE:
            return _moved_by_its_own_method(leaf, self._device)
        if isinstance(leaf, torch.Tensor):
            memory_format = torch.channels_last if self._channels_last and leaf.dim() == 4 else torch.preserve_format
            return leaf.detach().to(device=self._device, dtype=self._leaf_dtype(leaf.is_floating_point()),
                                    copy=True, memory_format=memory_format)
        array = _as_ndarray(leaf, "DevicePrefetcher")
        dtype = self._leaf_dtype(array.dtype.kind == "f")
        memory_format = self._memory_format(array.ndim)
        if memory_format == torch.contiguous_format:
            return from_numpy(array, dtype=dtype, device=self._device, copy=True)
        if self._device.type == "cpu":  # one pass: cast and lay out as channels_last together
            converted = torch.empty(array.shape, dtype=dtype or _torch_dtype_of(array), memory_format=memory_format)
            _fill(converted, array)
            return converted
        return from_numpy(array, dtype=dtype, device=self._device, copy=True).contiguous(memory_format=memory_format)

    # -- on CUDA: copies on a side stream, `depth` batches ahead ---------------------------------

    def _prefetch_on_cuda(self, device: torch.device) -> Iterator[Any]:
        backend = _devices.backend
        copy_stream = backend.new_stream(device)
        # depth + 1 sets: the batch just handed out keeps its buffers while `depth` others fill theirs.
        staging_sets: list[list[_PinnedStaging]] = [[] for _ in range(self._depth + 1)]
        in_flight: deque[_BatchInFlight] = deque()
        items = iter(self._iterable)
        launched = 0

        def launch_next() -> None:
            nonlocal launched
            item = next(items, _EXHAUSTED)
            if item is not _EXHAUSTED:
                stagings = staging_sets[launched % len(staging_sets)]
                in_flight.append(self._copy_to_cuda(item, device, copy_stream, stagings))
                launched += 1

        try:
            for _ in range(self._depth):
                launch_next()
            while in_flight:
                batch = in_flight.popleft()
                consumer = backend.current_stream(device)
                consumer.wait_event(batch.copy_done)
                for tensor in batch.made_here:
                    backend.record_stream(tensor, consumer)
                item = batch.item
                if batch.has_movables:  # on the consumer's stream: their memory is the consumer's own
                    item = self._walker.map(
                        item, lambda leaf, kind: _moved_by_its_own_method(leaf, device) if kind is Leaf.MOVABLE
                        else leaf)
                launch_next()
                yield item
        finally:
            # The staging buffers are about to be freed; no copy may still be reading them.
            copy_stream.synchronize()

    def _copy_to_cuda(self, item: Any, device: torch.device, copy_stream: Any,
                      stagings: list[_PinnedStaging]) -> _BatchInFlight:
        """Queue `item`'s copies on `copy_stream`; the batch, on the device, with the event that completes it."""
        backend = _devices.backend
        batch = _BatchInFlight(item=None, copy_done=None)
        stagings_used = 0
        producers_waited_for: set[torch.device] = set()

        def next_staging() -> _PinnedStaging:
            nonlocal stagings_used
            if stagings_used == len(stagings):
                stagings.append(_PinnedStaging())
            stagings_used += 1
            return stagings[stagings_used - 1]

        def leaf_to_cuda(leaf: Any, kind: Leaf) -> Any:
            if kind is Leaf.MOVABLE:
                batch.has_movables = True
                return leaf
            source_device = backend.device_of(leaf) if isinstance(leaf, torch.Tensor) else None
            if source_device is not None and source_device.type == "cuda":
                if source_device not in producers_waited_for:
                    # Read here, outside the copy stream's context: inside it the current stream is the
                    # copy stream itself, and waiting on it would order nothing.
                    copy_stream.wait_stream(backend.current_stream(source_device))
                    producers_waited_for.add(source_device)
                if source_device == device:  # the producer may free it while the copy stream still reads it
                    backend.record_stream(leaf, copy_stream)
                # (from another GPU torch copies on that GPU's current stream, which orders it with the producer)
                shape, final = tuple(leaf.shape), self._leaf_dtype(leaf.is_floating_point()) or leaf.dtype
                with backend.use_stream(copy_stream):
                    converted = backend.empty(shape, final, device, self._memory_format(len(shape)))
                    backend.copy(converted, leaf)
            else:
                pinned, widen_to = self._stage(leaf, next_staging)
                memory_format = self._memory_format(pinned.dim())
                with backend.use_stream(copy_stream):
                    converted = backend.empty(tuple(pinned.shape), pinned.dtype, device, memory_format)
                    backend.copy(converted, pinned)
                    if widen_to is not None:  # on the device, after the transfer
                        narrow, converted = converted, backend.empty(tuple(pinned.shape), widen_to, device,
                                                                     memory_format)
                        backend.copy(converted, narrow)
            batch.made_here.append(converted)
            return converted

        batch.item = self._walker.map(item, leaf_to_cuda)
        batch.copy_done = backend.new_event()
        batch.copy_done.record(copy_stream)
        for staging in stagings[:stagings_used]:
            staging.guard(batch.copy_done)
        return batch

    def _stage(self, leaf: np.ndarray | np.generic | torch.Tensor,
               next_staging: Callable[[], _PinnedStaging]) -> tuple[torch.Tensor, torch.dtype | None]:
        """Pinned host data for a host leaf, and the dtype still to widen to on the device (or None)."""
        if isinstance(leaf, torch.Tensor):
            source, target = leaf.dtype, self._leaf_dtype(leaf.is_floating_point())
        else:
            leaf = _as_ndarray(leaf, "DevicePrefetcher")
            source, target = _torch_dtype_of(leaf), self._leaf_dtype(leaf.dtype.kind == "f")
        transfer = _transfer_dtype(source, target, moves_to_device=True)
        widen_to = None if target is None or target == transfer else target
        if isinstance(leaf, torch.Tensor) and transfer == source and _devices.backend.is_pinned(leaf):
            return leaf, widen_to  # already pinned: copy straight from it
        channels_last = self._memory_format(leaf.ndim) == torch.channels_last
        pinned = next_staging().view(tuple(leaf.shape), transfer, channels_last=channels_last)
        if isinstance(leaf, torch.Tensor):
            with torch.no_grad():
                pinned.copy_(leaf)
        else:
            _fill(pinned, leaf)  # one pass: cast, byte order, any strides, the channels_last layout
        return pinned, widen_to


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
        check_device_available(self._device, "NumpyBatchLoader")
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
