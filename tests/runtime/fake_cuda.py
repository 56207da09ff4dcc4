"""A stand-in for CUDA's streams, events, pinned memory and non-blocking copies, for machines without a GPU.

It takes the place of ``np2torch_lint.runtime._devices.backend``. Every copy runs at once on the CPU, so
values come out right, but each copy (and each kernel a test launches) is also an operation queued on a
stream, with the ordering a GPU gives it: operations on one stream run in order; a stream runs past a
``wait_stream`` / ``wait_event`` only once the awaited work is done; the host knows work is done only
after it synchronized on it (``query()`` is pessimistic: nothing finishes on its own). The fake raises
``OrderingError`` where a real GPU could go wrong:

- an operation reads device memory whose last write is not ordered before it (a missing wait);
- device memory is used on a stream other than the one that allocated it, with no ``record_stream``
  for that stream (the caching allocator could hand it out again while the work is pending);
- a copy reads a staging buffer that an earlier copy, not yet known to the host as finished, also
  read: the host refilled the buffer under a copy in flight.

Staging buffers freed while a copy out of them may still run are listed in ``freed_in_flight``.

``log`` records stream waits, event records, ``record_stream`` calls, transfers and host waits.
"""

from __future__ import annotations

import contextlib
import itertools
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch


class OrderingError(AssertionError):
    """Work that a GPU could run in the wrong order, or memory it could reuse too early."""


@dataclass(eq=False)
class FakeStream:
    fake: FakeCuda
    name: str
    device: torch.device
    queued: int = 0  # operations queued so far; a position p means "after the first p operations"
    waits: list[tuple[int, FakeStream, int]] = field(default_factory=list)  # (at, on stream, its position)

    def __repr__(self) -> str:
        return self.name

    def wait_stream(self, other: FakeStream) -> None:
        self.fake.log.append(("wait_stream", self.name, other.name))
        self.waits.append((self.queued, other, other.queued))

    def wait_event(self, event: FakeEvent) -> None:
        self.fake.log.append(("wait_event", self.name, event.name))
        if event.stream is not None:
            self.waits.append((self.queued, event.stream, event.position))

    def synchronize(self) -> None:
        self.fake.host_waits_for(self, self.queued, f"stream {self.name}")

    def query(self) -> bool:
        return self.fake.host_knows_done(self, self.queued)


class FakeEvent:
    def __init__(self, fake: FakeCuda, name: str) -> None:
        self.fake, self.name = fake, name
        self.stream: FakeStream | None = None
        self.position = 0

    def __repr__(self) -> str:
        return self.name

    def record(self, stream: FakeStream | None = None) -> None:
        stream = stream or self.fake.current_stream(None)
        self.stream, self.position = stream, stream.queued
        self.fake.log.append(("record", self.name, stream.name))

    def synchronize(self) -> None:
        if self.stream is not None:
            self.fake.host_waits_for(self.stream, self.position, self.name)

    def query(self) -> bool:
        return self.stream is None or self.fake.host_knows_done(self.stream, self.position)


@dataclass(eq=False)
class _Memory:
    """What the fake knows of one tensor's memory."""

    device: torch.device
    allocated_on: FakeStream | None  # None for host memory
    staging: bool = False  # a pinned buffer the runtime refills from the host between copies
    last_write: tuple[FakeStream, int] | None = None
    last_read: tuple[FakeStream, int] | None = None
    recorded_on: set[FakeStream] = field(default_factory=set)


