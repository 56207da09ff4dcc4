"""Expressions: names, attributes, subscripts, operators, displays, lambdas."""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .control_flow import false_under, under_device_test
from .array_layout import subscript_layout
from .calls import class_of
from .definitions import ClassInfo, parameter_of
from .numpy_semantics import numpy_arithmetic
from .syntax import int_literal, is_copy_flag_test
from .values import (NONE, UNKNOWN, Kind, Value, device_test_of, either_all, held_by_module, join, join_all, keyed,
                     member, ref, sequence)

#: longer string literals are not kept: docstrings and messages, never a device, dtype or key
_LONGEST_USEFUL_STRING = 200


class ExpressionsMixin:
    """Expressions: names, attributes, subscripts, operators, displays, lambdas."""

    def _name(self, node: cst.Name) -> Value:
        name = node.value
        value = self.scope.lookup(name)
        if value is not None:
            return self._from_project(value) if value.kind is Kind.REF and self.project is not None else value
        if name == "None":
            return NONE
        if name in ("True", "False"):
            return Value(Kind.NUMBER, dtype="bool", literal=name)
        if name in api.BUILTINS:
            return ref("builtins." + name)
        return UNKNOWN

    def _simple_string(self, node: cst.SimpleString) -> Value:
        prefix = node.prefix.lower()
        raw = node.raw_value
        if "b" in prefix or len(raw) > _LONGEST_USEFUL_STRING:
            text = None  # bytes, or a docstring: no device, dtype or key is that long
        elif "\\" not in raw or "r" in prefix:
            text = raw  # the common case, without LibCST's literal_eval (a compile per string)
        else:
            try:
                text = node.evaluated_value
            except Exception:  # noqa: BLE001 - odd escapes: the text does not matter then
                text = None
        return Value(Kind.STRING, literal=text if isinstance(text, str) else None)

    def _attribute(self, node: cst.Attribute) -> Value:
        own = self._own_attribute(node)
        if own is not None:
            return own
        return self._attribute_of_value(self.eval(node.value), node.attr.value)

    def _attribute_of_value(self, owner: Value, attribute: str) -> Value:
        if owner.choices is not None:  # an object of one class or another: what either has
            return join_all([self._attribute_of_value(choice, attribute) for choice in owner.choices]) or UNKNOWN
        if owner.kind is Kind.REF:
            found = member(owner, attribute)
            return self._from_project(found) if self.project is not None else found
        if owner.keys is not None and owner.kind is not Kind.MAPPING:  # ``batch.state`` of a named tuple
            field = keyed(owner, attribute)
            if field is not None:
                return field
        if isinstance(owner.definition, ClassInfo):
            found = self._class_attribute(owner, owner.definition, attribute)
            if found is not None:
                return found
        if owner.kind is Kind.NN_MODULE:
            tensor = self._module_tensor(owner, attribute)
            if tensor is not None:
                return tensor
        if attribute == "device" and owner.kind is Kind.UNKNOWN and _input_of_a_network(owner):
            # ``torch.zeros(n, device=x.device)`` in a network's ``forward(self, x)``: wherever the caller put its
            # input, which this read does not know (a call read with a tensor on an accelerator does)
            return Value(Kind.DEVICE, on_accelerator=None)
        if attribute == "requires_grad" and owner.kind is Kind.TENSOR and owner.requires_grad is False:
            # ``requires_grad = matrix.requires_grad`` then ``if requires_grad: result.requires_grad_()`` (torch-sim's
            # matrix_log given a tensor made without grad): False, which decides the test. (True stays a "may".)
            return Value(Kind.NUMBER, dtype="bool", literal="False")
        owner_class = class_of(owner)
        model = None if owner_class is None else self.models.attribute(f"{owner_class}.{attribute}")
        if model is None and owner.on_accelerator and owner.kind in (Kind.UNKNOWN, Kind.TENSOR) and (
                owner.choices is None):
            # ``enc.data``, ``outputs.logits`` of what an unknown network made from tensors on an accelerator, or
            # ``data.x`` of ``data = data.to(device)`` (no tensor has ``x``: an object the move took for a tensor,
            # a graph batch, whose tensors went with it): unknown, but there (``CallsMixin._placed_like_inputs``)
            return Value(Kind.UNKNOWN, on_accelerator=True, device_test=owner.device_test)
        return UNKNOWN if model is None else self._attribute_model(owner, model)

    def _module_tensor(self, module: Value, attribute: str) -> Value | None:
        """A parameter (requires grad while the module has trainable parameters) or buffer (never) of a module."""
        row = self.models.call(module.qualname) if module.qualname else None
        parameters = row.names("parameters") if row is not None else frozenset()
        buffers = row.names("buffers") if row is not None else frozenset()
        if not parameters and not (row is not None and "no-params" in row.flags):
            parameters = _USUAL_PARAMETERS  # a module the models do not describe: weight and bias are parameters
        if attribute in parameters:
            return Value(Kind.TENSOR, requires_grad=module.has_params, on_accelerator=module.on_accelerator)
        if attribute in buffers:
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=module.on_accelerator)
        return None

    def _subscript(self, node: cst.Subscript) -> Value:
        base = self.eval(node.value)
        index_values = [self.eval(element.slice.value) for element in node.slice
                        if isinstance(element.slice, cst.Index)]
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                self._walk_children(element.slice)
        if base.kind is Kind.SEQUENCE:
            self._note_used_after_the_loop([base])  # ``rewards[t]`` of per-step transfers, after their loop
        if base.choices is not None:  # ``outputs["loss"]`` of a dict or of a tuple: what either holds there
            return join_all([self._subscript_of(node, choice, index_values) for choice in base.choices]) or UNKNOWN
        return self._subscript_of(node, base, index_values)

    def _subscript_of(self, node: cst.Subscript, base: Value, index_values: list[Value]) -> Value:
        loop_item = next((v.loop_item for v in index_values if v.loop_item is not None), None)
        if base.kind is Kind.TENSOR:
            result = base.but(items=None)
        elif base.is_numpy:
            # only integer indices in every position can give a NumPy scalar; slices, masks and None give arrays
            is_slice = any(isinstance(e.slice, cst.Slice) for e in node.slice) or any(
                v.kind in (Kind.NDARRAY, Kind.SEQUENCE, Kind.NONE, Kind.TENSOR) or v.qualname == "builtins.Ellipsis"
                for v in index_values) or any(isinstance(e.slice.value, cst.Ellipsis) for e in node.slice
                                              if isinstance(e.slice, cst.Index))
            negative_strides, read_only = subscript_layout(node, base, index_values)
            result = base.but(kind=Kind.NDARRAY if is_slice else Kind.NUMPY_VALUE, negative_strides=negative_strides,
                              read_only=read_only)
        elif base.kind is Kind.MAPPING:  # ``outputs["loss"]``: that key's value, or any value of the dict
            key = index_values[0].literal if len(index_values) == 1 and index_values[0].kind is Kind.STRING else None
            found = keyed(base, key) if key is not None else None
            if found is None and key is not None and base.keys is not None and base.items is not None and (
                    not base.open_ended):
                return UNKNOWN  # a key the dict was not given: not any of its values (a KeyError, or set elsewhere)
            return found if found is not None else (base.element or UNKNOWN)
        elif base.kind is Kind.SEQUENCE:
            if any(isinstance(e.slice, cst.Slice) for e in node.slice):  # ``xs[::-1]``: a list of the same items
                return Value(Kind.SEQUENCE, element=self._element_of(base))
            result = self._element_of(base)
            if base.items is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                position = int_literal(node.slice[0].slice.value)
                lowest = 0 if base.open_ended else -len(base.items)
                if position is not None and lowest <= position < len(base.items):
                    result = base.items[position]
        elif base.kind is Kind.NN_MODULE and base.element is not None:
            result = held_by_module(base, base.element)  # ``self.critics[i]`` of an ``nn.ModuleList``
        elif base.kind is Kind.UNKNOWN:
            # ``planes[p]`` in a loop over ``p``: unknown, but each item's own (NPT005 follows it)
            return base.but(loop_item=loop_item) if loop_item is not None else base
        elif base.kind is Kind.INSTANCE and base.qualname:
            model = self.models.call(base.qualname + ".__getitem__")
            return UNKNOWN if model is None else self._apply_model(None, base.qualname + ".__getitem__", model,
                                                                   Args(index_values, {}, []), base)
        else:
            return UNKNOWN
        if loop_item is not None and result.loop_item is None:
            result = result.but(loop_item=loop_item)
        return result

    def _unary_operation(self, node: cst.UnaryOperation) -> Value:
        operand = self.eval(node.expression)
        if isinstance(node.operator, cst.Not):
            return Value(Kind.NUMBER, dtype="bool")
        return operand

    def _comparison(self, node: cst.Comparison) -> Value:
        left = self.eval(node.left)
        rights = [self.eval(target.comparator) for target in node.comparisons]
        if any(v.kind is Kind.TENSOR for v in (left, *rights)):
            tensors = [v for v in (left, *rights) if v.kind is Kind.TENSOR]
            return Value(Kind.TENSOR, dtype="bool", requires_grad=False,
                         on_accelerator=either_all(v.on_accelerator for v in tensors),
                         device_test=device_test_of(tensors))
        if any(v.is_numpy for v in (left, *rights)):
            return Value(Kind.NDARRAY, dtype="bool")
        return Value(Kind.NUMBER, dtype="bool")

    def _boolean_operation(self, node: cst.BooleanOperation) -> Value:
        return join(self.eval(node.left), self.eval(node.right))

    def _if_exp(self, node: cst.IfExp) -> Value:
        self.eval(node.test)
        mentions_copy = is_copy_flag_test(node.test)
        self.copy_tests += mentions_copy
        tested = self.device_test(node.test)
        when_true, when_false = self._narrowing(node.test, tested)
        outcome = self.test_outcome(node.test)
        try:
            if outcome is not None:  # one branch cannot run: the value is the other's
                taken, skipped = (node.body, node.orelse) if outcome else (node.orelse, node.body)
                self.read_unreachable(lambda: self.eval(skipped))
                return self._eval_narrowed(taken, when_true if outcome else when_false)
            false_in_body, false_in_else = false_under(tested)
            body = self._eval_narrowed(node.body, when_true, false_in_body)
            orelse = self._eval_narrowed(node.orelse, when_false, false_in_else)
        finally:
            self.copy_tests -= mentions_copy
        joined = join(body, orelse)
        if tested is None:
            return joined
        marked = under_device_test(joined, self.placing(body), self.placing(orelse), *tested)
        self.device_tests_noted = self.device_tests_noted or marked is not joined
        return marked

    def _eval_narrowed(self, node: cst.BaseExpression, narrowed: dict[str, Value],
                       false_tests: tuple[tuple[str, bool], ...] = ()) -> Value:
        if not narrowed and not false_tests:
            return self.eval(node)
        saved, saved_false = self.scope, self.false_device_tests
        self.scope = saved.copy()
        self.scope.names.update(narrowed)
        self.false_device_tests = saved_false + false_tests
        try:
            return self.eval(node)
        finally:
            self.scope, self.false_device_tests = saved, saved_false

    def _list_or_tuple(self, node: cst.List | cst.Tuple) -> Value:
        items = []
        starred = False
        for element in node.elements:
            value = self.eval(element.value)
            if isinstance(element, cst.StarredElement):
                starred = True
            items.append(value)
        if starred:
            return Value(Kind.SEQUENCE)
        return sequence(tuple(items), join_all(items))

    def _dict(self, node: cst.Dict) -> Value:
        """A dict display: its items by key where every key is a string literal (``{"loss": loss, **extra}``). After
        a spread of unknown keys (``{**batch, **outputs}``) the keys set later are known, and any other key holds
        what the dict was given before them."""
        keys: list[str] | None = []
        items: list[Value] = []
        values: list[Value] = []
        before_known: list[Value] | None = None  # once a spread of unknown keys: what any other key may hold
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                spread = self.eval(element.value)
                known = spread.kind is Kind.MAPPING and spread.keys is not None and spread.items is not None
                if keys is not None and (spread.open_ended or not known):
                    before_known = [*values, *([spread.element] if spread.element is not None else [])]
                    keys, items = [], []
                if known and keys is not None:
                    for key, item in zip(spread.keys, spread.items):
                        keys, items = _set_item(keys, items, key, item)
                if spread.kind is Kind.MAPPING and spread.element is not None:
                    values.append(spread.element)
                continue
            key_value = self.eval(element.key)
            value = self.eval(element.value)
            values.append(value)
            key = key_value.literal if key_value.kind is Kind.STRING else None
            if key is None or keys is None:
                keys = None
            else:
                keys, items = _set_item(keys, items, key, value)
        if keys is None:
            return Value(Kind.MAPPING, element=join_all(values))
        if before_known is not None:
            return sequence(tuple(items), join_all(before_known), tuple(keys), Kind.MAPPING).but(open_ended=True)
        return sequence(tuple(items), join_all(items), tuple(keys), Kind.MAPPING)

    def _named_expr(self, node: cst.NamedExpr) -> Value:
        value = self.eval(node.value)
        self._bind(node.target, value)
        return value

    def _binary_operation(self, node: cst.BinaryOperation) -> Value:
        return self._binary(self.eval(node.left), self.eval(node.right), node.operator)

    def _binary(self, left: Value, right: Value, operator: cst.CSTNode) -> Value:
        if left.kind is Kind.TENSOR or right.kind is Kind.TENSOR:
            return self._tensor_arithmetic(left, right)
        if left.is_numpy or right.is_numpy:
            return numpy_arithmetic(left, right, operator)
        if left.kind is Kind.SEQUENCE and right.kind is Kind.SEQUENCE and isinstance(operator, cst.Add):
            return Value(Kind.SEQUENCE, element=join(left.element or UNKNOWN, right.element or UNKNOWN)
                         if left.element and right.element else left.element or right.element)
        if isinstance(operator, cst.Multiply) and Kind.SEQUENCE in (left.kind, right.kind):
            # ``[torch.zeros(0, 6)] * batch_size``: a list of that item repeated, however many times (a count not
            # known is one: a list times anything else fails)
            repeated, count = (left, right) if left.kind is Kind.SEQUENCE else (right, left)
            if repeated.qualname is None and count.kind in (Kind.NUMBER, Kind.UNKNOWN):
                return Value(Kind.SEQUENCE, element=self._element_of(repeated))
        if left.kind is Kind.NUMBER and right.kind is Kind.NUMBER:
            # ``n + i`` in a loop over ``i`` is each iteration's own, as ``i`` is (``frames[n + i]``)
            loop_item = left.loop_item if left.loop_item is not None else right.loop_item
            if "float" in (left.dtype, right.dtype) or isinstance(operator, cst.Divide):
                return Value(Kind.NUMBER, dtype="float", loop_item=loop_item)
            return Value(Kind.NUMBER, dtype=left.dtype if left.dtype == right.dtype else None, loop_item=loop_item)
        loop_item = left.loop_item if left.loop_item is not None else right.loop_item
        if loop_item is not None and {left.kind, right.kind} <= _NUMBER_OR_UNKNOWN:
            return Value(Kind.UNKNOWN, loop_item=loop_item)  # ``i - length // 2`` with ``length`` unknown
        return UNKNOWN

    def _tensor_arithmetic(self, *operands: Value) -> Value:
        tensors = [v for v in operands if v.kind is Kind.TENSOR]
        others_known = all(v.kind in (Kind.TENSOR, Kind.NUMBER) or v.is_numpy for v in operands)
        requires_grad = self._result_requires_grad(tensors, others_known)
        dtypes = {v.dtype for v in tensors}
        first = tensors[0]
        float64_origins = frozenset().union(*(v.float64_origins for v in tensors))
        if float64_origins and any(_chosen_float64(v) for v in operands):
            # ``logits.double() * torch.from_numpy(np.ones(n))``: the program computes in float64 on purpose here,
            # so NumPy's float64 meets float64, not float32 weights
            self.facts.dtypes_may_be_decided(tensors)
            float64_origins = frozenset()
        loop_item = next((v.loop_item for v in operands if v.loop_item is not None), None)
        # (a transfer made of another loop's item stays with that loop: ``ht = zt * ht`` in a loop over time steps,
        # ``ht`` moved once per layer by the loop around it, is not a transfer per time step)
        moved = first if first.loop_item == loop_item else UNKNOWN
        return Value(
            Kind.TENSOR,
            dtype=dtypes.pop() if len(dtypes) == 1 else None,
            requires_grad=requires_grad,
            on_accelerator=either_all(v.on_accelerator for v in tensors),
            device_test=device_test_of(tensors),
            float64_origins=float64_origins,
            loop_item=loop_item,
            transfer=moved.transfer,
            transfer_needs_stack=moved.transfer_needs_stack,
            transfer_per_step=moved.transfer_per_step,
            parameter=next((v.parameter for v in operands if v.parameter is not None), None),
            moves_parameter=first.moves_parameter,
            pending_copy=next((v.pending_copy for v in tensors if v.pending_copy is not None), None),
        )

    def _result_requires_grad(self, tensors: list[Value], inputs_known: bool = True) -> bool | None:
        """Whether a differentiable op on these tensors gives a result that requires grad."""
        if self.grad_enabled is False:
            return False
        flags = [v.requires_grad for v in tensors]
        if any(flags):
            return True if self.grad_enabled else None
        if inputs_known and all(flag is False for flag in flags):
            return False
        return None


