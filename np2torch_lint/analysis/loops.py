"""Loops: ``for``, ``while`` and comprehensions, read with a back-edge pass, and the per-item transfers in them that
NPT005 reports (collected, stacked, or used after the loop)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Callable, Iterable

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .facts import CallSite, CollectedTransfer
from .scope import Scope
from .syntax import parameters_frozen_by, reads_before_binding, runs_over_its_keys
from .values import UNKNOWN, Kind, Value, held_by_module, join, join_all

#: a per-item transfer waiting to count (``_note_collected``): its loop, how it was collected, the module whose code
#: made it, and the call through which that module's body was read (None: this module's own read)
Waiting = tuple[cst.CSTNode, str, object, CallSite | None]


@dataclass(slots=True)
class Loop:
    id: int
    node: cst.CSTNode
    #: iterating it cannot give "many arrays": a DataLoader, a literal display, a dict, the parameters of a model.
    not_a_collection: bool


class LoopsMixin:
    """Loops and comprehensions, and the per-item transfers made in them."""

    def _for(self, node: cst.For) -> None:
        iterable = self.eval(node.iter)
        self._note_iterated_after_the_loop(iterable)
        loop = self._new_loop(node, node.iter, iterable)

        def body() -> None:
            self.loops.append(loop)
            try:
                self._bind(node.target, self._iteration_item(iterable, loop))
                self._suite(node.body)
            finally:
                self.loops.pop()

        self._loop(node, body)
        self._parameters_frozen(node)
        if node.orelse is not None:
            self._suite(node.orelse.body)

    def _parameters_frozen(self, node: cst.For) -> None:
        """After ``for p in model.parameters(): p.requires_grad = False``, ``model`` is frozen, as after
        ``model.requires_grad_(False)``: what it gives does not require grad (G-NIA's victim network)."""
        owner = parameters_frozen_by(node)
        if isinstance(owner, cst.Name):
            module = self.eval_quietly(owner)
            if module.kind is Kind.NN_MODULE or module.choices is not None:
                self.scope.names[owner.value] = _frozen(module)

    def _while(self, node: cst.While) -> None:
        self.eval(node.test)
        self._loop(node, lambda: self._suite(node.body))
        if node.orelse is not None:
            self._suite(node.orelse.body)

    def _loop_exit(self, node: cst.Continue | cst.Break) -> None:
        """``continue``/``break``: what this path rebound reaches the loop's next iteration or the code after it,
        as the end of the body does (``losses.append(torch.tensor(0).cuda())`` then ``continue``)."""
        if self.loop_exits:
            start, exits = self.loop_exits[-1]
            scope = self.scope
            exits.append({key: value for key in start.rebound_in(scope) if (value := scope.lookup(key)) is not None})

    def _read_loop_body(self, body: Callable[[], None], scope: Scope) -> None:
        """One read of a loop body from ``scope``, which ends as the join of the body's end and of the paths that
        left it by ``continue`` or ``break``."""
        exits: list[dict[str, Value]] = []
        self.loop_exits.append((scope, exits))
        try:
            body()
        finally:
            self.loop_exits.pop()
        for rebound in exits:
            for key, value in rebound.items():
                current = scope.lookup(key)
                scope.names[key] = value if current is None else join(current, value)

    def _loop(self, node: cst.For | cst.While, body: Callable[[], None]) -> None:
        """Run a loop body that may run zero or more times.

        What comes round the back edge (``out = model(x)`` at the end of one iteration is what ``out.numpy()`` at
        the start of the next sees) reaches the body only through a name it may read before binding it
        (``syntax.reads_before_binding``). So the body is read once from the state before the loop, its facts held
        back: if the back edge changed none of those names, a second read would be this one again, and its facts
        stand. Otherwise they go, and the body is read again from the join of the state before the loop and the
        state at its end, recording the facts. Inside a silent read (a summary, the first pass of an outer loop
        nested too deep) the body is read once; nested loops cost at most twice per level, and deeper than
        ``_MAX_HELD_LOOPS`` the first read is silent, so the cost grows with nesting depth, not exponentially.
        """
        before = self.scope
        # a body read with a call's arguments records that call's facts, silently otherwise; only the outermost
        # such read takes its loops round twice (calls nested in it would multiply the cost)
        recording_call = (self.silent and self.call_facts is not None and self.facts is self.call_facts
                          and len(self.summaries_running) <= 1)
        if not self.silent or recording_call:
            held = self.held_loops < _MAX_HELD_LOOPS  # else the first read is silent: its facts go
            first_facts, saved_facts, saved_silent = self._fresh_facts(), self.facts, self.silent
            self.facts, self.silent = first_facts, saved_silent or not held
            if recording_call:
                self.call_facts = first_facts
            pending = len(self.pending_bodies)
            self.held_loops += held
            first_pass = before.copy()
            self.scope = first_pass
            try:
                self._read_loop_body(body, first_pass)
            finally:
                self.facts, self.silent, self.scope = saved_facts, saved_silent, before
                if recording_call:
                    self.call_facts = saved_facts
                self.held_loops -= held
            if held and not reads_before_binding(node, _changed_round_the_back_edge(before, first_pass)):
                self.facts.absorb(first_facts)
                before.join_from(before.copy(), first_pass)
                return
            del self.pending_bodies[pending:]  # functions defined in the body: read after the second pass
            before.join_from(before.copy(), first_pass)
        body_scope = before.copy()
        self.scope = body_scope
        try:
            self._read_loop_body(body, body_scope)
        finally:
            self.scope = before
        before.join_from(before.copy(), body_scope)

    def _new_loop(self, node: cst.CSTNode, iter_node: cst.BaseExpression, iterable: Value) -> Loop:
        return Loop(next(self._loop_ids), node, self._is_not_a_collection(iter_node, iterable) or (
            isinstance(node, cst.For) and self._runs_over_its_keys(node)))

    def _runs_over_its_keys(self, loop: cst.For) -> bool:
        found = self.loops_over_keys.get(loop)
        if found is None:
            found = self.loops_over_keys[loop] = runs_over_its_keys(loop)
        return found

    def _is_not_a_collection(self, iter_node: cst.BaseExpression, iterable: Value) -> bool:
        if iterable.kind in (Kind.DATALOADER, Kind.NN_MODULE, Kind.OTHER, Kind.STRING):
            return True
        if iterable.kind is Kind.SEQUENCE and iterable.qualname == api.COLUMNS_OF_ROWS:
            return True  # ``fields = zip(*batch)`` then ``for field in fields``
        if isinstance(iter_node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return True  # a handful of different things written out, e.g. ``(inputs, targets)``
        if _holds_one_item(iterable):
            return True  # one item (the one image a caller passed ``preprocess(*image_path)``): one transfer
        if _written_out(iterable) and len({item.kind for item in iterable.items or ()} - {Kind.UNKNOWN}) > 1:
            # ``batch = self._retrieve_batch(...)``, whose ``return`` writes out a tensor and three arrays: the fields
            # of one record, each moved once (PlaNet's replay memory), not many alike items
            return True
        if iterable.parameter is not None and _written_out(iterable):
            # the same, written out by a caller: ``to_cuda(real, fake)`` to ``def to_cuda(*tensors)``,
            # ``set_tensor_device([images, lengths, labels], device)``: different things, each moved once
            return True
        if iterable.kind is Kind.SEQUENCE and iterable.qualname == api.YIELDED_FIELDS:
            return True  # ``yield x, y`` of a batch generator, or a comprehension mapping each of its fields
        if isinstance(iter_node, cst.Call):
            func = iter_node.func
            if isinstance(func, cst.Attribute) and func.attr.value in api.NOT_A_COLLECTION_ITERATION:
                return True
            if isinstance(func, cst.Name) and func.value == "zip" and len(iter_node.args) == 1 and (
                    iter_node.args[0].star == "*"):
                return True  # ``zip(*batch)``: the fields of one batch (states, actions, ...), not many alike
            if isinstance(func, cst.Name) and func.value in ("zip", "enumerate", "reversed", "sorted", "list",
                                                             "tuple") and iter_node.args:
                # (``list(zip(*states))``: the same fields, in a list)
                return all(self._is_not_a_collection(arg.value, self.eval_quietly(arg.value))
                           for arg in iter_node.args if not (func.value == "enumerate" and arg.keyword))
        return False

    def _iteration_item(self, iterable: Value, loop: Loop) -> Value:
        item = self._element_of(iterable)
        return self._mark_item(item, loop.id)

    def _mark_item(self, item: Value, loop_id: int) -> Value:
        if item.kind is Kind.SEQUENCE and item.items is not None:  # zip/enumerate: mark the parts
            return item.but(items=tuple(self._mark_item(part, loop_id) for part in item.items), loop_item=loop_id,
                            transfer=None)
        return item.but(loop_item=loop_id, transfer=None)  # a list's items moved earlier are not moved here

    def _element_of(self, iterable: Value) -> Value:
        if iterable.choices is not None:
            return join_all([self._element_of(choice) for choice in iterable.choices]) or UNKNOWN
        if iterable.kind is Kind.SEQUENCE:
            if iterable.element is not None:
                return iterable.element
            if iterable.items and not iterable.open_ended:
                return join_all(list(iterable.items)) or UNKNOWN
            return UNKNOWN
        if iterable.kind is Kind.MAPPING:
            return Value(Kind.STRING) if iterable.keys is not None else UNKNOWN  # a dict gives its keys
        if iterable.kind is Kind.NDARRAY:
            return iterable.but(kind=Kind.NUMPY_VALUE, loop_item=None, items=None)
        if iterable.kind is Kind.TENSOR:
            return iterable.but(loop_item=None, transfer=None)
        if iterable.kind is Kind.NN_MODULE and iterable.element is not None:
            return held_by_module(iterable, iterable.element)  # ``for layer in self.layers`` of an ``nn.ModuleList``
        return UNKNOWN

    def _current_loop(self) -> Loop | None:
        return self.loops[-1] if self.loops else None

    def _note_collected(self, value: Value, how: str, stacked_by: cst.Call | None = None) -> bool:
        """``value`` was appended to a list or stored in one: a per-item transfer in this loop is batchable.
        The transfer of an item of unknown kind counts only once the items are stacked: True when it waits for
        that (``_note_stacked``)."""
        loop = self._current_loop()
        if value.transfer is None or loop is None or value.loop_item != loop.id or loop.not_a_collection:
            return False
        if value.transfer_needs_stack and stacked_by is None:
            self.transfers_awaiting_stack[value.transfer] = (loop.node, how, self.current_module, None)
            return True
        self.facts.collected_transfers.append(CollectedTransfer(value.transfer, loop.node, how, stacked_by))
        return False

    def _note_kept_for_after_the_loop(self, transfer: cst.Call | None, listed: cst.BaseExpression) -> None:
        """``rewards.append(torch.FloatTensor(r).to(device))`` each step of a loop whose body reads ``rewards``
        nowhere else: the moved items wait, unused, for the code after the loop. They count once a function of the
        project is given the list there, or an item of it is read (``_note_used_after_the_loop``), as they do once
        it is stacked."""
        loop = self._current_loop()
        if transfer is None or loop is None or not isinstance(listed, cst.Name):
            return
        if only_appended_to(loop.node, listed.value):
            self.transfers_awaiting_use[transfer] = (loop.node, "append", self.current_module, None)

    def _note_used_after_the_loop(self, values: list[Value]) -> None:
        """Lists of per-step transfers that their loop only appended to, used after it: given to a function of the
        project (``compute_returns(next_value, rewards, masks)``) or an item read (``rewards[t] + gamma * ret``).
        Each step's copy could have waited for one batched copy here."""
        if self.transfers_awaiting_use:
            self._note_items_used_after_the_loop(value.element for value in values if value.kind is Kind.SEQUENCE)

    def _note_iterated_after_the_loop(self, iterable: Value) -> None:
        """``for reward in rewards`` after the loop that appended a per-step transfer to ``rewards`` each time
        round, or over ``zip(values, rewards)``, ``reversed(rewards)``: every item is read, as ``rewards[t]`` reads
        one."""
        if not self.transfers_awaiting_use:
            return
        element = self._element_of(iterable)
        parts = element.items if element.kind is Kind.SEQUENCE and element.items is not None else ()
        self._note_items_used_after_the_loop((element, *parts))

    def _note_items_used_after_the_loop(self, items: Iterable[Value | None]) -> None:
        """Items of lists of per-step transfers, read after the loop that appended them."""
        for item in items:
            waiting = self.transfers_awaiting_use.get(item.transfer) if item is not None and (
                item.transfer is not None) else None
            # (in the module whose loop appended them: a list handed back to another module's code and used there
            # is far from its loop, and its items seldom alike, as a stack would show)
            if waiting is not None and waiting[2] == self.current_module and all(
                    loop.node is not waiting[0] for loop in self.loops):
                self._note_waiting_transfer(item.transfer, waiting)

    def _note_stacked(self, qualname: str | None, args: Args) -> None:
        """``torch.stack(frames)``/``torch.cat(frames)`` of a list that per-item transfers of unknown items were
        appended to: they were tensors (nothing else stacks), moved one by one."""
        first = args.first
        if qualname not in api.STACKING or first is None or first.kind is not Kind.SEQUENCE or first.element is None:
            return
        transfer = first.element.transfer
        waiting = self.transfers_awaiting_stack.get(transfer) if transfer is not None else None
        if waiting is not None and not self.torch_function_overridden:
            self._note_waiting_transfer(transfer, waiting)

    def _note_waiting_transfer(self, transfer: cst.Call, waiting: Waiting) -> None:
        """A per-item transfer that waited (for a stack, for a use after its loop) counts: in the module whose code
        made it, which is another one where a body of that module was read for a call (``buffer.sample()``, whose
        list this module stacks), through that call."""
        loop, how, module, through = waiting
        self._facts_of(module).collected_transfers.append(CollectedTransfer(transfer, loop, how, through=through))

    def _name_waiting_transfers(self, site: CallSite, stacks_before: int, uses_before: int) -> None:
        """The transfers a read of another module's body for the call at ``site`` left waiting hold through it."""
        for registry, before in ((self.transfers_awaiting_stack, stacks_before),
                                 (self.transfers_awaiting_use, uses_before)):
            # (the entries the read added are the last ones; giving them a call changes no key, so the walk is safe)
            for transfer, (loop, how, module, through) in islice(registry.items(), before, None):
                if through is None:
                    registry[transfer] = (loop, how, module, site)

    def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp,
                       collected: bool | None = None) -> Value:
        before = self.scope
        self.scope = Scope(before)
        loops_before = len(self.loops)
        try:
            comp_for: cst.CompFor | None = node.for_in
            while comp_for is not None:
                iterable = self.eval(comp_for.iter)
                loop = self._new_loop(node, comp_for.iter, iterable)
                self.loops.append(loop)
                self._bind(comp_for.target, self._iteration_item(iterable, loop))
                for condition in comp_for.ifs:
                    self.eval(condition.test)
                comp_for = comp_for.inner_for_in
            if isinstance(node, cst.DictComp):
                self.eval(node.key)
                return Value(Kind.MAPPING, element=self.eval(node.value).but(loop_item=None, transfer=None))
            element = self.eval(node.elt)
            if collected is None:
                collected = not isinstance(node, cst.GeneratorExp)
            awaits_stack = collected and self._note_collected(element, "comprehension", stacked_by=self.stacking_call)
            element = element.but(loop_item=None, transfer=element.transfer if awaits_stack else None)
            fields = _fields_mapped(node, iterable)
            if fields is not None:  # ``[torch.from_numpy(part) for part in batch]``: one per field, still fields
                return Value(Kind.SEQUENCE, element=element, items=(element,) * fields, qualname=api.YIELDED_FIELDS)
            single = _single_item_mapped(node, iterable)
            if single:  # ``[cv2.imread(p) for p in paths]`` of the one path a caller passed: still one item
                return Value(Kind.SEQUENCE, element=element, items=(element,))
            return Value(Kind.SEQUENCE, element=element)
        finally:
            del self.loops[loops_before:]
            self.scope = before


def _holds_one_item(value: Value) -> bool:
    """Whether ``value`` is a sequence known to hold exactly one item."""
    return value.kind is Kind.SEQUENCE and value.items is not None and len(value.items) == 1 and not value.open_ended


def _written_out(value: Value) -> bool:
    """Whether ``value`` is a list or tuple whose items are each known: a display or the separate arguments of a
    call (a list that grew in a loop, or one spread into the call with ``*``, has no known items)."""
    return value.kind is Kind.SEQUENCE and value.items is not None and not value.open_ended and (
        value.keys is None and value.qualname is None)


def _single_item_mapped(node: cst.ListComp | cst.SetComp | cst.GeneratorExp, iterable: Value) -> bool:
    """Whether a comprehension maps, with no ``if``, a sequence known to hold exactly one item."""
    comp_for = node.for_in
    return comp_for.inner_for_in is None and not comp_for.ifs and _holds_one_item(iterable)


def _fields_mapped(node: cst.ListComp | cst.SetComp | cst.GeneratorExp, iterable: Value) -> int | None:
    """How many items a comprehension gives that maps each field a generator yielded (``yield x, y``), once, with
    no ``if``: None for any other."""
    comp_for = node.for_in
    if comp_for.inner_for_in is not None or comp_for.ifs or isinstance(node, cst.SetComp):
        return None
    if iterable.kind is not Kind.SEQUENCE or iterable.qualname != api.YIELDED_FIELDS or iterable.items is None or (
            iterable.open_ended):
        return None
    return len(iterable.items)


def _changed_round_the_back_edge(before: Scope, end: Scope) -> set[str]:
    """The names that hold more at the end of an iteration than before the loop (or were not bound before it)."""
    changed = set()
    for name in before.rebound_in(end):
        old = before.lookup(name)
        if old is None or join(old, end.lookup(name) or UNKNOWN) != old:
            changed.add(name)
    return changed


#: loops nested inside one another whose first read is held back (``_loop``); deeper ones read silently first
_MAX_HELD_LOOPS = 3


def only_appended_to(loop: cst.CSTNode, name: str) -> bool:
    """Whether ``loop`` (its header and body) uses ``name`` only as ``name.append(...)``: the list is neither read
    nor rebound there."""
    uses: list[cst.Name] = []
    appends: set[int] = set()

    def walk(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Name) and node.value == name:
            uses.append(node)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(
                node.func.value, cst.Name) and node.func.value.value == name and node.func.attr.value == "append":
            appends.add(id(node.func.value))
        for child in node.children:
            walk(child)

    walk(loop)
    return bool(uses) and all(id(use) in appends for use in uses)


def _frozen(module: Value) -> Value:
    """A module (or each module it may be) with its parameters frozen."""
    if module.choices is not None:
        return module.but(choices=tuple(_frozen(choice) for choice in module.choices))
    return module.but(has_params=False) if module.kind is Kind.NN_MODULE else module