class FakeCuda:
    """The backend interface of ``np2torch_lint.runtime._devices.CudaBackend``, on the CPU, with its ordering."""

    def __init__(self, device_count: int = 2) -> None:
        self.log: list[tuple[Any, ...]] = []
        self._device_count = device_count
        self._current_device = 0
        self._defaults = {index: FakeStream(self, f"default:{index}", torch.device("cuda", index))
                          for index in range(device_count)}
        self._current: dict[int, FakeStream] = dict(self._defaults)
        self._streams: list[FakeStream] = list(self._defaults.values())
        self._host_points: list[tuple[FakeStream, int]] = []
        self._memory: dict[int, _Memory] = {}  # by data pointer
        self.freed_in_flight: list[str] = []  # staging buffers freed while a copy out of them may still run
        self._numbers = itertools.count()

    # -- what the runtime calls --------------------------------------------------------------

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return self._device_count

    def current_device(self) -> int:
        return self._current_device

    def device_of(self, tensor: torch.Tensor) -> torch.device:
        memory = self._memory_of(tensor)
        return memory.device if memory is not None else tensor.device

    def current_stream(self, device: Any) -> FakeStream:
        return self._current[self._index(device)]

    def new_stream(self, device: Any) -> FakeStream:
        index = self._index(device)
        stream = FakeStream(self, f"side{next(self._numbers)}:{index}", torch.device("cuda", index))
        self._streams.append(stream)
        return stream

    @contextlib.contextmanager
    def use_stream(self, stream: FakeStream) -> Iterator[FakeStream]:
        index = stream.device.index
        saved_stream, saved_device = self._current[index], self._current_device
        self._current[index], self._current_device = stream, index
        try:
            yield stream
        finally:
            self._current[index], self._current_device = saved_stream, saved_device

    def new_event(self) -> FakeEvent:
        return FakeEvent(self, f"event{next(self._numbers)}")

    def record_stream(self, tensor: torch.Tensor, stream: FakeStream) -> None:
        memory = self._memory_of(tensor)
        if memory is None or memory.device.type != "cuda":
            raise OrderingError(f"record_stream on {self.label(tensor)}, which is not device memory")
        memory.recorded_on.add(stream)
        self.log.append(("record_stream", self.label(tensor), stream.name))

    def empty(self, shape: tuple[int, ...], dtype: torch.dtype, device: Any,
              memory_format: torch.memory_format = torch.contiguous_format) -> torch.Tensor:
        tensor = torch.empty(shape, dtype=dtype, memory_format=memory_format)
        device = torch.device("cuda", self._index(device))
        self._track(tensor, _Memory(device, allocated_on=self.current_stream(device)))
        return tensor

    def pinned_empty(self, nbytes: int) -> torch.Tensor:
        tensor = torch.empty(nbytes, dtype=torch.uint8)
        self._track(tensor, _Memory(torch.device("cpu"), allocated_on=None, staging=True))
        self.log.append(("pinned", nbytes))
        return tensor

    def pinned_empty_like(self, tensor: torch.Tensor) -> torch.Tensor:
        host = torch.empty_like(tensor, device="cpu")
        self._track(host, _Memory(torch.device("cpu"), allocated_on=None))
        return host

    def is_pinned(self, tensor: torch.Tensor) -> bool:
        memory = self._memory_of(tensor)
        return memory is not None and memory.device.type == "cpu"

    def copy(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        to_device, from_device = self.device_of(destination), self.device_of(source)
        what = f"copy {self.label(source)} -> {self.label(destination)}"
        if to_device.type == from_device.type == "cuda" and to_device != from_device:
            # As torch does: on the source GPU's current stream, with a barrier each way around it.
            on, other = self.current_stream(from_device), self.current_stream(to_device)
            on.waits.append((on.queued, other, other.queued))
            self.queue(on, reads=[source], writes=[destination], what=what)
            other.waits.append((other.queued, on, on.queued))
        else:
            device = to_device if to_device.type == "cuda" else from_device
            self.queue(self.current_stream(device), reads=[source], writes=[destination], what=what)
        self.log.append(("copy", source.dtype, destination.dtype, tuple(source.shape)))
        with torch.no_grad():
            destination.copy_(source)

    def to_device(self, host: torch.Tensor, device: torch.device, *, non_blocking: bool) -> torch.Tensor:
        if device.type == "meta":
            return host.to(device)
        moved = host.clone()
        self.log.append(("to_device", host.dtype, str(device), non_blocking))
        if device.type != "cuda":  # another accelerator (mps): no streams here, only what crossed
            self._track(moved, _Memory(device, allocated_on=None))
            return moved
        stream = self.current_stream(device)
        self._track(moved, _Memory(torch.device("cuda", self._index(device)), allocated_on=stream))
        self.queue(stream, reads=[host], writes=[moved], what=f"transfer of {self.label(host)}")
        if not non_blocking:
            self.host_waits_for(stream, stream.queued, f"blocking transfer on {stream.name}")
        return moved

    def wait_for_copies_into(self, host: torch.Tensor) -> None:
        if self.is_pinned(host):
            self.synchronize()

    def synchronize(self) -> None:
        for stream in self._streams:
            self._host_points.append((stream, stream.queued))
        self.log.append(("host waits", "device"))

    # -- what the tests call -----------------------------------------------------------------

    def tensor(self, data: Any, device: Any = "cuda") -> torch.Tensor:
        """A tensor on the fake `device`, written by an operation queued on its current stream."""
        values = torch.as_tensor(data).clone()
        tensor = self.empty(tuple(values.shape), values.dtype, torch.device(device))
        tensor.copy_(values)
        self.queue(self.current_stream(device), writes=[tensor], what="kernel writing a new tensor")
        return tensor

    def pinned(self, data: Any) -> torch.Tensor:
        """Pinned host memory holding `data` (as ``torch.tensor(data).pin_memory()``)."""
        values = torch.as_tensor(data)
        host = self.pinned_empty_like(values)
        host.copy_(values)
        return host

    def kernel(self, *, reads: Iterable[torch.Tensor] = (), writes: Iterable[torch.Tensor] = (),
               device: Any = None) -> None:
        """A kernel on the current stream of `device` that reads and writes device memory."""
        self.queue(self.current_stream(device), reads=list(reads), writes=list(writes), what="kernel")

    def queue(self, stream: FakeStream, *, reads: Iterable[torch.Tensor] = (),
              writes: Iterable[torch.Tensor] = (), what: str) -> tuple[FakeStream, int]:
        position = stream.queued
        stream.queued += 1
        for tensor in reads:
            memory = self._memory_of(tensor)
            if memory is None:
                continue
            if memory.last_write is not None and not self.done_before(*memory.last_write, stream, position):
                raise OrderingError(f"{what} on {stream.name} reads {self.label(tensor)} before its write on "
                                    f"{memory.last_write[0].name} is ordered before it (a missing wait)")
            if memory.device.type == "cuda" and memory.allocated_on is not stream \
                    and stream not in memory.recorded_on:
                raise OrderingError(f"{what} uses {self.label(tensor)} on {stream.name}; it was allocated on "
                                    f"{memory.allocated_on.name} and never record_stream-ed on {stream.name}")
            if memory.staging and memory.last_read is not None and not self.host_knows_done(*memory.last_read):
                raise OrderingError(f"{what}: the host refilled staging buffer {self.label(tensor)} while the "
                                    f"copy out of it on {memory.last_read[0].name} may still be running")
            memory.last_read = (stream, position)
        for tensor in writes:
            memory = self._memory_of(tensor)
            if memory is not None:
                memory.last_write = (stream, position)
        return stream, position

    def done_before(self, stream: FakeStream, index: int, later: FakeStream, position: int) -> bool:
        """Whether operation `index` of `stream` has finished whenever `later` reaches `position`."""
        seen: set[tuple[int, int]] = set()

        def reaches(at: FakeStream, upto: int) -> bool:
            if at is stream:
                return index < upto
            if (id(at), upto) in seen:
                return False
            seen.add((id(at), upto))
            return any(wait_at <= upto and reaches(other, other_position)
                       for wait_at, other, other_position in at.waits)

        return reaches(later, position)

    def host_waits_for(self, stream: FakeStream, position: int, what: str) -> None:
        self._host_points.append((stream, position))
        self.log.append(("host waits", what))

    def host_knows_done(self, stream: FakeStream, index: int) -> bool:
        """Whether the host has waited for something that operation `index` of `stream` comes before."""
        return any(self.done_before(stream, index, at, position) for at, position in self._host_points)

    def last_write(self, tensor: torch.Tensor) -> tuple[FakeStream, int]:
        memory = self._memory_of(tensor)
        assert memory is not None and memory.last_write is not None, f"no write of {self.label(tensor)} is known"
        return memory.last_write

    def staging_buffers_in_flight(self) -> list[str]:
        """Staging buffers a copy may still be reading, as far as the host knows."""
        return [f"{memory.allocated_on or 'host'}@{pointer:#x}" for pointer, memory in self._memory.items()
                if memory.staging and memory.last_read is not None and not self.host_knows_done(*memory.last_read)]

    def host_waits(self) -> list[str]:
        return [entry[1] for entry in self.log if entry[0] == "host waits"]

    def entries(self, kind: str) -> list[tuple[Any, ...]]:
        return [entry[1:] for entry in self.log if entry[0] == kind]

    @staticmethod
    def label(tensor: torch.Tensor) -> str:
        return f"tensor{tuple(tensor.shape)}:{str(tensor.dtype).removeprefix('torch.')}"

    # -- bookkeeping -------------------------------------------------------------------------

    def _index(self, device: Any) -> int:
        if device is None:
            return self._current_device
        if isinstance(device, int):
            return device
        device = torch.device(device)
        return self._current_device if device.index is None else device.index

    def _track(self, tensor: torch.Tensor, memory: _Memory) -> None:
        pointer = tensor.untyped_storage().data_ptr()
        if tensor.untyped_storage().nbytes() == 0:
            return  # empty tensors share a null pointer
        self._memory[pointer] = memory
        # forget the memory with the tensor, before the allocator hands the address to something else
        weakref.finalize(tensor, self._forget, pointer)

    def _forget(self, pointer: int) -> None:
        memory = self._memory.pop(pointer, None)
        if memory is not None and memory.staging and memory.last_read is not None \
                and not self.host_knows_done(*memory.last_read):
            self.freed_in_flight.append(f"staging buffer @{pointer:#x}, read on {memory.last_read[0].name}")

    def _memory_of(self, tensor: torch.Tensor) -> _Memory | None:
        if tensor.untyped_storage().nbytes() == 0:
            return None
        return self._memory.get(tensor.untyped_storage().data_ptr())
