"""Calls: arguments, dispatch to what is called, builtins, modules' outputs and methods."""

from __future__ import annotations

import dataclasses

import libcst as cst

from . import known_apis as api
from .arguments import STARRED, Args
from .containers import ADDING_METHODS
from .control_flow import ControlFlowMixin
from .definitions import BoundCall, ClassInfo, FunctionInfo, RecordType, record_of
from .models import Model
from .module_parameters import may_have_unnamed_members
from .syntax import formatted_name, subscripted_name
from .values import (NONE, UNKNOWN, Kind, Value, device_test_of, either_all, held_by_module, join, join_all, keyed,
                     member, sequence, with_key)


class CallsMixin:
    """Calls: arguments, dispatch to what is called, builtins, modules' outputs and methods."""

    def _call(self, node: cst.Call) -> Value:
        self._note_escape(node)
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value)
            method = func.attr.value
            if receiver.kind is not Kind.REF:
                args = self._eval_args(node, None)
                return self._call_method(node, func, receiver, method, args)
            callee = member(receiver, method)
            if self.project is not None:
                callee = self._from_project(callee)
        else:
            callee = self.eval(func)
        qualname = callee.qualname if callee.kind is Kind.REF else None
        return self._call_value(node, callee, self._eval_args(node, qualname))

    def _eval_args(self, node: cst.Call, callee: str | None) -> Args:
        collects = callee in api.COLLECTORS
        stacks_one_argument = callee == "torch.stack" and len(node.args) >= 1 and isinstance(
            node.args[0].value, (cst.ListComp, cst.GeneratorExp))
        positional: list[Value] = []
        positional_nodes: list[cst.BaseExpression] = []
        keywords: dict[str, Value] = {}
        keyword_nodes: dict[str, cst.BaseExpression] = {}
        for arg in node.args:
            saved_stacking, self.stacking_call = self.stacking_call, None
            if stacks_one_argument and arg is node.args[0]:
                self.stacking_call = node
            try:
                if collects and isinstance(arg.value, cst.GeneratorExp):
                    value = self._comprehension(arg.value, collected=True)
                else:
                    value = self.eval(arg.value)
            finally:
                self.stacking_call = saved_stacking
            if arg.keyword is not None:
                keywords[arg.keyword.value] = value
                keyword_nodes[arg.keyword.value] = arg.value
            elif arg.star:
                keywords["*" + arg.star] = value
            else:
                positional.append(value)
                positional_nodes.append(arg.value)
        return Args(positional, keywords, positional_nodes, keyword_nodes)

    def _call_value(self, node: cst.Call, callee: Value, args: Args) -> Value:
        if callee.choices is not None:  # ``self.actor(state)`` of an attribute two reads of ``reset()`` built
            return join_all([self._call_value(node, choice, args) for choice in callee.choices]) or UNKNOWN
        self._host_sync_call(node, callee, args)
        kind = callee.kind
        if kind is Kind.REF and callee.items is not None:
            made = self._call_one_of(node, callee.items, args)
            if callee.device_test is not None and made.on_accelerator and made.device_test is None:
                # ``Tensor(n)`` of ``Tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor``: on the
                # accelerator only where ``use_cuda`` is true
                made = made.but(device_test=callee.device_test)
            return made
        if kind is Kind.REF:
            result = self._call_qualname(node, callee.qualname or "", args)
            self._note_stacked(callee.qualname, args)
            return self._made_from_item(self._stacked_moves(callee.qualname, args, result), args)
        definition = callee.definition
        if kind is Kind.FUNCTION and isinstance(definition, FunctionInfo):
            return self._call_function(definition, args, node=node)
        if kind is Kind.FUNCTION and isinstance(definition, BoundCall):
            return self._call_function(definition.function, definition.arguments(args), definition.receiver, node)
        if kind is Kind.CLASS and isinstance(definition, ClassInfo):
            return self._call_class(definition, args, node)
        if kind is Kind.CLASS and isinstance(definition, RecordType):  # ``Transition(s, a, r)``
            values = record_of(definition.fields, args)
            return sequence(values, join_all(list(values)), definition.fields)
        if isinstance(definition, ClassInfo):  # an object of a class of this file
            return self._call_instance(callee, definition, args, node)
        if kind is Kind.NN_MODULE:
            return self._module_output(callee, args)
        if kind is Kind.INSTANCE and callee.qualname:
            model = self.models.call(callee.qualname + ".__call__")
            if model is not None:  # ``transforms.ToTensor()(img)``
                return self._made_from_item(self._apply_model(node, callee.qualname + ".__call__", model, args), args)
        self._spoil_passed_containers(args)
        # what an unknown callable does with a float64 tensor is unknown: it may decide (``G(z)`` of a pickled network)
        self.facts.dtypes_may_be_decided(args.tensors())
        # ``self.perturbation(x[i])``: unknown, but each item's own; ``model(x.cuda())`` of an unknown model: where
        # it is used as a tensor, on the accelerator. (Not ``model(x)`` of a model only moved there: the move may be
        # one branch's, ``if torch_model: net = net.to(device)``, or an attribute's moved back in place,
        # ``obj.body.cpu()``, which the analysis does not follow, and a host ``x`` fails in the call itself.)
        return self._made_from_item(self._placed_like_inputs(None, args), args)

    def _made_from_item(self, result: Value, args: Args) -> Value:
        """``np.asarray(a)``, ``torch.relu(t)``, ``transform(a)``: made from a loop's item (an array, a tensor or
        unknown), the result is that item's too; what it is stays what the call gives. So with a parameter of the
        function being read (``Value.parameter``). (Not an object, ``Image.open(path)``: the images a loop loads
        from files are seldom of one size, and a tensor made from one item is moved without waiting for a stack.)"""
        if not (result.is_numpy or result.kind in (Kind.TENSOR, Kind.UNKNOWN)):
            return result
        sources = [v for v in args.positional if v.is_numpy or v.kind in (Kind.TENSOR, Kind.UNKNOWN)]
        if result.loop_item is None:
            item = next((v.loop_item for v in sources if v.loop_item is not None), None)
            result = result if item is None else result.but(loop_item=item)
        if result.parameter is None:
            parameter = next((v.parameter for v in sources if v.parameter is not None), None)
            result = result if parameter is None else result.but(parameter=parameter)
        return result

    def _stacked_moves(self, qualname: str | None, args: Args, result: Value) -> Value:
        """``torch.stack([torch.from_numpy(frame[p]).to(device) for p in ...])`` in a function: the stacked
        tensor is still its parameter ``frame`` moved (``Value.moves_parameter``)."""
        first = args.first
        if qualname not in api.STACKING or first is None or first.kind is not Kind.SEQUENCE or first.element is None:
            return result
        moved = first.element.moves_parameter
        return result if moved is None or result.kind is not Kind.TENSOR else result.but(moves_parameter=moved)

    def _attribute_named_by(self, owner: Value, name: cst.BaseExpression) -> Value | None:
        """``getattr(obj, "x")`` is ``obj.x``; ``getattr(self, f"encoder_{size}")`` is one of the attributes whose
        names fit, joined: every one the class assigns with that prefix and suffix, when there is one and none is
        a method or may be added by name (``setattr``, ``add_module``), which the attributes would not show."""
        if isinstance(name, (cst.SimpleString, cst.ConcatenatedString)):
            text = name.evaluated_value
            return self._attribute_of_value(owner, text) if isinstance(text, str) else None
        pattern = formatted_name(name)
        info = owner.definition
        if pattern is None or not isinstance(info, ClassInfo) or owner.choices is not None:
            return None
        self._class_attributes_known(info)
        prefix, suffix = pattern
        names: set[str] = set()
        for each in info.lineage():
            if may_have_unnamed_members(each):
                return None
            names.update(each.attributes, each.class_names, each.methods, each.unknown_attributes)
        fitting = [n for n in names if n.startswith(prefix) and n.endswith(suffix) and len(n) > len(prefix + suffix)]
        if not fitting or any(info.method(n) is not None or info.attribute(n) is None for n in fitting):
            return None
        found = [self._class_attribute(owner, info, n) for n in sorted(fitting)]
        return None if any(value is None for value in found) else join_all(found)

    def _call_builtin(self, name: str, args: Args) -> Value:
        first = args.first
        if name in ("list", "tuple", "sorted", "reversed") and first is not None:
            return Value(Kind.SEQUENCE, element=self._element_of(first))
        if name in ("list", "tuple") and not args.keywords:
            return Value(Kind.SEQUENCE, items=())  # ``list()``: an empty one, as ``[]`` is
        if name == "zip" and not args.positional and set(args.keywords) == {STARRED}:
            # ``zip(*rows)``: the columns of rows of known length (``Transition(*zip(*transitions))``)
            # (``qualname`` says so, for a loop over it: the fields of one batch, not many alike, loops.py)
            row = self._element_of(args.keywords[STARRED])
            if row.kind is Kind.SEQUENCE and row.items is not None and not row.open_ended:
                return Value(Kind.SEQUENCE, qualname=api.COLUMNS_OF_ROWS,
                             items=tuple(Value(Kind.SEQUENCE, element=item) for item in row.items))
            return Value(Kind.SEQUENCE, qualname=api.COLUMNS_OF_ROWS,
                         element=Value(Kind.SEQUENCE, element=self._element_of(row)))
        if name == "zip":
            parts = tuple(self._element_of(v) for v in args.positional)
            return Value(Kind.SEQUENCE, element=sequence(parts))
        if name == "enumerate" and first is not None:
            index = Value(Kind.NUMBER, dtype="int")
            return Value(Kind.SEQUENCE, element=sequence((index, self._element_of(first))))
        if name == "range":
            return Value(Kind.SEQUENCE, element=Value(Kind.NUMBER, dtype="int"))
        if name == "super":
            return self._super_object(args)
        if name == "dict":  # ``dict(loss=loss, **extra)``: the keywords are its keys
            if any(key.startswith("*") for key in args.keywords) or args.positional:
                return Value(Kind.MAPPING)
            values = tuple(args.keywords.values())
            return sequence(values, join_all(list(values)), tuple(args.keywords), Kind.MAPPING)
        if name == "next" and first is not None:
            return self._element_of(first)
        if name == "iter" and first is not None:
            return first if first.kind is Kind.SEQUENCE else Value(Kind.SEQUENCE, element=self._element_of(first))
        if name == "sum" and first is not None:
            # ``sum(losses) / len(losses)`` of an epoch's losses: ``0 + l0 + l1 + ...`` is a tensor that requires grad
            # and lives where the items do (a bool tensor sums to an int64 one)
            element = self._element_of(first)
            if element.kind is Kind.TENSOR:
                return Value(Kind.TENSOR, dtype=None if element.dtype == "bool" else element.dtype,
                             requires_grad=element.requires_grad, on_accelerator=element.on_accelerator,
                             device_test=element.device_test)
            return UNKNOWN
        if name == "abs" and first is not None and first.kind in (Kind.TENSOR, Kind.NDARRAY, Kind.NUMBER,
                                                                  Kind.NUMPY_VALUE):
            # ``abs(x.mean()) < 1e-4``: ``x.__abs__()``, of its dtype and where it is (it decides nothing)
            return first.but(items=None, element=None, literal=None)
        if name in ("len", "int", "float", "bool", "str", "repr", "print", "isinstance", "hash", "id"):
            return Value(Kind.NUMBER, dtype={"float": "float", "bool": "bool", "isinstance": "bool"}.get(name, "int"))
        return UNKNOWN

    def _module_output(self, module: Value, args: Args) -> Value:
        inputs = args.all_values()
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        self._note_module_dtype(module, args)
        if self.grad_enabled is False:
            requires_grad: bool | None = False
        elif module.has_params:
            requires_grad = True if self.grad_enabled else None
        elif module.has_params is False:  # a loss or activation: its inputs decide
            requires_grad = self._result_requires_grad(tensors, inputs_known=len(tensors) == len(inputs))
        else:
            requires_grad = None
        on_accelerator = either_all([module.on_accelerator, *(v.on_accelerator for v in tensors)])
        return Value(Kind.TENSOR, requires_grad=requires_grad, on_accelerator=on_accelerator,
                     device_test=device_test_of([module, *tensors]))

    def _note_module_dtype(self, module: Value, args: Args) -> None:
        """A module converted with ``.double()`` takes float64 on purpose: what is fed to it was decided."""
        if module.dtype == "float64":
            self.facts.dtypes_may_be_decided(args.tensors())

    def _call_one_of(self, node: cst.Call, choices: tuple[Value, ...], args: Args) -> Value:
        """A call of one of several library callables chosen at run time: a NumPy -> torch conversion when they
        all convert (the legacy ``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``), else what
        they all give, joined, with no facts recorded."""
        if self.project is not None:
            found = tuple(self._from_project(choice) for choice in choices)
            if all(choice.kind is not Kind.REF for choice in found):
                # ``from models.Baseline import VAE`` on one branch, ``from models.Vamp import VAE`` on another: the
                # project's classes, called as any of the project's choices is
                return self._call_value(node, Value(Kind.UNKNOWN, choices=found), args)
        qualnames = [choice.qualname or "" for choice in choices]
        models = [self.models.call(qualname) for qualname in qualnames]
        if all(model is not None and "converts" in model.params for model in models):
            return self._numpy_to_tensor(node, qualnames[0], models[0], args, choices=dict(zip(qualnames, models)))
        saved, self.facts = self.facts, self._fresh_facts()
        try:
            return join_all([self._call_value(node, choice, args) for choice in choices]) or UNKNOWN
        finally:
            self.facts = saved

    def _call_qualname(self, node: cst.Call, qualname: str, args: Args) -> Value:
        if qualname in api.RECORD_FACTORIES and len(node.args) >= 2:
            fields = _field_names(node.args[1].value)
            if fields is not None:
                return Value(Kind.CLASS, definition=RecordType(fields))
        if qualname == "builtins.map" and len(args.positional) == 2:
            return self._mapped(node, args.positional[0], self._element_of(args.positional[1]))
        if qualname == "builtins.isinstance":
            # ``is_torch = isinstance(f0, torch.Tensor)`` of a value the analysis knows: that boolean, so that a later
            # ``... if is_torch else np.log(f0)`` is decided as the test itself would be
            outcome = self.test_outcome(node)
            if outcome is not None:
                return Value(Kind.NUMBER, dtype="bool", literal=str(outcome))
        if qualname == "builtins.getattr" and len(node.args) in (2, 3) and len(args.positional) == len(node.args):
            found = self._attribute_named_by(args.positional[0], node.args[1].value)
            if found is not None:
                return found if len(args.positional) == 2 else join(found, args.positional[2])
        if qualname.startswith("builtins."):
            return self._call_builtin(qualname[len("builtins."):], args)
        available = api.ACCELERATOR_AVAILABILITY.get(qualname)
        if available is not None:  # ``torch.cuda.is_available()``: a flag that is this device test
            return Value(Kind.NUMBER, dtype="bool", device_test=available)
        model = self.models.call(qualname)
        selectors = self.models.selectors.get(qualname)
        if selectors:  # ``envpool.make(task, env_type="gym")``: the row for that string
            model = next((s.model for s in selectors if _string_argument(args, s.name, s.position) == s.literal),
                         model)
        if model is None:
            self._spoil_passed_containers(args)  # it may fill a list it is given
        result = UNKNOWN if model is None else self._apply_model(node, qualname, model, args)
        return self._numpy_call_layout(node, qualname, args, result) if qualname.startswith("numpy.") else result

    def _call_method(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str,
                     args: Args) -> Value:
        if receiver.choices is not None:  # ``buffer.sample(64)`` of a buffer of one class or another
            self.dropped_call = None  # nothing moves in place that may not be a module
            changed = func.value.value if isinstance(func.value, cst.Name) else None
            before = self.scope.names.get(changed) if changed is not None else None
            joined = join_all([self._call_method(node, func, choice, method, args)
                               for choice in receiver.choices]) or UNKNOWN
            if changed is not None and self.scope.names.get(changed) is not before:
                # ``model.cuda()`` of a network of one class or another: each choice's call changed the name to its
                # own result in place, the last one winning; it holds each of them
                self.scope.names[changed] = joined
            return joined
        decided = self._host_sync_method(node, func, receiver, method, args)
        if decided is not None:
            return decided
        kind = receiver.kind
        if method in ADDING_METHODS:
            self._container_mutation(func, receiver, method, args)
        if kind is Kind.SEQUENCE:
            return self._sequence_method(func, receiver, method, args)
        if kind is Kind.MAPPING:
            return self._mapping_method(func, receiver, method, args)
        if kind is Kind.UNKNOWN and method == "append" and args.first is not None:
            self._note_collected(args.first, "append")  # ``self.batches.append(x.cuda())``: still collected
        if kind is Kind.UNKNOWN and self._moves_module_in_place(node, func, method):
            receiver, kind = Value(Kind.NN_MODULE), Kind.NN_MODULE
        if kind is Kind.UNKNOWN and receiver.on_accelerator and method in api.TENSOR_ONLY_METHODS:
            # ``_placed_like_inputs``: what a network's own method made from tensors on an accelerator, used as a
            # tensor, is one there
            receiver, kind = Value(Kind.TENSOR, on_accelerator=True, device_test=receiver.device_test,
                                   loop_item=receiver.loop_item), Kind.TENSOR
        if kind is Kind.UNKNOWN:
            move = self.models.call(f"torch.Tensor.{method}")
            if move is not None and move.kind == "move":
                # ``batch.cuda()``, ``x.to(device)``: only tensors (and modules) move; where the result is later
                # used as a tensor, it is one on that device. Nothing else of ``batch`` is known.
                # A loop's item moved this way is a tensor only where the moved items are stacked
                # (``torch.stack([image.to(device) for image in images])``, or appended to a list that is): stack
                # and cat take nothing else, unless a class of the file defines ``__torch_function__``.
                per_item = receiver.loop_item is not None and not self.torch_function_overridden
                tensor = Value(Kind.TENSOR, dtype=receiver.dtype, loop_item=receiver.loop_item if per_item else None,
                               parameter=receiver.parameter)
                moved = self._apply_model(node, f"torch.Tensor.{method}", move, args, tensor)
                if moved.moves_parameter is not None:
                    moved = moved.but(moves_parameter=dataclasses.replace(
                        moved.moves_parameter, item_kind_unknown=True, needs_stack=True))
                return moved.but(transfer_needs_stack=True) if moved.transfer is not None else moved
        definition = receiver.definition
        found = definition.method(method) if isinstance(definition, ClassInfo) else None
        self._note_method_call(receiver, method, found)
        if isinstance(definition, ClassInfo):
            if found is not None:
                is_class = receiver.kind is Kind.CLASS
                if is_class and found.role == "method":
                    return self._call_function(found, args)  # ``Class.method(obj, ...)``
                if definition.seen_from is not None and not is_class:  # ``super().sample(n)``: on the object itself
                    receiver = receiver.but(definition=definition.seen_from)
                return self._call_function(found, args, receiver if not is_class or found.role == "classmethod"
                                           else None, node)
            stored = self._attribute_of(definition, method)
            if stored is not None:  # ``self.encoder(x)``: an attribute that holds something callable
                return self._call_value(node, held_by_module(receiver, stored), args)
            if receiver.kind is Kind.CLASS:
                return UNKNOWN
        owner = class_of(receiver)
        model = None if owner is None else self.models.call(f"{owner}.{method}")
        if model is None and method not in api.LOGGING_METHODS and (kind in (Kind.UNKNOWN, Kind.TENSOR) or (
                kind is Kind.NN_MODULE and method not in api.NN_MODULE_STORING_METHODS)):
            # a method of an object the analysis does not know, or a network's own method, may cast a float64 tensor
            # (``G.mapping(z)`` of a network loaded from a pickle); so may a tensor's method no row models (an
            # in-place one casts into the tensor's dtype), or the receiver was only taken for a tensor
            self.facts.dtypes_may_be_decided(args.tensors())
        if model is None and kind is Kind.UNKNOWN:
            # ``clip.get_frame(n + i)`` in a loop over ``i``: unknown, but each item's own, as ``clip[n + i]`` is
            item = next((v.loop_item for v in args.all_values() if v.loop_item is not None), None)
            result = self._placed_like_inputs(receiver, args, loop_item=item)
            cast = self.models.call(f"torch.Tensor.{method}")
            if cast is not None and cast.dtype is not None and "decides-dtype" in cast.flags:
                # ``self.model.get_logits(x).double()``: where it meets a tensor it is one, of the dtype it asked for
                result = result.but(dtype=cast.dtype)
        elif model is None:
            result = self._placed_like_inputs(receiver, args) if kind in (Kind.NN_MODULE, Kind.TENSOR) else UNKNOWN
        else:
            result = self._apply_model(node, f"{owner}.{method}", model, args, receiver)
            if model.kind in _IN_PLACE_KINDS or "in-place" in model.flags:
                changed = _changed_name(func.value, receiver)
                if changed is not None:
                    self.scope.names[changed] = result  # in place: the name now holds the changed value
        return self._numpy_method_layout(func, receiver, method, args, result) if receiver.is_numpy else result

    def _placed_like_inputs(self, receiver: Value | None, args: Args, loop_item: int | None = None) -> Value:
        """What a method no row models (a network's own ``model.log_likelihood(x)``, ``vae.reconstruct(x)``) or an
        unknown callable gives: unknown, but computed from its receiver and tensors, so where it is used as a tensor
        (``TENSOR_ONLY_METHODS``) it is on an accelerator if one of them may be. Nothing else of it is known."""
        # (``args.tensors()``: the tensors of a list given, too)
        sources = [v for v in (receiver, *args.all_values(), *args.tensors()) if v is not None and v.kind in (
            Kind.TENSOR, Kind.NN_MODULE, Kind.UNKNOWN)]
        if not any(v.on_accelerator for v in sources):
            return UNKNOWN if loop_item is None else Value(Kind.UNKNOWN, loop_item=loop_item)
        return Value(Kind.UNKNOWN, on_accelerator=True, device_test=device_test_of(sources), loop_item=loop_item)

    def _moves_module_in_place(self, node: cst.Call, func: cst.Attribute, method: str) -> bool:
        """``model.cuda()`` as a statement, on a name not known: only a module moves in place (a tensor's ``.cuda()``
        gives a copy, which the statement drops), so the name is a module, and from here where the call moved it."""
        return node is self.dropped_call and isinstance(func.value, cst.Name) and method in self.models.module_moves

    def _sequence_method(self, func: cst.Attribute, sequence: Value, method: str, args: Args) -> Value:
        if method == "append" and args.first is not None:
            appended = args.first
            if appended.transfer_per_step and not self._only_appended(args.positional_nodes[0], appended.transfer):
                appended = appended.but(transfer=None, transfer_per_step=False)  # used on the device this step too
            awaits_stack = self._note_collected(appended, "append")
            if awaits_stack and appended.transfer_per_step:
                self._note_kept_for_after_the_loop(appended.transfer, func.value)
            holder = func.value
            key = _literal_key(holder)
            # an unknown item's transfer stays on the list's element until the list is stacked
            element = appended.but(loop_item=None, transfer=appended.transfer if awaits_stack else None)
            if isinstance(holder, cst.Name):
                held = sequence.element.transfer if sequence.element is not None else None
                self.scope.names[holder.value] = _grown(sequence, element, keeps_its_transfer=(
                    held is not None and held not in self.transfers_awaiting_stack))
            elif (name := subscripted_name(holder)) is not None:
                container = self.scope.lookup(name)
                if container is not None and container.kind is Kind.MAPPING and key is not None:
                    # ``batch["states"].append(state)``: that key of the dict holds the grown list
                    self.scope.names[name] = with_key(container, key, _grown(sequence, element))
                elif container is not None and container.kind in (Kind.MAPPING, Kind.SEQUENCE) and (
                        container.qualname is None):
                    # ``history[phase].append(error)``, ``weight[i].append(w)``: any of its lists may be the one
                    self.scope.names[name] = _each_list_grown(container, element)
        elif method == "extend" and args.first is not None and isinstance(func.value, cst.Name):
            # ``true_boxes.extend(boxes)`` of ``boxes = [b.to(device) for b in boxes]``: the list holds those items,
            # and their transfers still wait for the list's stack after the loop
            element = self._element_of(args.first)
            if element.kind is not Kind.UNKNOWN or element.transfer is not None:
                self.scope.names[func.value.value] = _grown(sequence, element.but(loop_item=None))
        if method in ("pop", "popleft", "__next__"):  # ``gen.__next__()`` is ``next(gen)``
            return self._element_of(sequence)
        return NONE if method in ADDING_METHODS else UNKNOWN

    def _only_appended(self, argument: cst.BaseExpression, transfer: cst.Call | None) -> bool:
        """Whether a value moved in this loop's body goes nowhere but into this ``append``: the move is the
        argument itself (``rewards.append(torch.FloatTensor(r).to(device))``), or a name bound to it that the body
        reads nowhere else after the move."""
        loop = self._current_loop()
        if loop is None or transfer is None:
            return False
        if not isinstance(argument, cst.Name):
            return _contains(argument, transfer)
        reads = _reads_after(loop.node, transfer, argument.value)
        return reads is not None and reads == [argument]

    def _mapped(self, node: cst.Call, function: Value, item: Value) -> Value:
        """``map(f, xs)``: what ``f`` gives for an item. A function of the project is read with it (what that
        finds holds through this call); a library callable gives its row's value, and records nothing here, where
        no call of it is written out for a fix to rewrite."""
        given = Args([item], {}, [])
        if function.kind is Kind.FUNCTION:
            return Value(Kind.SEQUENCE, element=self._call_value(node, function, given))
        model = self.models.call(function.qualname) if function.kind is Kind.REF and function.qualname else None
        if model is None:
            return Value(Kind.SEQUENCE)
        return Value(Kind.SEQUENCE, element=self._apply_model(None, function.qualname or "", model, given))

    def _mapping_method(self, func: cst.Attribute, mapping: Value, method: str, args: Args) -> Value:
        """``d.get("k")``, ``d.items()``, ``d.values()``, ``d.update(...)`` of a dict."""
        first = args.first
        key = first.literal if first is not None and first.kind is Kind.STRING else None
        found = keyed(mapping, key) if key is not None else None
        if method in ("get", "pop", "setdefault"):
            if found is None:
                found = mapping.element or UNKNOWN
            default = args.positional[1] if len(args.positional) > 1 else (NONE if method == "get" else None)
            return found if default is None else join(found, default)
        if method == "values":
            return Value(Kind.SEQUENCE, element=mapping.element)
        if method == "keys":
            return Value(Kind.SEQUENCE, element=Value(Kind.STRING))
        if method == "items":
            pair = (Value(Kind.STRING), mapping.element or UNKNOWN)
            return Value(Kind.SEQUENCE, element=Value(Kind.SEQUENCE, items=pair))
        if method == "update" and isinstance(func.value, cst.Name):
            updated = mapping
            for name, value in args.keywords.items():
                updated = updated.but(keys=None, items=None) if name.startswith("*") else with_key(updated, name, value)
            if first is not None:
                updated = updated.but(keys=None, items=None, element=join(updated.element, first.element) if (
                    first.kind is Kind.MAPPING and updated.element is not None and first.element is not None)
                    else None)
            self.scope.names[func.value.value] = updated
            return NONE
        return UNKNOWN

    def _model_module_output(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                             module: Value | None) -> Value:
        return UNKNOWN if module is None else self._module_output(module, args)

    def _model_parameters(self, node: cst.Call | None, qualname: str, model: Model, args: Args,
                          module: Value | None) -> Value:
        if module is None:
            return UNKNOWN
        return Value(Kind.SEQUENCE, element=Value(Kind.TENSOR, requires_grad=module.has_params,
                                                  on_accelerator=module.on_accelerator))


