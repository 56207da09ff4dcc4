"""Host synchronisation: non-blocking device-to-host copies, the syncs that complete them, and reads before (NPT007).

``x.to("cpu", non_blocking=True)`` (or ``cpu_tensor.copy_(x, non_blocking=True)``) only queues the copy: the host
tensor it gives is *pending*, marked on its ``Value`` with the copy call, until something waits for the device.
A sync (``torch.cuda.synchronize()``, ``stream.synchronize()``, a blocking copy to the host, ...) clears the mark
on every name of the function; branches join as any other fact (pending if pending on any path), loops get their
back-edge pass. A read of a pending tensor into Python or NumPy is recorded in ``Facts.host_reads_before_sync``.

A copy is followed inside the function (or module body) that made it, and into a function it is passed to (read
with that call's arguments): a function that reads a global or an attribute may run after a sync, so a read there
says nothing. A call of a function of the file whose body synchronises is a sync (the
summaries know), and so is a call the analysis cannot see into (an unknown decorator, a relative import): a
finding needs a read with no possible sync before it.
"""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .definitions import ClassInfo
from .facts import HostReadBeforeSync
from .values import Kind, Value, bool_literal

PENDING_ARRAY = "np2torch_lint.runtime.PendingArray"


class HostSyncMixin:
    """Pending host copies: made by ``non_blocking=True`` copies, cleared by syncs, reported when read."""

    def _host_sync_method(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str,
                          args: Args) -> Value | None:
        """Before ``receiver.method(...)`` is dispatched: a Value when NPT007 decides the result."""
        if bool_literal(args.keywords.get("non_blocking")) is True:
            copied = self._non_blocking_host_copy(node, func, receiver, method, args)
            if copied is not None:
                return copied
        if self._host_copies:
            if method in api.HOST_READING_TENSOR_METHODS:
                self._note_host_read(node, receiver, method)
            elif receiver.pending_copy is not None and method in ("to", "cuda") and receiver.kind is Kind.TENSOR:
                moved = self._tensor_move(node, receiver, "accelerator" if method == "cuda" else None, args)
                if moved.on_accelerator:  # a copy back to the device queues behind the pending one: nothing to wait
                    return moved.but(pending_copy=None)
        if is_sync_name(method) or (method == "result" and receiver.qualname == PENDING_ARRAY) or (
                self._is_blocking_host_copy(receiver, method, args)):
            self._synchronize()
        return None

    def _host_sync_call(self, node: cst.Call, callee: Value, args: Args) -> None:
        """Before a call of a function: reads of pending tensors by builtins and NumPy, and syncs. (A function of
        this file synchronises when its body does: ``summaries._call_function`` asks.)"""
        qualname = callee.qualname if callee.kind is Kind.REF else None
        if self._host_copies and qualname is not None and (
                qualname in api.HOST_READING_BUILTINS or qualname.startswith("numpy.")
                or qualname in api.HOST_READING_RUNTIME_HELPERS):
            for value in args.all_values():
                self._note_host_read(node, value, qualname)
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if callee.kind is Kind.LOCAL or is_sync_name(name):
            self._synchronize()  # the project's own code, not followed, may synchronise

    def _non_blocking_host_copy(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str,
                                args: Args) -> Value | None:
        """``x.to(<the CPU>, non_blocking=True)`` or ``host.copy_(x, non_blocking=True)``: a pending host tensor."""
        if method == "to" and receiver.kind in (Kind.TENSOR, Kind.UNKNOWN) and receiver.on_accelerator is not False:
            if self._destination_on_accelerator(None, args, None) is not False:
                return None  # not a copy to the host, or not one the code spells out
            tensor = receiver if receiver.kind is Kind.TENSOR else Value(Kind.TENSOR)
            self._host_copies[node] = (self.function_node, receiver)
            # a copy from a tensor on an accelerator only under a test is asynchronous only there
            return self._tensor_move(node, tensor, None, args).but(pending_copy=node, device_test=receiver.device_test)
        source = args.first
        if (method == "copy_" and receiver.kind is Kind.TENSOR and receiver.on_accelerator is False
                and source is not None and source.kind in (Kind.TENSOR, Kind.UNKNOWN)
                and source.on_accelerator is not False):
            self._host_copies[node] = (self.function_node, source)
            pending = receiver.but(pending_copy=node, device_test=source.device_test)
            if isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = pending  # copy_ fills the tensor in place
            return pending
        return None

    def _is_blocking_host_copy(self, receiver: Value, method: str, args: Args) -> bool:
        """``x.cpu()``, ``x.item()``, ``x.to("cpu")`` of a tensor that may be on a device: they wait for its stream."""
        if receiver.kind not in (Kind.TENSOR, Kind.UNKNOWN) or receiver.on_accelerator is False:
            return False
        if method in api.BLOCKING_HOST_COPY_METHODS:
            return True
        return method == "to" and bool_literal(args.keywords.get("non_blocking")) is not True and (
            self._destination_on_accelerator(None, args, None) is False)

    def _note_host_read(self, node: cst.Call, value: Value, via: str) -> None:
        copy = pending_copy_in(value)
        if copy is None:
            return
        function, source = self._host_copies[copy]
        # the function that made the copy, or one its caller handed the pending tensor to (read with that call's
        # arguments: what runs between the copy and the read is the callee's code up to here)
        if function is self.function_node or not self.generic_read:
            self.facts.host_reads_before_sync.append(HostReadBeforeSync(node, via, copy, source))

    def _synchronize(self) -> None:
        """Every copy this function made has landed: no name of the function, and no attribute of an object it
        holds, keeps a pending tensor."""
        self.syncs_seen += 1
        if not self._host_copies:
            return
        scope = self.scope
        while scope is not None:
            seen: set[str] = set()
            for layer in (scope.names, *scope.inherited):  # a branch reads what came before it through layers
                for name, value in layer.items():
                    if name in seen:
                        continue
                    seen.add(name)
                    synced = self._synced(value)
                    if synced is not value:
                        scope.names[name] = synced  # in the scope's own layer: inherited ones are never written
                    if isinstance(value.definition, ClassInfo) and value.definition.node is not None:
                        # ``self.host = x.to("cpu", non_blocking=True)`` (a class of another module is not written)
                        attributes = value.definition.attributes
                        for attribute, held in attributes.items():
                            attributes[attribute] = self._synced(held)
            scope = scope.parent

    def _synced(self, value: Value) -> Value:
        changes: dict[str, object] = {}
        if value.pending_copy is not None and (
                self._host_copies[value.pending_copy][0] is self.function_node or not self.generic_read):
            changes["pending_copy"] = None
        if value.element is not None:
            element = self._synced(value.element)
            if element is not value.element:
                changes["element"] = element
        if value.items:
            items = tuple(self._synced(item) for item in value.items)
            if any(new is not old for new, old in zip(items, value.items)):
                changes["items"] = items
        return value.but(**changes) if changes else value


def pending_copy_in(value: Value) -> cst.Call | None:
    """The pending copy behind a value, or behind an item of a list of values."""
    if value.pending_copy is not None:
        return value.pending_copy
    for part in (value.element, *(value.items or ())):
        if part is not None:
            copy = pending_copy_in(part)
            if copy is not None:
                return copy
    return None


def is_sync_name(name: str) -> bool:
    if name in api.SYNC_CALL_NAMES:
        return True
    name = name.lower()
    return "sync" in name and "async" not in name
