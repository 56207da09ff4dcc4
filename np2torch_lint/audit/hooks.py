"""The audit's hooks: torch's entry points wrapped while an audit runs, and put back when the last one ends.

Nothing here runs at import. ``start`` installs, for the whole process (every thread's calls are seen):

- ``torch.tensor``, ``torch.as_tensor``, ``torch.asarray``, ``torch.from_numpy`` and the legacy ``torch.Tensor(...)``
  (``Tensor.__new__``): NPT003, NPT006, the origins of NPT004 and, with ``device=``, NPT005;
- ``Tensor.to`` and ``Tensor.cuda``: NPT005 (host to device), NPT007 (non-blocking device to host);
- ``Tensor.copy_``, only where an accelerator exists: NPT007;
- ``Tensor.numpy``: NPT001 and NPT002 (its errors).

Two ``TorchFunctionMode``s, which see every torch call, are entered only once they have something to watch, so
that a program without the pattern pays nothing for them: NPT004's ``MeetingWatch`` at the first float64 tensor
made from NumPy data, NPT007's ``PendingWatch`` at the first non-blocking device-to-host copy. A mode goes to the
bottom of the mode stack of the thread that started the audit, so that modes the program enters and leaves
meanwhile (``with torch.device(...)``) keep their order.

Each wrapper's fast path is a type test or two; only a call that is an event looks for the user's frame.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
from torch.overrides import _get_current_function_mode_stack, _pop_mode, _push_mode

from . import workers
from .findings import Observed, Recorder
from .rules import (
    npt001_numpy_on_grad_tensor as npt001,
    npt002_numpy_on_accelerator_tensor as npt002,
    npt003_torch_tensor_copies_ndarray as npt003,
    npt004_float64_default_into_torch as npt004,
    npt005_per_item_device_transfer as npt005,
    npt006_tensor_from_list_of_arrays as npt006,
    npt007_non_blocking_copy_read_before_sync as npt007,
)
from .sites import Site, forget_frames, user_site

_TensorBase = torch._C.TensorBase
_FLOAT64 = np.dtype(np.float64)
_is_compiling = torch.compiler.is_compiling


@dataclass
class _Patch:
    owner: Any
    name: str
    original: Any
    had_own: bool  # whether ``owner`` itself defined it (put back), or inherited it (deleted again)

    def undo(self) -> None:
        if self.had_own:
            setattr(self.owner, self.name, self.original)
        else:
            delattr(self.owner, self.name)


def _numpy_data(data: object) -> bool:
    """Whether ``data`` is NumPy's: an array, a NumPy scalar, or a list or tuple whose first leaf is one."""
    while type(data) in (list, tuple) and data:  # type: ignore[arg-type]
        data = data[0]  # type: ignore[index]
    return isinstance(data, (np.ndarray, np.generic))


def _may_be_an_event(data: object, dtype: object, device: object) -> bool:
    """Whether converting ``data`` may be something to record: a list or tuple of NumPy data (arrays, NPT006;
    scalars), or NumPy data that comes out float64 without a dtype (NPT004) or goes to a device (NPT005). The
    rest (tensors, Python numbers, a float32 sample in a DataLoader's collate) takes the fast way."""
    if type(data) in (list, tuple):
        return _numpy_data(data)
    if not isinstance(data, (np.ndarray, np.generic)):
        return False
    return device is not None or (dtype is None and data.dtype == _FLOAT64)


def _bool_argument(args: tuple, kwargs: dict, name: str) -> bool:
    """``non_blocking`` of ``.to(...)``: the keyword, or the first positional bool (``to(device, dtype, True)``)."""
    if name in kwargs:
        return bool(kwargs[name])
    return next((arg for arg in args if type(arg) is bool), False)