#: the class whose rows (``torch.Tensor.float``...) hold the methods and attributes of a value of each kind.
_CLASS_OF_KIND = {
    Kind.TENSOR: "torch.Tensor",
    Kind.NDARRAY: "numpy.ndarray",
    Kind.NUMPY_VALUE: "numpy.ndarray",
    Kind.NN_MODULE: "torch.nn.Module",
    Kind.DEVICE: "torch.device",
}
#: model kinds that change their receiver in place (``t.requires_grad_()``, ``model.cuda()``).
_IN_PLACE_KINDS = frozenset({"requires-grad", "move-module"})


def _contains(node: cst.CSTNode, wanted: cst.CSTNode) -> bool:
    return node is wanted or any(_contains(child, wanted) for child in node.children)


def _reads_after(body: cst.CSTNode, start: cst.CSTNode, name: str) -> list[cst.Name] | None:
    """The ``Name`` nodes of ``name`` in ``body`` after ``start`` (in source order), but not those assigned to nor
    those of the other branch of an ``if`` whose branch holds ``start`` (it does not run after it); None where
    ``start`` is not in ``body``."""
    found: list[cst.Name] = []
    seen = False

    def walk(node: cst.CSTNode, assigned: bool = False) -> None:
        nonlocal seen
        if node is start:
            seen = True
            return
        if isinstance(node, cst.If) and not seen:
            walk(node.test)
            in_test = seen  # (then both branches run after it)
            walk(node.body)
            if (in_test or not seen) and node.orelse is not None:
                walk(node.orelse)
            return
        if seen and isinstance(node, cst.Name) and node.value == name and not assigned:
            found.append(node)
        if isinstance(node, cst.AssignTarget):
            walk(node.target, assigned=True)
            return
        for child in node.children:
            walk(child)

    walk(body)
    return found if seen else None


