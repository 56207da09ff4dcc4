"""Statements: assignments and binding, imports, ``def`` and ``class``, ``del``."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from . import known_apis as api
from .control_flow import NOT_A_GRAD_MODE
from .scope import Scope
from .syntax import dotted_name
from .values import LOCAL, UNKNOWN, Kind, Value, bool_literal, join, ref


@dataclass(slots=True)
class ClassContext:
    """What methods of the class being read share: ``self``'s attributes, set in one method, read in another."""

    self_name: str | None
    attributes: dict[str, Value]
    is_nn_module: bool
    #: the scope around the class statement: methods see it, not the class body's names.
    outer_scope: Scope
    in_class_body: bool


class StatementsMixin:
    """Statements: assignments and binding, imports, ``def`` and ``class``, ``del``."""

    def _simple_statement_line(self, node: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        self._block(node.body)

    def _expr_statement(self, node: cst.Expr) -> None:
        self.eval(node.value)

    def _assign(self, node: cst.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self._bind(target.target, value, node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self.eval(node.annotation.annotation)
        if node.value is not None:
            self._bind(node.target, self.eval(node.value), node.value)
        elif isinstance(node.target, cst.Name):
            self.scope.names[node.target.value] = self._value_of_annotation(node.annotation.annotation)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        current = self.eval(node.target)
        operand = self.eval(node.value)
        if current.kind is Kind.SEQUENCE and operand.kind is Kind.SEQUENCE and operand.items:
            for item in operand.items:
                self._note_collected(item, "append")
        result = self._binary(current, operand, node.operator)
        if isinstance(node.target, cst.Name):
            self.scope.names[node.target.value] = result

    def _bind(self, target: cst.BaseExpression, value: Value, value_node: cst.CSTNode | None = None) -> None:
        if isinstance(target, cst.Name):
            self.scope.names[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            items = value.items if value.items is not None and len(value.items) == len(elements) else None
            # unpacking a tensor (its rows), or a model's tuple of outputs, gives tensors like it
            part = value.but(items=None, float64_origins=frozenset(), transfer=None) if (
                value.kind is Kind.TENSOR) else UNKNOWN
            for index, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self._bind(element.value, Value(Kind.SEQUENCE, element=value.element))
                else:
                    self._bind(element.value, items[index] if items is not None else part)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value)
            self._bind_attribute(target, owner, value)
        elif isinstance(target, cst.Subscript):
            base = self.eval(target.value)
            self._walk_children(target)
            if base.kind is Kind.SEQUENCE or base.kind is Kind.UNKNOWN:
                self._note_collected(value, "item assignment")
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, Value(Kind.SEQUENCE, element=value.element))
        else:
            self.eval(target)

    def _bind_attribute(self, target: cst.Attribute, owner: Value, value: Value) -> None:
        attribute = target.attr.value
        context = self.class_context
        if (context is not None and isinstance(target.value, cst.Name)
                and target.value.value == context.self_name):
            previous = context.attributes.get(attribute)
            context.attributes[attribute] = value if previous is None else join(previous, value)
        elif attribute == "requires_grad" and owner.kind is Kind.TENSOR and isinstance(target.value, cst.Name):
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
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            bound = alias.asname.name.value if alias.asname is not None and isinstance(
                alias.asname.name, cst.Name) else name
            if relative or module is None:
                self.scope.names[bound] = LOCAL
            else:
                self.scope.names[bound] = ref(f"{module}.{name}")

    def _function_def(self, node: cst.FunctionDef) -> None:
        grad_enabled = True  # a function body runs with grad on unless a decorator says otherwise
        for decorator in node.decorators:
            self.eval(decorator.decorator)
            mode = self._grad_mode_of(decorator.decorator, as_decorator=True)
            if mode is not NOT_A_GRAD_MODE:
                grad_enabled = mode
        self._eval_parameter_defaults(node.params)
        if node.returns is not None:
            self.eval(node.returns.annotation)
        self.scope.names[node.name.value] = LOCAL

        context = self.class_context
        is_method = context is not None and context.in_class_body
        function_scope = Scope(context.outer_scope if is_method else self.scope)  # type: ignore[union-attr]
        self._bind_parameters(node.params, function_scope)
        saved = (self.scope, self.grad_enabled, self.loops, self.copy_tests, self.class_context, self.function_node)
        self.scope, self.grad_enabled, self.loops, self.copy_tests = function_scope, grad_enabled, [], 0
        self.function_node = node
        if is_method:
            assert context is not None
            params = node.params.posonly_params or node.params.params
            is_static = any(dotted_name(d.decorator) == "staticmethod" for d in node.decorators)
            self_name = params[0].name.value if params and not is_static else None
            self.class_context = ClassContext(self_name, context.attributes, context.is_nn_module,
                                              context.outer_scope, in_class_body=False)
            if self_name is not None:
                function_scope.names[self_name] = (
                    Value(Kind.NN_MODULE, has_params=True) if context.is_nn_module else UNKNOWN)
        try:
            self._suite(node.body)
        finally:
            (self.scope, self.grad_enabled, self.loops, self.copy_tests, self.class_context,
             self.function_node) = saved

    def _eval_parameter_defaults(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.default is not None:
                self.eval(param.default)
            if param.annotation is not None:
                self.eval(param.annotation.annotation)

    def _bind_parameters(self, params: cst.Parameters, scope: Scope) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            value = UNKNOWN
            if param.annotation is not None:
                value = self._value_of_annotation(param.annotation.annotation)
            scope.names[param.name.value] = value
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.names[star.name.value] = UNKNOWN

    def _value_of_annotation(self, annotation: cst.BaseExpression) -> Value:
        """A parameter annotated ``np.ndarray`` or ``torch.Tensor`` is one (of unknown dtype, grad and device)."""
        value = self.eval(annotation) if not isinstance(annotation, cst.SimpleString) else UNKNOWN
        if value.kind is Kind.REF:
            if value.qualname in ("numpy.ndarray", "numpy.typing.NDArray"):
                return Value(Kind.NDARRAY)
            if value.qualname == "torch.Tensor":
                return Value(Kind.TENSOR)
        return UNKNOWN

    def _class_def(self, node: cst.ClassDef) -> None:
        for decorator in node.decorators:
            self.eval(decorator.decorator)
        is_nn_module = False
        for base in node.bases:
            base_value = self.eval(base.value)
            if (base_value.kind is Kind.REF and base_value.qualname in api.NN_MODULE_BASES) or (
                    base_value.kind is Kind.NN_MODULE_CLASS):
                is_nn_module = True
        for keyword in node.keywords:
            self.eval(keyword.value)
        saved_scope, saved_context = self.scope, self.class_context
        self.scope = Scope(saved_scope)
        self.class_context = ClassContext(None, {}, is_nn_module, saved_scope, in_class_body=True)
        try:
            self._suite(node.body)
        finally:
            self.scope, self.class_context = saved_scope, saved_context
        self.scope.names[node.name.value] = Value(Kind.NN_MODULE_CLASS) if is_nn_module else LOCAL

    def _del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            target_node = target.value if isinstance(target, cst.BaseElement) else target
            if isinstance(target_node, cst.Name):
                self.scope.names[target_node.value] = UNKNOWN
            else:
                self.eval(target_node)
