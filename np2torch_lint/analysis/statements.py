"""Statements: assignments and binding, imports, ``del`` (``def`` and ``class`` are in ``definitions.py``)."""

from __future__ import annotations

import libcst as cst

from .facts import WRITTEN_INTO_ARRAY, TensorToNumpy
from .syntax import bool_literal_node, dotted_name
from .values import LOCAL, UNKNOWN, Kind, Value, bool_literal, join, join_all, ref, with_key


class StatementsMixin:
    """Statements: assignments and binding, imports, ``del`` (``def`` and ``class`` are in ``definitions.py``)."""

    def _simple_statement_line(self, node: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        self._block(node.body)

    def _expr_statement(self, node: cst.Expr) -> None:
        call = node.value
        outer = self.dropped_call  # a body read for the call of the statement around this one
        self.dropped_call = call if isinstance(call, cst.Call) else None
        self.eval(call)
        self.dropped_call = outer
        if isinstance(call, cst.Call):  # ``torch.set_grad_enabled(False)`` as a statement sets the mode from here
            callee = self.eval_quietly(call.func)
            model = self.models.call(callee.qualname) if callee.kind is Kind.REF and callee.qualname else None
            if model is not None and model.kind == "grad-mode" and "set" in model.flags:
                self.grad_enabled = bool_literal_node(call.args[0].value) if call.args else None

    def _assign(self, node: cst.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self._bind(target.target, value, node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        annotated = self._value_of_annotation(node.annotation.annotation)
        if node.value is not None:
            value = self.eval(node.value)
            self._bind(node.target, annotated if value.kind is Kind.UNKNOWN else value, node.value)
        elif isinstance(node.target, cst.Name):
            self.scope.names[node.target.value] = annotated

    def _aug_assign(self, node: cst.AugAssign) -> None:
        current = self.eval(node.target)
        operand = self.eval(node.value)
        if current.kind is Kind.SEQUENCE and operand.kind is Kind.SEQUENCE and operand.items:
            for item in operand.items:
                self._note_collected(item, "append")
        if isinstance(node.operator, cst.AddAssign) and operand.kind is Kind.SEQUENCE:
            holder = self._holder_of(node.target, current)  # ``self.buffer += [x]`` extends it in place
            if holder is not None:
                self._container_added(holder, self._element_of(operand))
        result = self._binary(current, operand, node.operator)
        if isinstance(node.target, cst.Name):
            self.scope.names[node.target.value] = result
        elif isinstance(node.target, cst.Attribute):
            self._note_own_attribute(node.target, result)

    def _bind(self, target: cst.BaseExpression, value: Value, value_node: cst.CSTNode | None = None) -> None:
        if isinstance(target, cst.Name):
            self.scope.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)) and value.choices is not None:
            # ``opdict, visdict = decode(...)`` of a tuple on one path: each name gets what each choice gives it
            elements = target.elements
            parts: list[list[Value]] = [[] for _ in elements]
            # a choice of known length other than the names' raises ValueError there: that path goes no further
            fitting = [choice for choice in value.choices if choice.items is None or choice.open_ended or len(
                choice.items) == len(elements) or any(isinstance(e, cst.StarredElement) for e in elements)]
            for choice in fitting or value.choices:
                self._bind(target, choice)
                for index, element in enumerate(elements):
                    if isinstance(element.value, cst.Name):
                        parts[index].append(self.scope.names.get(element.value.value, UNKNOWN))
            for index, element in enumerate(elements):
                if isinstance(element.value, cst.Name):
                    self.scope.names[element.value.value] = join_all(parts[index]) or UNKNOWN
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            items = value.items if value.items is not None and (
                len(value.items) == len(elements) or value.open_ended and len(value.items) <= len(elements)) else None
            if value.unpacked is not None and len(value.unpacked) == len(elements) and not any(
                    isinstance(element, cst.StarredElement) for element in elements):
                items = value.unpacked  # ``s, _ = env.reset()``: the code says it is the tuple
            # unpacking a tensor (its rows), or a model's tuple of outputs, gives tensors like it; the parts of an
            # unknown result made from tensors on an accelerator are placed like it (``calls._placed_like_inputs``)
            part = UNKNOWN
            if value.kind is Kind.TENSOR:
                part = value.but(items=None, float64_origins=frozenset(), transfer=None)
            elif value.kind is Kind.UNKNOWN and value.on_accelerator:
                part = Value(Kind.UNKNOWN, on_accelerator=True, device_test=value.device_test)
            elif value.kind is Kind.SEQUENCE and value.element is not None:
                # ``obs, gt = [t.cuda() for t in batch]``: each name is one of the list's elements, taken alone
                part = value.element.but(loop_item=None, transfer=None, transfer_needs_stack=False,
                                         transfer_per_step=False)
            for index, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self._bind(element.value, Value(Kind.SEQUENCE, element=value.element))
                else:
                    self._bind(element.value, items[index] if items is not None and index < len(items) else part)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value)
            if isinstance(value_node, cst.Name) and isinstance(target.value, cst.Name) and value.device_test is None:
                # ``self.cuda = cuda``: the flag ``if cuda:`` tested here is the one ``if self.cuda:`` tests later
                self._note_flag_attribute(owner, f"flag:{value_node.value}",
                                          f"flag:{target.value.value}.{target.attr.value}")
            self._bind_attribute(target, owner, value)
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value)
            self._walk_children(target)
            if base.kind is Kind.MAPPING and isinstance(target.value, cst.Name):  # ``outputs["loss"] = loss``
                index = target.slice[0].slice if len(target.slice) == 1 else None
                key = self._simple_string(index.value) if isinstance(index, cst.Index) and isinstance(
                    index.value, cst.SimpleString) else None
                self.scope.names[target.value.value] = with_key(base, key.literal, value) if (
                    key is not None and key.kind is Kind.STRING and key.literal is not None) else base.but(
                    keys=None, items=None, element=value if base.element is None else join(base.element, value))
            elif base.kind is Kind.SEQUENCE or base.kind is Kind.UNKNOWN:
                self._note_collected(value, "item assignment")
                sliced = any(isinstance(element.slice, cst.Slice) for element in target.slice)
                written = self._element_of(value) if sliced else value
                holder = self._holder_of(target.value, base)
                if holder is not None:
                    self._container_added(holder, written)
                elif base.kind is Kind.SEQUENCE and base.qualname is None and isinstance(target.value, cst.Name):
                    # ``output[xi] = x[i]``: any item of the list may now be what was written
                    self.scope.names[target.value.value] = base.but(
                        items=None if base.items is None else tuple(join(item, written) for item in base.items),
                        element=None if base.element is None else join(base.element, written))
            elif base.kind is Kind.TENSOR or base.is_numpy:
                # ``out[:, 1:] = torch.from_numpy(a)`` copies into ``out``: the destination's dtype wins
                self.facts.dtype_decided.update(value.float64_origins)
                if base.kind is not Kind.TENSOR and value.kind is Kind.TENSOR and any(
                        isinstance(element.slice, cst.Slice) for element in target.slice):
                    # ``ids[:, i] = predicted``: NumPy converts a tensor written into a slice with
                    # ``Tensor.__array__`` (``.numpy()``), even a 0-d one; into one item (``ids[0, i]``) it takes
                    # ``float(t)`` of a 0-d tensor, which works anywhere, so only a slice says
                    self.facts.tensor_to_numpy.append(TensorToNumpy(target, WRITTEN_INTO_ARRAY, value,
                                                                    self.grad_enabled))
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Value(Kind.SEQUENCE, element=value.element))
        else:
            self.eval(target)

    def _bind_attribute(self, target: cst.Attribute, owner: Value, value: Value) -> None:
        attribute = target.attr.value
        self._note_own_attribute(target, value)
        if self._record_attribute(owner, attribute, value):
            return
        if owner.definition is None and owner.kind in (Kind.UNKNOWN, Kind.NN_MODULE, Kind.INSTANCE):
            self.unknown_owner_attributes.add(attribute)  # ``obj.data = ...`` of an object not known
        if attribute == "requires_grad" and owner.kind is Kind.TENSOR and isinstance(target.value, cst.Name):
            flag = bool_literal(value)
            self.scope.names[target.value.value] = owner.but(requires_grad=flag)

    def _import(self, node: cst.Import) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            dotted = dotted_name(alias.name)
            if dotted is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound, qualname = alias.asname.name.value, dotted
            else:
                bound = qualname = dotted.split(".", 1)[0]
            self.scope.names[bound] = ref(qualname)
            if self.scope is self.module_scope and qualname in ("torch", "numpy"):
                self.facts.module_names.setdefault(qualname, bound)

    def _import_from(self, node: cst.ImportFrom) -> None:
        module = dotted_name(node.module) if node.module is not None else None
        relative = bool(node.relative)
        if isinstance(node.names, cst.ImportStar):
            if self.project is not None:  # ``from .archs import *``: a module of the project's public names
                absolute = self.project.absolute(len(node.relative), module) if relative else module
                if absolute is not None:
                    self.scope.names.update(self.project.names_of(absolute))
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            bound = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else name
            if relative or module is None:
                # your own code: another module of the project when the project is known, else unknown
                absolute = self.project.absolute(len(node.relative), module) if self.project is not None else None
                self.scope.names[bound] = LOCAL if absolute is None else ref(f"{absolute}.{name}")
            else:
                self.scope.names[bound] = ref(f"{module}.{name}")

    def _del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            target_node = target.value if isinstance(target, cst.BaseElement) else target
            if isinstance(target_node, cst.Name):
                self.scope.names[target_node.value] = UNKNOWN
            else:
                self.eval(target_node)