def _changed_name(target: cst.BaseExpression, receiver: Value) -> str | None:
    """The name an in-place method changes: ``model`` in ``model.requires_grad_(False)``, and in
    ``model.eval().requires_grad_(False)`` too, where every method before it returns the module itself."""
    if receiver.kind is Kind.NN_MODULE:
        while (isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute)
               and target.func.attr.value in api.MODULE_METHODS_RETURNING_SELF):
            target = target.func.value
    return target.value if isinstance(target, cst.Name) else None


def _field_names(node: cst.BaseExpression) -> tuple[str, ...] | None:
    """A named tuple's fields as written: ``"state action"``, ``"state, action"``, ``["state", "action"]``, or
    ``[("state", T), ("action", T)]`` (``typing.NamedTuple``); None when they are not written out."""
    if isinstance(node, cst.SimpleString):
        text = node.raw_value
        names = text.replace(",", " ").split()
        return tuple(names) if names and all(name.isidentifier() for name in names) else None
    if isinstance(node, (cst.List, cst.Tuple)):
        names = []
        for element in node.elements:
            value = element.value
            if isinstance(value, (cst.Tuple, cst.List)) and value.elements:
                value = value.elements[0].value
            if not isinstance(value, cst.SimpleString) or not value.raw_value.isidentifier():
                return None
            names.append(value.raw_value)
        return tuple(names)
    return None


