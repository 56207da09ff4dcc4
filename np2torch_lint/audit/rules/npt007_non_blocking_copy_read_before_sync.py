"""NPT007 at run time: a host tensor filled by a non-blocking device-to-host copy, used before the copy completed.

At each such copy (``.to("cpu", non_blocking=True)``, ``host.copy_(device_tensor, non_blocking=True)``) the hooks
record an event on the stream the copy was queued on; ``PendingHostCopies`` keeps it under the host tensor's
storage, so views and slices of it count too. From the first such copy on, ``PendingWatch`` (a
``TorchFunctionMode``, entered as NPT004's is) sees every torch call of the thread that started the audit: one
that uses the data of a pending tensor on the host (``.numpy()``, ``.tolist()``, ``.item()``, ``float()``,
``print``, NumPy functions through ``__array__``, ``h.sum()``, ``h + 1``) asks the event, and not complete means it
used memory the copy was still writing. Views, metadata (``.shape``) and copies to a device (ordered by the
stream) are not uses. A use after the copy happened to finish is not reported: no wrong data was read, though only
a synchronisation makes that certain (the static rule reports the missing one).
"""

from __future__ import annotations

from typing import Callable, Protocol

import torch
from torch.overrides import TorchFunctionMode

from ..findings import AuditFinding, Observed, times
from ..sites import Site

CODE = "NPT007"
NAME = "non-blocking-copy-read-before-sync"
FIX = ("synchronize first (torch.cuda.synchronize(), or an event recorded after the copy), or use "
       "np2torch_lint.runtime.to_numpy_async(t).result()")
#: entries whose copy completed are dropped when there are more than this many
PRUNE_ABOVE = 64


class Event(Protocol):
    def query(self) -> bool: ...


def device_to_host(source: torch.Tensor, result: torch.Tensor) -> bool:
    """Whether a copy from ``source`` to ``result`` went from a device to the host."""
    return result.is_cpu and not source.is_cpu and not source.is_meta


def event_after_copy(device: torch.device) -> Event | None:
    """An event recorded on ``device``'s current stream, right after a copy was queued there (None: the device
    has no events torch can record)."""
    try:
        if device.type == "cuda":
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(device))
            return event
        event = torch.Event(device)  # other accelerators (torch's device-generic events)
        event.record()
        return event
    except (RuntimeError, AttributeError, TypeError, AssertionError):
        return None


class PendingHostCopies:
    """Host storages a non-blocking copy may still be writing: storage address -> (event, where copied)."""

    def __init__(self) -> None:
        self.pending: dict[int, tuple[Event, Site]] = {}

    def __len__(self) -> int:
        return len(self.pending)

    def copied(self, host: torch.Tensor, event: Event, site: Site) -> None:
        if len(self.pending) > PRUNE_ABOVE:
            self.pending = {key: entry for key, entry in self.pending.items() if not entry[0].query()}
        self.pending[host.untyped_storage().data_ptr()] = (event, site)

    def still_copying(self, tensor: torch.Tensor) -> Site | None:
        """Where the copy into ``tensor``'s memory was queued, if it has not completed (None: nothing pending)."""
        if not tensor.is_cpu:
            return None
        key = tensor.untyped_storage().data_ptr()
        entry = self.pending.get(key)
        if entry is None:
            return None
        if entry[0].query():
            del self.pending[key]
            return None
        return entry[1]


#: torch calls that do not use a tensor's data on the host: metadata, views (found through their storage), and
#: copies to a device (queued on a stream, which orders them after the copy)
NOT_USES = frozenset({
    "__get__", "size", "dim", "ndimension", "stride", "numel", "nelement", "element_size", "data_ptr",
    "storage_offset", "untyped_storage", "_typed_storage", "storage", "is_pinned", "is_contiguous", "is_complex",
    "is_floating_point", "is_signed", "is_shared", "get_device", "__len__", "__hash__", "__dir__", "record_stream",
    "view", "view_as", "reshape", "reshape_as", "__getitem__", "t", "permute", "transpose", "narrow", "select",
    "unsqueeze", "squeeze", "expand", "expand_as", "as_strided", "unfold", "split", "chunk", "unbind", "__iter__",
    "detach", "detach_", "flatten", "diagonal", "movedim", "swapaxes", "to", "cuda", "pin_memory",
    "__array_wrap__",  # NumPy handing back its result: the read was __array__
})
#: how a use reads in a message: methods as ``.name()``, the rest as torch functions
USE_NAMES = {"__repr__": "repr()/print()", "__format__": "format()", "__float__": "float()", "__int__": "int()",
             "__bool__": "bool()", "__index__": "an index", "__complex__": "complex()",
             "__array__": "a NumPy function", "__reduce_ex__": "pickling"}


def use_name(func: Callable) -> str:
    name = getattr(func, "__name__", "a torch call")
    if name in USE_NAMES:
        return USE_NAMES[name]
    owner = getattr(func, "__qualname__", "").partition(".")[0]
    return f".{name}()" if owner in ("TensorBase", "Tensor") else f"torch.{name}()"


class PendingWatch(TorchFunctionMode):
    """Sees every torch call of its thread while copies are pending: ``used(func, copied_at)`` for each call that
    uses a pending tensor's data on the host."""

    def __init__(self, pending: PendingHostCopies, used: Callable[[Callable, Site], None]) -> None:
        super().__init__()
        self.pending = pending
        self.used = used

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        if kwargs is None:
            kwargs = {}
        if len(self.pending) and getattr(func, "__name__", None) not in NOT_USES:
            for value in args:
                for item in (value if type(value) in (list, tuple) else (value,)):
                    if isinstance(item, torch.Tensor) and (copied_at := self.pending.still_copying(item)):
                        self.used(func, copied_at)
                        return func(*args, **kwargs)
        return func(*args, **kwargs)


def describe(observed: Observed) -> AuditFinding:
    (copied_at, _), _ = observed.related.most_common(1)[0]
    message = (f"{observed.calls.most_common(1)[0][0]} used a host tensor before its non_blocking=True copy "
               f"(at {copied_at}) completed ({times(observed.count)}): {FIX}")
    return AuditFinding(CODE, message, observed.site, observed.count, properties={
        "copied_at": [{**site.as_dict(), "count": n} for (site, _), n in observed.related.most_common()]})