def _chosen_float64(tensor: Value) -> bool:
    """A float64 tensor the program asked for (``.double()``, ``dtype=torch.float64``), not NumPy's default; an
    unknown value cast with ``.double()`` counts, as it is a tensor where it meets one."""
    return (tensor.kind in (Kind.TENSOR, Kind.UNKNOWN) and tensor.dtype == "float64" and not tensor.float64_origins
            and not tensor.float64_by_default)


def _set_item(keys: list[str], items: list[Value], key: str, value: Value) -> tuple[list[str], list[Value]]:
    """``{**a, "k": v}``: a later key replaces an earlier one, in its place."""
    if key in keys:
        items[keys.index(key)] = value
    else:
        keys.append(key)
        items.append(value)
    return keys, items


_NUMBER_OR_UNKNOWN = frozenset({Kind.NUMBER, Kind.UNKNOWN})
_USUAL_PARAMETERS = frozenset({"weight", "bias"})


def _input_of_a_network(value: Value) -> bool:
    """A parameter of a network's own method (``forward(self, x)``, ``_make_grid(self, x)``), as it came: a tensor
    its caller placed. (A parameter of another function may be a network or a run's settings: ``solver.device``,
    ``args.device`` name the device the run chose.)"""
    function = parameter_of(value)
    return function is not None and function.owner is not None and function.owner.is_nn_module