def _string_argument(args: Args, name: str, position: int | None) -> str | None:
    given = args.keywords.get(name)
    if given is None and position is not None and len(args.positional) > position:
        given = args.positional[position]
    return given.literal if given is not None and given.kind is Kind.STRING else None


def class_of(value: Value) -> str | None:
    if value.kind is Kind.INSTANCE:
        return value.qualname
    return _CLASS_OF_KIND.get(value.kind)


def _literal_key(node: cst.BaseExpression) -> str | None:
    """``"states"`` in ``batch["states"]`` (a name subscripted with one plain string literal), or None."""
    if subscripted_name(node) is None:
        return None
    index = node.slice[0].slice  # type: ignore[attr-defined]
    return ControlFlowMixin._literal_string(index.value) if isinstance(index, cst.Index) else None


def _grown(sequence: Value, element: Value, keeps_its_transfer: bool = False) -> Value:
    """A list after ``append(element)``. With ``keeps_its_transfer``, the transfer the appended item carries, which
    waits for the list's stack (``_note_collected``), is the one the list keeps, where what it held before carries
    one that nothing waits for (latent_ode's ``vals = [torch.zeros(n).to(device)]`` per record, then one more
    ``append`` of the same per time point)."""
    if sequence.element is None:
        return sequence.but(items=None, element=element)
    joined = join(sequence.element, element)
    if keeps_its_transfer and element.transfer is not None and joined.transfer is not element.transfer:
        joined = joined.but(transfer=element.transfer, transfer_needs_stack=element.transfer_needs_stack,
                            transfer_per_step=element.transfer_per_step)
    return sequence.but(items=None, element=joined)


def _each_list_grown(container: Value, element: Value) -> Value:
    """A dict or a list each of whose lists may have had ``element`` appended."""
    def grown(value: Value | None) -> Value | None:
        return _grown(value, element) if value is not None and value.kind is Kind.SEQUENCE else value
    items = None if container.items is None else tuple(grown(item) for item in container.items)
    return container.but(items=items, element=grown(container.element))