class Hooks:
    """The installed wrappers and what they share: the sessions to tell, and the rules' state."""

    def __init__(self) -> None:
        self.sessions: list[Recorder] = []
        self.patches: list[_Patch] = []
        self.owner_thread = threading.get_ident()
        self.origins = npt004.Float64Origins()
        self.modes: list[torch.overrides.TorchFunctionMode] = []  # entered, at the bottom of the owner's stack
        self.watch: npt004.MeetingWatch | None = None
        self.kept_together = npt005.KeptTogether()
        self.pending = npt007.PendingHostCopies()
        self.pending_watch: npt007.PendingWatch | None = None
        self.spool: str | None = None  # where forked children write what they saw (workers.py)
        self.spool_serials: list[int] = []  # in a forked child: the parent's audits it reports to

    # -- telling the sessions -------------------------------------------------------------------------------------
    def observe(self, code: str, site: Site) -> list[Observed]:
        """The ``Observed`` of (code, site) in every running session."""
        return [session.at(code, site) for session in self.sessions]

    # -- installing -----------------------------------------------------------------------------------------------
    def patch(self, owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
        had_own = name in vars(owner)
        own = vars(owner)[name] if had_own else None
        replacement = wrap(getattr(owner, name))
        if name == "__new__":
            replacement = staticmethod(replacement)
        setattr(owner, name, replacement)
        # what goes back is the attribute as the owner held it (a staticmethod stays one)
        self.patches.append(_Patch(owner, name, own, had_own))

    def install(self) -> None:
        # torch.compile's machinery keys its tables on torch's functions (Tensor.__new__ among them) when it is
        # first imported, as torch.optim does: import it now, while they are torch's own
        import torch._dynamo  # noqa: F401

        self.patch(torch, "tensor", self._tensor)
        self.patch(torch, "as_tensor", self._as_tensor)
        self.patch(torch, "asarray", self._asarray)
        self.patch(torch, "from_numpy", self._from_numpy)
        self.patch(torch.Tensor, "__new__", self._legacy_new)
        self.patch(torch.Tensor, "to", self._to)
        self.patch(torch.Tensor, "cuda", self._cuda)
        self.patch(torch.Tensor, "numpy", self._numpy)
        if torch.accelerator.is_available():
            self.patch(torch.Tensor, "copy_", self._copy_)

    def enter(self, mode: torch.overrides.TorchFunctionMode) -> bool:
        """Enter ``mode`` at the bottom of the owner thread's mode stack; False in another thread (not entered)."""
        if threading.get_ident() != self.owner_thread:
            return False
        _enter_at_bottom(mode)
        self.modes.append(mode)
        return True

    def uninstall(self) -> None:
        for mode in reversed(self.modes):
            _leave_at_bottom(mode)
        self.modes.clear()
        for patch in reversed(self.patches):
            patch.undo()
        self.patches.clear()
        workers.remove(self.spool)
        self.spool = None
        forget_frames()

    # -- conversions: NPT003, NPT004 (origins), NPT005 (device=), NPT006 -----------------------------------------
    def _tensor(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def tensor(*args: Any, **kwargs: Any) -> Any:
            data = args[0] if args else kwargs.get("data")
            dtype, device = kwargs.get("dtype"), kwargs.get("device")
            if not _may_be_an_event(data, dtype, device) and not isinstance(data, np.ndarray):  # NPT003: any array
                return original(*args, **kwargs)
            return self.converted("torch.tensor", original, args, kwargs, data, dtype, device, copy_test=True)
        return tensor

    def _as_tensor(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def as_tensor(*args: Any, **kwargs: Any) -> Any:
            data = args[0] if args else kwargs.get("data")
            dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
            device = args[2] if len(args) > 2 else kwargs.get("device")
            if not _may_be_an_event(data, dtype, device):  # a DataLoader's collate, sample after sample
                return original(*args, **kwargs)
            return self.converted("torch.as_tensor", original, args, kwargs, data, dtype, device)
        return as_tensor

    def _asarray(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def asarray(*args: Any, **kwargs: Any) -> Any:
            data = args[0] if args else kwargs.get("obj")
            dtype, device = kwargs.get("dtype"), kwargs.get("device")
            if not _may_be_an_event(data, dtype, device):
                return original(*args, **kwargs)
            return self.converted("torch.asarray", original, args, kwargs, data, dtype, device)
        return asarray

    def _from_numpy(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def from_numpy(array: Any) -> Any:
            result = original(array)
            if array.dtype == _FLOAT64 and not _is_compiling():
                self.made(result)
            return result
        return from_numpy

    def _legacy_new(self, original: Callable) -> Callable:
        def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
            if len(args) != 1 or not (isinstance(args[0], np.ndarray)
                                      or type(args[0]) in (list, tuple) and _numpy_data(args[0])):
                return original(cls, *args, **kwargs)  # a shape, a storage, Python numbers
            name = "torch.Tensor" if cls is torch.Tensor else f"{cls.__name__}"
            return self.converted(name, functools.partial(original, cls), args, kwargs, args[0], None,
                                  kwargs.get("device"), legacy=True)
        return __new__

    def converted(self, call: str, original: Callable, args: tuple, kwargs: dict, data: object, dtype: object,
                  device: object, copy_test: bool = False, legacy: bool = False) -> Any:
        """Run one conversion of an ndarray, a NumPy scalar or a list or tuple (maybe of arrays), and record what
        it was an instance of."""
        arrays = None
        if type(data) in (list, tuple):
            arrays = npt006.arrays_in(data)
            started = time.perf_counter()
            result = original(*args, **kwargs)
            elapsed = time.perf_counter() - started
        else:
            result = original(*args, **kwargs)
        if _is_compiling():
            return result
        if arrays is not None:
            self.record(npt006.CODE, call, nbytes=sum(array.nbytes for array in arrays), seconds=elapsed,
                        largest=len(arrays))
        elif isinstance(data, np.ndarray):
            if copy_test and npt003.tensor_copies(data, dtype, device, kwargs.get("requires_grad"),
                                                  kwargs.get("pin_memory")):
                self.record(npt003.CODE, call, nbytes=data.nbytes)
            elif legacy and (made := npt003.legacy_casts(data)) is not None:
                self.record(npt003.CODE, f"{call} {data.dtype}->{str(made).removeprefix('torch.')}",
                            nbytes=data.nbytes)
        if not legacy and dtype is None and (data.dtype == _FLOAT64 if arrays is None and type(data) not in (
                list, tuple) else isinstance(result, torch.Tensor) and result.dtype is torch.float64):
            self.made(result)
        if device is not None and not npt003.on_cpu(device) and isinstance(result, torch.Tensor):
            self.moved(result)
        return result

    def record(self, code: str, call: str, nbytes: int = 0, seconds: float = 0.0, largest: int = 0) -> None:
        site, through_data_loading = user_site()
        if site is None:
            return
        for observed in self.observe(code, site):
            observed.count += 1
            observed.nbytes += nbytes
            observed.seconds += seconds
            observed.largest = max(observed.largest, largest)
            observed.calls[call] += 1
            observed.through_data_loading |= through_data_loading

    # -- NPT004: origins and meetings -----------------------------------------------------------------------------
    def made(self, result: torch.Tensor) -> None:
        """A float64 tensor made from NumPy data without a dtype: tag it with where."""
        if not npt004.unasked_float64():
            return
        site, through_data_loading = user_site()
        if site is None:
            return
        self.origins.tag(result, npt004.Origin(site, through_data_loading))
        if self.watch is None:
            watch = npt004.MeetingWatch(self.origins, self.met)
            self.watch = watch if self.enter(watch) else None

    def met(self, origin: npt004.Origin, how: str, error: BaseException | None) -> None:
        site, _ = user_site()
        if site is None:
            return
        for observed in self.observe(npt004.CODE, origin.site):
            observed.count += 1
            observed.related[(site, how)] += 1
            observed.through_data_loading |= origin.through_data_loading
        if error is not None:
            _add_note(error, npt004.note(origin))

    # -- transfers: NPT005 (host to device), NPT007 (non-blocking device to host) --------------------------------
    def _to(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def to(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, *args, **kwargs)
            if result is tensor or _is_compiling():
                return result
            if tensor.is_cpu:
                if not result.is_cpu:
                    self.moved(result)
            elif _bool_argument(args, kwargs, "non_blocking") and npt007.device_to_host(tensor, result):
                self.copied_to_host(tensor, result)
            return result
        return to

    def _cuda(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def cuda(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, *args, **kwargs)
            if result is not tensor and tensor.is_cpu and not _is_compiling():
                self.moved(result)
            return result
        return cuda

    def _copy_(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def copy_(tensor: torch.Tensor, source: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, source, *args, **kwargs)
            if (_bool_argument(args, kwargs, "non_blocking") and isinstance(source, torch.Tensor)
                    and npt007.device_to_host(source, tensor) and not _is_compiling()):
                self.copied_to_host(source, tensor)
            return result
        return copy_

    def moved(self, result: torch.Tensor) -> None:
        site, _ = user_site()
        if site is None:
            return
        alive = self.kept_together.moved(site, result)
        if not alive:
            return
        nbytes = result.nbytes
        for observed in self.observe(npt005.CODE, site):
            observed.count += 1
            observed.nbytes += nbytes
            observed.largest = max(observed.largest, alive)
            observed.groups += alive == 1

    def copied_to_host(self, source: torch.Tensor, host: torch.Tensor) -> None:
        event = npt007.event_after_copy(source.device)
        site, _ = user_site()
        if event is not None and site is not None:
            self.expect_reads(host, event, site)

    def expect_reads(self, host: torch.Tensor, event: npt007.Event, site: Site) -> None:
        """Watch ``host``'s memory until ``event`` completes (the hooks call it at each non-blocking copy)."""
        self.pending.copied(host, event, site)
        if self.pending_watch is None:
            watch = npt007.PendingWatch(self.pending, self.used)
            self.pending_watch = watch if self.enter(watch) else None

    # -- NPT001, NPT002: the errors of .numpy(); NPT007: uses of pending host memory ---------------------------
    def _numpy(self, original: Callable) -> Callable:
        @functools.wraps(original)
        def numpy(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(tensor, *args, **kwargs)
            except (RuntimeError, TypeError) as error:
                self.numpy_failed(tensor, error)
                raise
        return numpy

    def used(self, func: Callable, copied_at: Site) -> None:
        site, _ = user_site()
        if site is None:
            return
        for observed in self.observe(npt007.CODE, site):
            observed.count += 1
            observed.calls[npt007.use_name(func)] += 1
            observed.related[(copied_at, "copied")] += 1

    def numpy_failed(self, tensor: torch.Tensor, error: BaseException) -> None:
        if npt001.raised_by(tensor, error):
            code, fix, call = npt001.CODE, npt001.FIX, "RuntimeError"
        elif npt002.raised_by(device := tensor.device.type, error):
            code, fix, call = npt002.CODE, npt002.FIX, device
        else:
            return
        site, _ = user_site()
        if site is None:
            return
        for observed in self.observe(code, site):
            observed.count += 1
            observed.calls[call] += 1
        _add_note(error, f"np2torch-audit: {code} at {site}: {fix}")


def _add_note(error: BaseException, note: str) -> None:
    if note not in getattr(error, "__notes__", ()):
        error.add_note(note)


def _enter_at_bottom(mode: torch.overrides.TorchFunctionMode) -> None:
    """Push ``mode`` under the modes this thread has entered (they stay on top, in their order)."""
    above = [_pop_mode() for _ in range(len(_get_current_function_mode_stack()))]
    _push_mode(mode)
    for other in reversed(above):
        _push_mode(other)


def _leave_at_bottom(mode: torch.overrides.TorchFunctionMode) -> None:
    """Take ``mode`` out of this thread's mode stack, wherever it is, the others staying in their order."""
    stack = _get_current_function_mode_stack()
    if not any(entry is mode for entry in stack):
        return
    above = []
    while True:
        entry = _pop_mode()
        if entry is mode:
            break
        above.append(entry)
    for other in reversed(above):
        _push_mode(other)


_installed: Hooks | None = None
_lock = threading.Lock()


def start(session: Recorder) -> Hooks:
    """Start telling ``session`` what happens; the first session installs the hooks."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = Hooks()
            _installed.install()
            workers.watch_forked_children(installed)
        _installed.sessions.append(session)
        return _installed


def stop(session: Recorder) -> None:
    """Stop telling ``session``; the last one takes the hooks out."""
    global _installed
    with _lock:
        if _installed is None or session not in _installed.sessions:
            return
        _installed.sessions.remove(session)
        if not _installed.sessions:
            _installed.uninstall()
            _installed = None


def installed() -> Hooks | None:
    return _installed
