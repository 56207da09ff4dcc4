"""The CUDA calls of the asynchronous paths, in one object, and clear errors for devices this process lacks.

Every stream, event, pinned allocation and non-blocking copy the runtime makes goes through ``backend``,
so that the tests can put a recording fake in its place and check, on a machine without a GPU, which
stream waits on which, which tensor is recorded on which stream and when the host blocks.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Union

import torch

Device = Union[torch.device, str, int]


class CudaBackend:
    """torch.cuda, as the runtime uses it. Streams and events are torch.cuda.Stream and torch.cuda.Event."""

    def is_available(self) -> bool:
        return torch.cuda.is_available()

    def device_count(self) -> int:
        return torch.cuda.device_count()

    def current_device(self) -> int:
        return torch.cuda.current_device()

    def device_of(self, tensor: torch.Tensor) -> torch.device:
        return tensor.device

    def current_stream(self, device: torch.device) -> Any:
        return torch.cuda.current_stream(device)

    def new_stream(self, device: torch.device) -> Any:
        return torch.cuda.Stream(device)

    def use_stream(self, stream: Any) -> AbstractContextManager[Any]:
        """Inside it, ``current_stream(stream.device)`` is `stream` itself (and allocations belong to it)."""
        return torch.cuda.stream(stream)

    def new_event(self) -> Any:
        return torch.cuda.Event()

    def record_stream(self, tensor: torch.Tensor, stream: Any) -> None:
        tensor.record_stream(stream)

    def empty(self, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device,
              memory_format: torch.memory_format = torch.contiguous_format) -> torch.Tensor:
        """Device memory, owned by the current stream of `device` (the caching allocator's rule)."""
        return torch.empty(shape, dtype=dtype, device=device, memory_format=memory_format)

    def pinned_empty(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    def pinned_empty_like(self, tensor: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(tensor, device="cpu", pin_memory=True)

    def is_pinned(self, tensor: torch.Tensor) -> bool:
        return tensor.is_pinned()

    def copy(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """``destination.copy_(source, non_blocking=True)``, queued on the current stream while the host goes on.

        No autograd history: a copy of a tensor that requires grad is data, as ``detach()`` would give.
        """
        with torch.no_grad():
            destination.copy_(source, non_blocking=True)

    def to_device(self, host: torch.Tensor, device: torch.device, *, non_blocking: bool) -> torch.Tensor:
        return host.to(device, non_blocking=non_blocking)

    def wait_for_copies_into(self, host: torch.Tensor) -> None:
        """Block until no copy can still be writing the host tensor `host`.

        A device-to-host copy with non_blocking=True lands in pinned memory and may still be running when
        the tensor is handed out (``x.to("cpu", non_blocking=True)``); pageable memory is only written by
        copies that have completed on return. Nothing is asked of CUDA before it is initialized.
        """
        if torch.cuda.is_initialized() and host.is_pinned():
            torch.cuda.synchronize()


backend = CudaBackend()


def _cuda_unavailable(device: torch.device, caller: str) -> str | None:
    if not backend.is_available():
        if not torch.backends.cuda.is_built():
            return (f"{caller}() was asked for device '{device}', but this torch ({torch.__version__}) is built "
                    "without CUDA: install a CUDA build of torch, or pass device='cpu'")
        return (f"{caller}() was asked for device '{device}', but no CUDA device is visible to this process "
                "(check the NVIDIA driver and CUDA_VISIBLE_DEVICES), or pass device='cpu'")
    count = backend.device_count()
    if device.index is not None and device.index >= count:
        return (f"{caller}() was asked for device '{device}', but this process sees {count} CUDA "
                f"device{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})")
    return None


def check_device_available(device: torch.device, caller: str) -> None:
    """RuntimeError in one line, naming the device and the way out, when this process cannot use `device`.

    torch itself fails later and less clearly: ``AssertionError: Torch not compiled with CUDA enabled``.
    """
    problem = None
    if device.type == "cuda":
        problem = _cuda_unavailable(device, caller)
    elif device.type == "mps" and not torch.backends.mps.is_available():
        problem = (f"{caller}() was asked for device 'mps', but MPS is not available here "
                   "(it needs macOS on Apple silicon and a torch built with MPS), or pass device='cpu'")
    if problem is not None:
        raise RuntimeError(problem)


def resolved(device: torch.device) -> torch.device:
    """`device` with an index: 'cuda' is the current CUDA device."""
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", backend.current_device())
    return device
