"""One pass over a module that works out what each expression is, and records the facts the rules read.

It is a small abstract interpreter over LibCST nodes: statements run in order, names bind to ``Value``s in a
scope, the branches of ``if``/``try``/loops are joined, and imports resolve names to qualified names, so
``th.tensor`` is ``torch.tensor`` while a local ``def tensor`` is not.

Why not a ``CSTVisitor`` with ``ScopeProvider``/``QualifiedNameProvider``: values must flow through
assignments in statement order, which a visitor does not model, and those providers cost 3x-5.5x a parse on
their own, where the whole lint is budgeted at 1.5x (STYLE.md, ``benchmarks/lint_speed.py``). This walk reads
node fields directly (about 0.15x a parse for the bare walk).

What is unknown stays unknown: a function parameter, the result of a call to a local function, an attribute of
an object we did not build. Rules only speak on known facts, so unknown values never produce findings.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import libcst as cst

from . import known_apis as api
from .values import (
    BUILTIN_DTYPES,
    DTYPE_NAMES,
    LOCAL,
    NONE,
    OTHER,
    UNKNOWN,
    Kind,
    Value,
    is_float,
    is_integral,
    join,
    join_all,
    promote_numpy,
    ref,
)

# --- facts the rules read ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TensorToNumpy:
    """``t.numpy()``, ``np.asarray(t)`` or ``np.array(t)`` where ``t`` is known to be a tensor."""

    node: cst.Call
    via: str  # "numpy" for the method, else the NumPy function's qualified name
    tensor: Value
    #: autograd state where the call runs: True, False (no_grad/inference_mode), or None (unknown).
    grad_enabled: bool | None


@dataclass(frozen=True, slots=True)
class NumpyToTensor:
    """``torch.tensor(a)``, ``torch.as_tensor(a)``, ``torch.from_numpy(a)``, ``torch.Tensor(a)``, ..."""

    node: cst.Call
    constructor: str  # qualified name, e.g. "torch.tensor"
    source: Value
    keywords: frozenset[str]
    #: the dtype asked for with ``dtype=`` (canonical name), "?" when given but unknown, None when not given.
    dtype: str | None
    device: Value | None
    #: inside an ``if``/conditional expression whose test mentions ``copy``: the copy is a decision.
    under_copy_test: bool


@dataclass(frozen=True, slots=True)
class CollectedTransfer:
    """A per-item ``.to(device)``/``.cuda()`` inside a loop whose results are collected."""

    node: cst.Call  # the transfer call
    loop: cst.CSTNode  # the ``for`` statement or comprehension
    collected_by: str  # "append", "comprehension", "item assignment"
    #: ``torch.stack(<the comprehension>)`` when that is what consumes it
    stacked_by: cst.Call | None = None


@dataclass(slots=True)
class Facts:
    tensor_to_numpy: list[TensorToNumpy] = field(default_factory=list)
    numpy_to_tensor: list[NumpyToTensor] = field(default_factory=list)
    collected_transfers: list[CollectedTransfer] = field(default_factory=list)
    #: conversions that made a float64 tensor out of NumPy's default float64, and those a dtype decision met.
    float64_conversions: dict[cst.Call, str] = field(default_factory=dict)  # call -> constructor qualname
    dtype_decided: set[cst.Call] = field(default_factory=set)
    #: the file calls ``torch.set_default_dtype``: float64 may be what it wants.
    sets_default_dtype: bool = False
    #: the names the module binds to ``torch`` and ``numpy`` (``{"numpy": "np"}``), for fixes to write.
    module_names: dict[str, str] = field(default_factory=dict)


# --- the interpreter ---------------------------------------------------------------------------------------


class Scope:
    """Names bound in one function or module body; reads fall back to the enclosing scope.

    A branch's ``copy()`` does not copy the names bound before the branch: it reads them through ``inherited``
    (those dicts, newest first, are not written while the copy lives), so a module of thousands of ``if`` blocks
    costs each block only its own names, and ``join_from`` looks only at what the branches bound.
    """

    __slots__ = ("names", "inherited", "parent")

    def __init__(self, parent: Scope | None = None, names: dict[str, Value] | None = None,
                 inherited: tuple[dict[str, Value], ...] = ()) -> None:
        self.parent = parent
        self.names: dict[str, Value] = {} if names is None else names
        self.inherited = inherited

    def get(self, name: str) -> Value | None:
        """The value bound to ``name`` in this scope (not the enclosing ones), or None."""
        value = self.names.get(name)
        if value is None:
            for layer in self.inherited:
                value = layer.get(name)
                if value is not None:
                    break
        return value

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            value = scope.get(name)
            if value is not None:
                return value
            scope = scope.parent
        return None

    def copy(self) -> Scope:
        # an empty layer is skipped: an ``elif`` chain of thousands of branches then reads through one layer
        layers = (self.names, *self.inherited) if self.names else self.inherited
        if len(layers) > _MAX_LAYERS:  # deep nesting that binds at every level: flatten all but the outermost
            merged: dict[str, Value] = {}
            for layer in reversed(layers[:-1]):
                merged.update(layer)
            layers = (merged, layers[-1])
        return Scope(self.parent, {}, layers)

    def join_from(self, *branches: Scope) -> None:
        """Make this scope the join of ``branches`` (copies of it that ran different code)."""
        keys = set().union(*(b.names.keys() for b in branches))
        names = self.names
        for key in keys:
            values = [b.get(key) for b in branches]
            first = values[0]
            if first is not None and all(value is first for value in values):
                names[key] = first  # the usual case: no branch rebound it
                continue
            # a branch where the name is unbound cannot reach a later use of it: only the others count
            found = [value if value is not None else b.lookup(key) for value, b in zip(values, branches)]
            names[key] = join_all([value for value in found if value is not None]) or UNKNOWN


_MAX_LAYERS = 16


@dataclass(slots=True)
class _Loop:
    id: int
    node: cst.CSTNode
    #: iterating it cannot give "many arrays": a DataLoader, a literal display, a dict, the parameters of a model.
    not_a_collection: bool


@dataclass(slots=True)
class _ClassContext:
    """What methods of the class being read share: ``self``'s attributes, set in one method, read in another."""

    self_name: str | None
    attributes: dict[str, Value]
    is_nn_module: bool
    #: the scope around the class statement: methods see it, not the class body's names.
    outer_scope: Scope
    in_class_body: bool


# Node fields that never hold an expression or statement: skipping them makes the generic walk cheap.
_TRIVIA_FIELDS = {"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
                  "footer", "trailing_whitespace", "newline", "equal", "colon", "star", "dot", "operator",
                  "whitespace_before", "whitespace_after", "lbracket", "rbracket", "lbrace", "rbrace", "quote",
                  "prefix", "string", "value_str"}
_child_fields_cache: dict[type, tuple[str, ...]] = {}
_ROLES: dict[type, str] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _child_fields_cache.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _TRIVIA_FIELDS and not f.name.startswith("whitespace")
        )
        _child_fields_cache[node_type] = fields
    return fields


class Analyzer:
    """Runs a module once and fills ``facts``. Use ``analyze(module)``."""

    def __init__(self) -> None:
        self.facts = Facts()
        self.scope = Scope()
        self.grad_enabled: bool | None = True
        self.loops: list[_Loop] = []
        self.copy_tests = 0  # how many enclosing ``if`` tests mention ``copy``
        self.class_context: _ClassContext | None = None
        self.module_scope = self.scope
        self.silent = False  # inside a loop's first pass: facts go nowhere
        self.stacking_call: cst.Call | None = None  # a torch.stack(...) whose argument is being evaluated
        self._loop_ids = itertools.count(1)
        self._statement_handlers: dict[type, Callable[[cst.CSTNode], None]] = {
            cst.SimpleStatementLine: self._simple_statement_line,
            cst.SimpleStatementSuite: self._simple_statement_line,
            cst.Expr: self._expr_statement,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.FunctionDef: self._function_def,
            cst.ClassDef: self._class_def,
            cst.If: self._if,
            cst.For: self._for,
            cst.While: self._while,
            cst.With: self._with,
            cst.Try: self._try,
            cst.Del: self._del,
            cst.Match: self._match,
        }
        if hasattr(cst, "TryStar"):
            self._statement_handlers[cst.TryStar] = self._try
        self._expression_handlers: dict[type, Callable[[cst.CSTNode], Value]] = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Subscript: self._subscript,
            cst.BinaryOperation: self._binary_operation,
            cst.UnaryOperation: self._unary_operation,
            cst.Comparison: self._comparison,
            cst.BooleanOperation: self._boolean_operation,
            cst.IfExp: self._if_exp,
            cst.List: self._list_or_tuple,
            cst.Tuple: self._list_or_tuple,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
            cst.NamedExpr: self._named_expr,
            cst.Lambda: self._lambda,
            cst.Integer: lambda node: Value(Kind.NUMBER, dtype="int"),
            cst.Float: lambda node: Value(Kind.NUMBER, dtype="float"),
            cst.Imaginary: lambda node: Value(Kind.NUMBER, dtype="complex"),
            cst.SimpleString: self._simple_string,
        }

    # -- entry points

    def analyze(self, module: cst.Module) -> Facts:
        self._block(module.body)
        return self.facts

    def _block(self, statements: Iterable[cst.CSTNode]) -> None:
        handlers = self._statement_handlers
        for statement in statements:
            handler = handlers.get(type(statement))
            if handler is None:
                self._walk_children(statement)
            else:
                handler(statement)

    def _suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self._block(suite.body)
        else:
            self._simple_statement_line(suite)

    def eval(self, node: cst.CSTNode) -> Value:
        handler = self._expression_handlers.get(type(node))
        if handler is None:
            self._walk_children(node)
            return UNKNOWN
        return handler(node)

    def _walk_children(self, node: cst.CSTNode) -> None:
        """Evaluate every expression and run every statement below a node we have no special handling for."""
        for name in _child_fields(type(node)):
            child = getattr(node, name)
            if isinstance(child, cst.CSTNode):
                self._visit(child)
            elif isinstance(child, (tuple, list)):
                for item in child:
                    if isinstance(item, cst.CSTNode):
                        self._visit(item)

    def _visit(self, node: cst.CSTNode) -> None:
        role = _ROLES.get(type(node))
        if role is None:  # isinstance on LibCST's abstract bases is slow: decide once per node type
            role = _ROLES[type(node)] = (
                "expression" if isinstance(node, cst.BaseExpression) else
                "statement" if type(node) in self._statement_handlers else
                "suite" if isinstance(node, cst.BaseSuite) else "other")
        if role == "expression":
            self.eval(node)
        elif role == "statement":
            self._statement_handlers[type(node)](node)
        elif role == "suite":
            self._suite(node)
        else:
            self._walk_children(node)

    # -- statements

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
            flag = _bool_literal(value)
            self.scope.names[target.value.value] = owner.but(requires_grad=flag)

    def _import(self, node: cst.Import) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            dotted = _dotted_name(alias.name)
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
        module = _dotted_name(node.module) if node.module is not None else None
        relative = bool(node.relative)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _dotted_name(alias.name)
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
            if mode is not _NOT_A_GRAD_MODE:
                grad_enabled = mode
        self._eval_parameter_defaults(node.params)
        if node.returns is not None:
            self.eval(node.returns.annotation)
        self.scope.names[node.name.value] = LOCAL

        context = self.class_context
        is_method = context is not None and context.in_class_body
        function_scope = Scope(context.outer_scope if is_method else self.scope)  # type: ignore[union-attr]
        self._bind_parameters(node.params, function_scope)
        saved = (self.scope, self.grad_enabled, self.loops, self.copy_tests, self.class_context)
        self.scope, self.grad_enabled, self.loops, self.copy_tests = function_scope, grad_enabled, [], 0
        if is_method:
            assert context is not None
            params = node.params.posonly_params or node.params.params
            is_static = any(_dotted_name(d.decorator) == "staticmethod" for d in node.decorators)
            self_name = params[0].name.value if params and not is_static else None
            self.class_context = _ClassContext(self_name, context.attributes, context.is_nn_module,
                                               context.outer_scope, in_class_body=False)
            if self_name is not None:
                function_scope.names[self_name] = (
                    Value(Kind.NN_MODULE, has_params=True) if context.is_nn_module else UNKNOWN)
        try:
            self._suite(node.body)
        finally:
            self.scope, self.grad_enabled, self.loops, self.copy_tests, self.class_context = saved

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
        self.class_context = _ClassContext(None, {}, is_nn_module, saved_scope, in_class_body=True)
        try:
            self._suite(node.body)
        finally:
            self.scope, self.class_context = saved_scope, saved_context
        self.scope.names[node.name.value] = Value(Kind.NN_MODULE_CLASS) if is_nn_module else LOCAL

    def _if(self, node: cst.If) -> None:
        self.eval(node.test)
        narrowed = self._isinstance_narrowing(node.test)
        mentions_copy = _mentions_copy(node.test)
        before = self.scope
        body_scope = before.copy()
        for name, value in narrowed.items():
            body_scope.names[name] = value
        self.scope = body_scope
        self.copy_tests += mentions_copy
        try:
            self._suite(node.body)
            else_scope = before.copy()
            self.scope = else_scope
            if isinstance(node.orelse, cst.If):
                self._if(node.orelse)
            elif isinstance(node.orelse, cst.Else):
                self._suite(node.orelse.body)
        finally:
            self.copy_tests -= mentions_copy
            self.scope = before
        before.join_from(body_scope, else_scope)

    def _isinstance_narrowing(self, test: cst.BaseExpression) -> dict[str, Value]:
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)):
            return {}
        class_value = self.eval_quietly(test.args[1].value)
        if class_value.kind is not Kind.REF:
            return {}
        qualname = class_value.qualname
        name = test.args[0].value.value
        current = self.scope.lookup(name) or UNKNOWN
        if qualname == "numpy.ndarray" and current.kind is not Kind.NDARRAY:
            return {name: Value(Kind.NDARRAY)}
        if qualname == "torch.Tensor" and current.kind is not Kind.TENSOR:
            return {name: Value(Kind.TENSOR)}
        return {}

    def _for(self, node: cst.For) -> None:
        iterable = self.eval(node.iter)
        loop = self._new_loop(node, node.iter, iterable)

        def body() -> None:
            self.loops.append(loop)
            try:
                self._bind(node.target, self._iteration_item(iterable, loop))
                self._suite(node.body)
            finally:
                self.loops.pop()

        self._loop(body)
        if node.orelse is not None:
            self._suite(node.orelse.body)

    def _while(self, node: cst.While) -> None:
        self.eval(node.test)
        self._loop(lambda: self._suite(node.body))
        if node.orelse is not None:
            self._suite(node.orelse.body)

    def _loop(self, body: Callable[[], None]) -> None:
        """Run a loop body that may run zero or more times.

        A first, silent pass learns what comes round the back edge (``out = model(x)`` at the end of one
        iteration is what ``out.numpy()`` at the start of the next sees); the second pass, from the join of that
        and the state before the loop, records the facts. Loops inside a silent pass run once, so the cost grows
        with nesting depth, not exponentially.
        """
        before = self.scope
        if not self.silent:
            saved_facts, self.facts = self.facts, Facts()
            self.silent = True
            first_pass = before.copy()
            self.scope = first_pass
            try:
                body()
            finally:
                self.facts, self.silent, self.scope = saved_facts, False, before
            before.join_from(before.copy(), first_pass)
        body_scope = before.copy()
        self.scope = body_scope
        try:
            body()
        finally:
            self.scope = before
        before.join_from(before.copy(), body_scope)

    def _with(self, node: cst.With) -> None:
        mode: object = _NOT_A_GRAD_MODE
        for item in node.items:
            self.eval(item.item)
            item_mode = self._grad_mode_of(item.item, as_decorator=False)
            if item_mode is not _NOT_A_GRAD_MODE:
                mode = item_mode
            if item.asname is not None:
                self._bind(item.asname.name, UNKNOWN)
        saved = self.grad_enabled
        if mode is not _NOT_A_GRAD_MODE:
            self.grad_enabled = mode  # type: ignore[assignment]
        try:
            self._suite(node.body)
        finally:
            self.grad_enabled = saved

    def _try(self, node: cst.Try) -> None:
        before = self.scope
        body_scope = before.copy()
        self.scope = body_scope
        try:
            self._suite(node.body)
            if node.orelse is not None:
                self._suite(node.orelse.body)
            branches = [body_scope]
            for handler in node.handlers:
                handler_scope = before.copy()
                handler_scope.join_from(before.copy(), body_scope)
                self.scope = handler_scope
                if handler.type is not None:
                    self.eval(handler.type)
                if handler.name is not None:
                    self._bind(handler.name.name, UNKNOWN)
                self._suite(handler.body)
                branches.append(handler_scope)
        finally:
            self.scope = before
        before.join_from(*branches)
        if node.finalbody is not None:
            self._suite(node.finalbody.body)

    def _match(self, node: cst.Match) -> None:
        self.eval(node.subject)
        before = self.scope
        branches = [before.copy()]
        try:
            for case in node.cases:
                case_scope = before.copy()
                self.scope = case_scope
                for name in _pattern_names(case.pattern):
                    case_scope.names[name] = UNKNOWN
                self._walk_children(case.pattern)
                if case.guard is not None:
                    self.eval(case.guard)
                self._suite(case.body)
                branches.append(case_scope)
        finally:
            self.scope = before
        before.join_from(*branches)

    def _del(self, node: cst.Del) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            target_node = target.value if isinstance(target, cst.BaseElement) else target
            if isinstance(target_node, cst.Name):
                self.scope.names[target_node.value] = UNKNOWN
            else:
                self.eval(target_node)

    # -- grad mode

    def _grad_mode_of(self, expression: cst.BaseExpression, *, as_decorator: bool) -> object:
        """The autograd mode a ``with`` item or decorator sets, or ``_NOT_A_GRAD_MODE``."""
        call = expression if isinstance(expression, cst.Call) else None
        callee = self.eval_quietly(call.func if call is not None else expression)
        if callee.kind is not Kind.REF or callee.qualname not in api.GRAD_MODE_SETTERS:
            return _NOT_A_GRAD_MODE
        if call is None and not as_decorator:
            return _NOT_A_GRAD_MODE  # ``with torch.no_grad:`` is a TypeError, not a mode
        fixed = api.GRAD_MODE_SETTERS[callee.qualname]
        first = call.args[0].value if call is not None and call.args else None
        if fixed is None:  # set_grad_enabled(flag)
            return _bool_literal_node(first)
        if fixed is False and first is not None and callee.qualname.endswith("inference_mode"):
            flag = _bool_literal_node(first)
            return False if flag is True else (self.grad_enabled if flag is False else None)
        return fixed

    def eval_quietly(self, node: cst.BaseExpression) -> Value:
        """The value of a name or attribute chain, without recording facts (it was evaluated already)."""
        if isinstance(node, cst.Name):
            return self.scope.lookup(node.value) or UNKNOWN
        if isinstance(node, cst.Attribute):
            owner = self.eval_quietly(node.value)
            if owner.kind is Kind.REF:
                return ref(f"{owner.qualname}.{node.attr.value}")
        return UNKNOWN

    # -- loops

    def _new_loop(self, node: cst.CSTNode, iter_node: cst.BaseExpression, iterable: Value) -> _Loop:
        return _Loop(next(self._loop_ids), node, self._is_not_a_collection(iter_node, iterable))

    def _is_not_a_collection(self, iter_node: cst.BaseExpression, iterable: Value) -> bool:
        if iterable.kind in (Kind.DATALOADER, Kind.NN_MODULE, Kind.OTHER, Kind.STRING):
            return True
        if isinstance(iter_node, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return True  # a handful of different things written out, e.g. ``(inputs, targets)``
        if isinstance(iter_node, cst.Call):
            func = iter_node.func
            if isinstance(func, cst.Attribute) and func.attr.value in api.NOT_A_COLLECTION_ITERATION:
                return True
            if isinstance(func, cst.Name) and func.value in ("zip", "enumerate", "reversed", "sorted") and \
                    iter_node.args:
                return all(self._is_not_a_collection(arg.value, self.eval_quietly(arg.value))
                           for arg in iter_node.args if not (func.value == "enumerate" and arg.keyword))
        return False

    def _iteration_item(self, iterable: Value, loop: _Loop) -> Value:
        item = self._element_of(iterable)
        return self._mark_item(item, loop.id)

    def _mark_item(self, item: Value, loop_id: int) -> Value:
        if item.kind is Kind.SEQUENCE and item.items is not None:  # zip/enumerate: mark the parts
            return item.but(items=tuple(self._mark_item(part, loop_id) for part in item.items), loop_item=loop_id)
        return item.but(loop_item=loop_id)

    def _element_of(self, iterable: Value) -> Value:
        if iterable.kind is Kind.SEQUENCE:
            if iterable.element is not None:
                return iterable.element
            if iterable.items:
                return join_all(list(iterable.items)) or UNKNOWN
            return UNKNOWN
        if iterable.kind is Kind.NDARRAY:
            return iterable.but(kind=Kind.NUMPY_VALUE, loop_item=None, items=None)
        if iterable.kind is Kind.TENSOR:
            return iterable.but(loop_item=None, transfer=None)
        return UNKNOWN

    def _current_loop(self) -> _Loop | None:
        return self.loops[-1] if self.loops else None

    def _note_collected(self, value: Value, how: str, stacked_by: cst.Call | None = None) -> None:
        """``value`` was appended to a list or stored in one: a per-item transfer in this loop is batchable."""
        loop = self._current_loop()
        if value.transfer is None or loop is None or value.loop_item != loop.id or loop.not_a_collection:
            return
        self.facts.collected_transfers.append(CollectedTransfer(value.transfer, loop.node, how, stacked_by))

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
                self.eval(node.value)
                return OTHER
            element = self.eval(node.elt)
            if collected is None:
                collected = not isinstance(node, cst.GeneratorExp)
            if collected:
                self._note_collected(element, "comprehension", stacked_by=self.stacking_call)
            return Value(Kind.SEQUENCE, element=element.but(loop_item=None, transfer=None))
        finally:
            del self.loops[loops_before:]
            self.scope = before

    # -- expressions

    def _name(self, node: cst.Name) -> Value:
        name = node.value
        value = self.scope.lookup(name)
        if value is not None:
            return value
        if name == "None":
            return NONE
        if name in ("True", "False"):
            return Value(Kind.NUMBER, dtype="bool", literal=name)
        if name in api.BUILTINS:
            return ref("builtins." + name)
        return UNKNOWN

    def _simple_string(self, node: cst.SimpleString) -> Value:
        try:
            text = node.evaluated_value
        except Exception:  # noqa: BLE001 - f-string-like or odd prefixes: the text does not matter then
            text = None
        return Value(Kind.STRING, literal=text if isinstance(text, str) else None)

    def _attribute(self, node: cst.Attribute) -> Value:
        attribute = node.attr.value
        context = self.class_context
        if context is not None and isinstance(node.value, cst.Name) and node.value.value == context.self_name:
            return context.attributes.get(attribute, UNKNOWN)
        owner = self.eval(node.value)
        kind = owner.kind
        if kind is Kind.REF:
            return ref(f"{owner.qualname}.{attribute}")
        if kind is Kind.TENSOR:
            if attribute == "data":
                return owner.but(requires_grad=False, float64_origins=frozenset())
            if attribute == "grad":
                return owner.but(requires_grad=False, loop_item=None, transfer=None, float64_origins=frozenset())
            if attribute in ("T", "mT", "H", "mH", "real", "imag"):
                return owner
            if attribute == "device":
                return Value(Kind.DEVICE, on_accelerator=owner.on_accelerator)
            return UNKNOWN
        if owner.is_numpy:
            if attribute in ("T", "real", "imag"):
                return owner
            return UNKNOWN
        if kind is Kind.NN_MODULE and attribute in ("weight", "bias"):
            return Value(Kind.TENSOR, requires_grad=owner.has_params, on_accelerator=owner.on_accelerator)
        return UNKNOWN

    def _subscript(self, node: cst.Subscript) -> Value:
        base = self.eval(node.value)
        index_values = [self.eval(element.slice.value) for element in node.slice
                        if isinstance(element.slice, cst.Index)]
        for element in node.slice:
            if isinstance(element.slice, cst.Slice):
                self._walk_children(element.slice)
        loop_item = next((v.loop_item for v in index_values if v.loop_item is not None), None)
        if base.kind is Kind.TENSOR:
            result = base.but(items=None)
        elif base.is_numpy:
            # only integer indices in every position can give a NumPy scalar; slices, masks and None give arrays
            is_slice = any(isinstance(e.slice, cst.Slice) for e in node.slice) or any(
                v.kind in (Kind.NDARRAY, Kind.SEQUENCE, Kind.NONE, Kind.TENSOR) or v.qualname == "builtins.Ellipsis"
                for v in index_values) or any(isinstance(e.slice.value, cst.Ellipsis) for e in node.slice
                                              if isinstance(e.slice, cst.Index))
            result = base.but(kind=Kind.NDARRAY if is_slice else Kind.NUMPY_VALUE)
        elif base.kind is Kind.SEQUENCE:
            result = self._element_of(base)
            if base.items is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                position = _int_literal(node.slice[0].slice.value)
                if position is not None and -len(base.items) <= position < len(base.items):
                    result = base.items[position]
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
            return Value(Kind.TENSOR, dtype="bool", requires_grad=False,
                         on_accelerator=_either_all(v.on_accelerator for v in (left, *rights)
                                                    if v.kind is Kind.TENSOR))
        if any(v.is_numpy for v in (left, *rights)):
            return Value(Kind.NDARRAY, dtype="bool")
        return Value(Kind.NUMBER, dtype="bool")

    def _boolean_operation(self, node: cst.BooleanOperation) -> Value:
        return join(self.eval(node.left), self.eval(node.right))

    def _if_exp(self, node: cst.IfExp) -> Value:
        self.eval(node.test)
        mentions_copy = _mentions_copy(node.test)
        self.copy_tests += mentions_copy
        try:
            return join(self.eval(node.body), self.eval(node.orelse))
        finally:
            self.copy_tests -= mentions_copy

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
        return Value(Kind.SEQUENCE, items=tuple(items), element=join_all(items))

    def _named_expr(self, node: cst.NamedExpr) -> Value:
        value = self.eval(node.value)
        self._bind(node.target, value)
        return value

    def _lambda(self, node: cst.Lambda) -> Value:
        self._eval_parameter_defaults(node.params)
        saved, saved_grad = self.scope, self.grad_enabled
        self.scope = Scope(saved)
        self.grad_enabled = True  # a lambda runs when called, like a def: not in the block it is written in
        self._bind_parameters(node.params, self.scope)
        try:
            self.eval(node.body)
        finally:
            self.scope, self.grad_enabled = saved, saved_grad
        return OTHER

    def _binary_operation(self, node: cst.BinaryOperation) -> Value:
        return self._binary(self.eval(node.left), self.eval(node.right), node.operator)

    def _binary(self, left: Value, right: Value, operator: cst.CSTNode) -> Value:
        if left.kind is Kind.TENSOR or right.kind is Kind.TENSOR:
            return self._tensor_arithmetic(left, right)
        if left.is_numpy or right.is_numpy:
            return _numpy_arithmetic(left, right, operator)
        if left.kind is Kind.SEQUENCE and right.kind is Kind.SEQUENCE and isinstance(operator, cst.Add):
            return Value(Kind.SEQUENCE, element=join(left.element or UNKNOWN, right.element or UNKNOWN)
                         if left.element and right.element else left.element or right.element)
        if left.kind is Kind.NUMBER and right.kind is Kind.NUMBER:
            if "float" in (left.dtype, right.dtype) or isinstance(operator, cst.Divide):
                return Value(Kind.NUMBER, dtype="float")
            return Value(Kind.NUMBER, dtype=left.dtype if left.dtype == right.dtype else None)
        return UNKNOWN

    def _tensor_arithmetic(self, *operands: Value) -> Value:
        tensors = [v for v in operands if v.kind is Kind.TENSOR]
        others_known = all(v.kind in (Kind.TENSOR, Kind.NUMBER) or v.is_numpy for v in operands)
        requires_grad = self._result_requires_grad(tensors, others_known)
        dtypes = {v.dtype for v in tensors}
        first = tensors[0]
        return Value(
            Kind.TENSOR,
            dtype=dtypes.pop() if len(dtypes) == 1 else None,
            requires_grad=requires_grad,
            on_accelerator=_either_all(v.on_accelerator for v in tensors),
            float64_origins=frozenset().union(*(v.float64_origins for v in tensors)),
            loop_item=next((v.loop_item for v in operands if v.loop_item is not None), None),
            transfer=first.transfer,
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

    # -- calls

    def _call(self, node: cst.Call) -> Value:
        func = node.func
        if isinstance(func, cst.Attribute):
            receiver = self.eval(func.value)
            method = func.attr.value
            if receiver.kind is not Kind.REF:
                if (self.class_context is not None and isinstance(func.value, cst.Name)
                        and func.value.value == self.class_context.self_name):
                    receiver = self.class_context.attributes.get(method, UNKNOWN)
                    return self._call_value(node, receiver, self._eval_args(node, None))
                args = self._eval_args(node, None)
                return self._call_method(node, func, receiver, method, args)
            callee = ref(f"{receiver.qualname}.{method}")
        else:
            callee = self.eval(func)
        qualname = callee.qualname if callee.kind is Kind.REF else None
        return self._call_value(node, callee, self._eval_args(node, qualname))

    def _eval_args(self, node: cst.Call, callee: str | None) -> _Args:
        collects = callee in api.COLLECTORS
        stacks_one_argument = callee == "torch.stack" and len(node.args) >= 1 and isinstance(
            node.args[0].value, (cst.ListComp, cst.GeneratorExp))
        positional: list[Value] = []
        positional_nodes: list[cst.BaseExpression] = []
        keywords: dict[str, Value] = {}
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
            elif arg.star:
                keywords["*" + arg.star] = value
            else:
                positional.append(value)
                positional_nodes.append(arg.value)
        return _Args(positional, keywords, positional_nodes)

    def _call_value(self, node: cst.Call, callee: Value, args: _Args) -> Value:
        kind = callee.kind
        if kind is Kind.REF:
            result = self._call_qualname(node, callee.qualname or "", args)
            if result.loop_item is None and (result.is_numpy or result.kind is Kind.TENSOR):
                # ``np.asarray(a)``, ``torch.relu(t)``: made from a loop's item, it is that item's too
                item = next((v.loop_item for v in args.positional if v.loop_item is not None and (
                    v.is_numpy or v.kind in (Kind.TENSOR, Kind.UNKNOWN))), None)
                if item is not None:
                    result = result.but(loop_item=item)
            return result
        if kind is Kind.NN_MODULE:
            return self._module_output(callee, args)
        if kind is Kind.NN_MODULE_CLASS:
            return Value(Kind.NN_MODULE, has_params=True, on_accelerator=False)
        return UNKNOWN

    def _call_builtin(self, name: str, args: _Args) -> Value:
        first = args.first
        if name in ("list", "tuple", "sorted", "reversed") and first is not None:
            return Value(Kind.SEQUENCE, element=self._element_of(first))
        if name == "zip":
            parts = tuple(self._element_of(v) for v in args.positional)
            return Value(Kind.SEQUENCE, element=Value(Kind.SEQUENCE, items=parts))
        if name == "enumerate" and first is not None:
            index = Value(Kind.NUMBER, dtype="int")
            return Value(Kind.SEQUENCE, element=Value(Kind.SEQUENCE, items=(index, self._element_of(first))))
        if name == "range":
            return Value(Kind.SEQUENCE, element=Value(Kind.NUMBER, dtype="int"))
        if name in ("len", "int", "float", "bool", "str", "repr", "print", "isinstance", "hash", "id"):
            return Value(Kind.NUMBER, dtype={"float": "float", "bool": "bool"}.get(name, "int"))
        return UNKNOWN

    def _module_output(self, module: Value, args: _Args) -> Value:
        inputs = args.all_values()
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        if self.grad_enabled is False:
            requires_grad: bool | None = False
        elif module.has_params:
            requires_grad = True if self.grad_enabled else None
        elif module.has_params is False:  # a loss or activation: its inputs decide
            requires_grad = self._result_requires_grad(tensors, inputs_known=len(tensors) == len(inputs))
        else:
            requires_grad = None
        on_accelerator = _either_all([module.on_accelerator, *(v.on_accelerator for v in tensors)])
        return Value(Kind.TENSOR, requires_grad=requires_grad, on_accelerator=on_accelerator)

    def _call_qualname(self, node: cst.Call, qualname: str, args: _Args) -> Value:
        if qualname.startswith("numpy."):
            return self._call_numpy(node, qualname, args)
        if qualname.startswith("torch."):
            return self._call_torch(node, qualname, args)
        if qualname.startswith("builtins."):
            return self._call_builtin(qualname[len("builtins."):], args)
        if qualname.startswith(_RUNTIME):
            return self._call_runtime_helper(node, qualname[len(_RUNTIME):], args)
        if qualname.startswith("torchvision.models.") and qualname.rsplit(".", 1)[1][:1].islower():
            return Value(Kind.NN_MODULE, has_params=True, on_accelerator=False)
        return UNKNOWN

    def _call_runtime_helper(self, node: cst.Call, name: str, args: _Args) -> Value:
        """np2torch_lint.runtime's helpers, which the fixes write: the analysis must see through them too."""
        if name == "from_numpy":
            return self._numpy_to_tensor(node, "np2torch_lint.runtime.from_numpy", args)
        if name in ("to_numpy", "to_numpy_async"):
            first = args.first
            return Value(Kind.NDARRAY, dtype=first.dtype if first is not None else None)
        if name == "stack_to_device":
            device = args.keywords.get("device") or (args.positional[1] if len(args.positional) > 1 else None)
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=device_on_accelerator(device),
                         dtype=self._dtype_argument(args, None))
        return UNKNOWN

    # numpy

    def _call_numpy(self, node: cst.Call, qualname: str, args: _Args) -> Value:
        first = args.first
        if qualname in api.NUMPY_FLOAT_CONSTRUCTORS:
            dtype_position, size_position = api.NUMPY_FLOAT_CONSTRUCTORS[qualname]
            gives_array = _gives_array(args, size_position)
            explicit = self._dtype_argument(args, dtype_position)
            if explicit is not None:
                return Value(Kind.NDARRAY if gives_array else Kind.NUMPY_VALUE, dtype=explicit)
            if not gives_array:
                return Value(Kind.NUMBER, dtype="float")
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if qualname in api.TENSOR_READING_NUMPY_FUNCTIONS and first is not None and first.kind is Kind.TENSOR:
            self.facts.tensor_to_numpy.append(TensorToNumpy(node, qualname, first, self.grad_enabled))
            return Value(Kind.NDARRAY, dtype=first.dtype)
        if qualname in api.NUMPY_ARRAY_FROM_DATA:
            explicit = self._dtype_argument(args, 1)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            if first is None:
                return UNKNOWN
            data_node = node.args[0].value
            literal_dtype = _literal_data_dtype(data_node)
            if literal_dtype is not None:
                return Value(Kind.NDARRAY, dtype=literal_dtype, float64_by_default=literal_dtype == "float64")
            if first.is_numpy:
                return first.but(kind=Kind.NDARRAY, items=None, element=None)
            if first.kind is Kind.SEQUENCE and first.element is not None and first.element.is_numpy:
                return first.element.but(kind=Kind.NDARRAY, items=None)
            return Value(Kind.NDARRAY)
        if qualname == "numpy.full":
            explicit = self._dtype_argument(args, 2)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            fill = args.positional[1] if len(args.positional) > 1 else args.keywords.get("fill_value")
            return _array_of_scalar(fill)
        if qualname == "numpy.arange":
            explicit = self._dtype_argument(args, 3)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            bounds = args.positional[:3]
            if any(v.kind is Kind.NUMBER and v.dtype == "float" for v in bounds):
                return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
            if bounds and all(v.kind is Kind.NUMBER and v.dtype == "int" for v in bounds):
                return Value(Kind.NDARRAY, dtype="int64")
            return Value(Kind.NDARRAY)
        if qualname in api.NUMPY_INT_CONSTRUCTORS:
            explicit = self._dtype_argument(args, None)
            return Value(Kind.NDARRAY if args.positional or args.keywords else Kind.NUMBER,
                         dtype=explicit or "int64")
        if qualname in api.NUMPY_LIKE:
            explicit = self._dtype_argument(args, 1 if qualname != "numpy.full_like" else 2)
            if first is not None and first.is_numpy:
                return first.but(kind=Kind.NDARRAY, dtype=explicit or first.dtype,
                                 float64_by_default=first.float64_by_default and explicit is None)
            return Value(Kind.NDARRAY, dtype=explicit)
        if qualname in ("numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"):
            return Value(Kind.NUMPY_GENERATOR)
        if qualname in api.NUMPY_JOINING and first is not None:
            elements = list(first.items) if first.items is not None else [first.element or UNKNOWN]
            return _numpy_promoted(elements, Kind.NDARRAY)
        name = qualname.rsplit(".", 1)[1]
        if qualname == "numpy." + name and first is not None and first.is_numpy:
            explicit = self._dtype_argument(args, None)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            if name in api.NUMPY_TO_FLOAT:
                return _to_float_result(first, reduction=name in api.NUMPY_REDUCTIONS and "axis" not in args.keywords)
            if name in api.NUMPY_SAME_DTYPE:
                is_reduction = name in api.NUMPY_REDUCTIONS and "axis" not in args.keywords
                return first.but(kind=Kind.NUMPY_VALUE if is_reduction else Kind.NDARRAY, items=None)
            if name in api.NUMPY_BINARY:
                return _numpy_promoted([v for v in args.positional if v.is_numpy or v.kind is Kind.NUMBER],
                                       Kind.NDARRAY)
        if qualname in ("numpy.float64", "numpy.double"):
            return Value(Kind.NUMPY_VALUE, dtype="float64")
        dtype = DTYPE_NAMES.get(qualname.rsplit(".", 1)[1]) if qualname.count(".") == 1 else None
        if dtype is not None:  # np.float32(x): a NumPy scalar of that dtype
            return Value(Kind.NUMPY_VALUE, dtype=dtype)
        return UNKNOWN

    def _numpy_method(self, node: cst.Call, receiver: Value, method: str, args: _Args) -> Value:
        if method == "astype":
            dtype = self._dtype_argument(args, 0)
            return receiver.but(dtype=dtype, float64_by_default=False, kind=Kind.NDARRAY
                                if receiver.kind is Kind.NDARRAY else receiver.kind)
        if method in ("tolist", "item", "tobytes"):
            return OTHER
        is_reduction = method in api.NUMPY_REDUCTIONS and not args.positional and "axis" not in args.keywords
        explicit = self._dtype_argument(args, None)
        if explicit is not None:
            return receiver.but(dtype=explicit, float64_by_default=False)
        if method in api.NUMPY_TO_FLOAT:
            return _to_float_result(receiver, reduction=is_reduction)
        if method in api.NUMPY_SAME_DTYPE:
            return receiver.but(kind=Kind.NUMPY_VALUE if is_reduction else receiver.kind, items=None)
        return UNKNOWN

    def _generator_method(self, receiver: Value, method: str, args: _Args) -> Value:
        if method in api.NUMPY_GENERATOR_FLOAT_METHODS:
            explicit = self._dtype_argument(args, None)
            gives_array = _gives_array(args, api.NUMPY_GENERATOR_FLOAT_METHODS[method])
            if explicit is not None:
                return Value(Kind.NDARRAY if gives_array else Kind.NUMPY_VALUE, dtype=explicit)
            if not gives_array:
                return Value(Kind.NUMBER, dtype="float")
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if method in ("integers", "randint", "choice", "permutation"):
            return Value(Kind.NDARRAY, dtype=self._dtype_argument(args, None) or "int64")
        return UNKNOWN

    # torch

    def _call_torch(self, node: cst.Call, qualname: str, args: _Args) -> Value:
        first = args.first
        if qualname in ("torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.asarray") or (
                qualname in api.LEGACY_TENSOR_TYPES):
            return self._numpy_to_tensor(node, qualname, args)
        if qualname in api.PARAMETER:
            flag_value = args.keywords.get("requires_grad") or (
                args.positional[1] if len(args.positional) > 1 else None)
            requires_grad = True if flag_value is None else _bool_literal(flag_value)
            base = first if first is not None and first.kind is Kind.TENSOR else Value(Kind.TENSOR)
            return base.but(requires_grad=requires_grad, float64_origins=frozenset(), loop_item=None,
                            transfer=None)
        if qualname == "torch.device":
            return Value(Kind.DEVICE, on_accelerator=device_on_accelerator(first) if first else None)
        if qualname in api.DATALOADERS:
            return Value(Kind.DATALOADER)
        if qualname in ("torch.set_default_dtype", "torch.set_default_tensor_type"):
            self.facts.sets_default_dtype = True
            return NONE
        if qualname in api.GRAD_MODE_SETTERS:
            return OTHER
        module_class = qualname[len("torch.nn."):] if qualname.startswith("torch.nn.") else ""
        if module_class and "." not in module_class and module_class[:1].isupper():
            return self._nn_module(module_class, args)
        name = qualname[len("torch."):]
        if name in api.TORCH_CREATORS:
            return self._created_tensor(args)
        if qualname in api.TORCH_INDEX_OR_BOOL:
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=_either_all(
                v.on_accelerator for v in args.tensors()))
        tensors = args.tensors()
        if tensors:  # any other torch function of tensors: an op that autograd tracks
            return self._tensor_arithmetic(*tensors).but(dtype=None, loop_item=None, transfer=None)
        return UNKNOWN

    def _nn_module(self, class_name: str, args: _Args) -> Value:
        if class_name in api.PARAMETER_FREE_MODULES:
            has_params: bool | None = False
        elif class_name in api.MODULE_CONTAINERS:
            children = args.all_values()
            has_params = True if any(c.has_params for c in children) else (
                False if children and all(c.has_params is False for c in children) else None)
        else:
            has_params = True
        device = args.keywords.get("device")
        return Value(Kind.NN_MODULE, has_params=has_params,
                     on_accelerator=device_on_accelerator(device) if device is not None else False)

    def _created_tensor(self, args: _Args) -> Value:
        device = args.keywords.get("device")
        like = args.first if args.first is not None and args.first.kind is Kind.TENSOR else None
        requires_grad = _bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else (
            like.on_accelerator if like is not None else False)
        return Value(Kind.TENSOR, dtype=self._dtype_argument(args, None), requires_grad=requires_grad,
                     on_accelerator=on_accelerator)

    def _numpy_to_tensor(self, node: cst.Call, qualname: str, args: _Args) -> Value:
        source = args.first or args.keywords.get("data") or UNKNOWN
        keywords = frozenset(k for k in args.keywords if not k.startswith("*"))
        dtype_value = args.keywords.get("dtype")
        if qualname == "torch.as_tensor" and dtype_value is None and len(args.positional) > 1:
            dtype_value = args.positional[1]
        dtype = None if dtype_value is None else (self._dtype_of_value(dtype_value) or "?")
        device = args.keywords.get("device")
        if qualname == "torch.as_tensor" and device is None and len(args.positional) > 2:
            device = args.positional[2]
        if source.kind is Kind.TENSOR:
            # ``as_tensor(t)`` is ``t``; ``tensor(t)`` copies and detaches (it warns)
            result = source if qualname != "torch.tensor" else source.but(requires_grad=False)
            return result.but(dtype=source.dtype if dtype is None else (None if dtype == "?" else dtype))
        source_is_numpy = source.is_numpy or (source.kind is Kind.SEQUENCE and source.items is not None and any(
            v.is_numpy for v in source.items))
        if source_is_numpy:
            self.facts.numpy_to_tensor.append(NumpyToTensor(
                node, qualname, source, keywords, dtype, device, self.copy_tests > 0))
        if qualname in api.LEGACY_TENSOR_TYPES:
            result_dtype: str | None = api.LEGACY_TENSOR_TYPES[qualname]
        elif dtype is not None:
            result_dtype = None if dtype == "?" else dtype
        else:
            result_dtype = _numpy_source_dtype(source) if source_is_numpy else None
        origins: frozenset[cst.Call] = frozenset()
        if (dtype is None and qualname not in api.LEGACY_TENSOR_TYPES and source_is_numpy
                and result_dtype == "float64" and _float64_by_default(source)
                and not (qualname == "torch.from_numpy" and source.kind is not Kind.NDARRAY)):
            self.facts.float64_conversions[node] = qualname
            origins = frozenset({node})
        requires_grad = _bool_literal(args.keywords["requires_grad"]) if "requires_grad" in args.keywords else False
        on_accelerator = device_on_accelerator(device) if device is not None else False
        if qualname.startswith("torch.cuda."):
            on_accelerator = True
        return Value(Kind.TENSOR, dtype=result_dtype, requires_grad=requires_grad, on_accelerator=on_accelerator,
                     float64_origins=origins, loop_item=source.loop_item)

    # methods

    def _call_method(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str,
                     args: _Args) -> Value:
        kind = receiver.kind
        if kind is Kind.TENSOR:
            result = self._tensor_method(node, receiver, method, args)
            if method in ("requires_grad_", "detach_") and isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = result  # in place: the name now holds the changed tensor
            return result
        if receiver.is_numpy:
            return self._numpy_method(node, receiver, method, args)
        if kind is Kind.NN_MODULE:
            return self._module_method(func, receiver, method, args)
        if kind is Kind.NUMPY_GENERATOR:
            return self._generator_method(receiver, method, args)
        if kind is Kind.SEQUENCE:
            if method == "append" and args.first is not None:
                self._note_collected(args.first, "append")
                if isinstance(func.value, cst.Name):
                    element = args.first.but(loop_item=None, transfer=None)
                    self.scope.names[func.value.value] = receiver.but(
                        items=None, element=element if receiver.element is None else join(receiver.element, element))
            return NONE if method in ("append", "extend", "insert") else UNKNOWN
        if kind is Kind.UNKNOWN and method == "append" and args.first is not None:
            self._note_collected(args.first, "append")  # ``self.batches.append(x.cuda())``: still collected
        return UNKNOWN

    def _module_method(self, func: cst.Attribute, module: Value, method: str, args: _Args) -> Value:
        if method in ("to", "cuda", "cpu"):
            moved = module.but(on_accelerator=self._destination_on_accelerator(method, args, module.on_accelerator))
            if isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = moved  # nn.Module.to() moves in place and returns self
            return moved
        if method == "requires_grad_":
            flag = _bool_literal(args.first) if args.first is not None else True
            changed = module.but(has_params=False if flag is False else module.has_params)
            if isinstance(func.value, cst.Name):
                self.scope.names[func.value.value] = changed
            return changed
        if method in ("train", "eval", "float", "double", "half", "bfloat16", "share_memory"):
            return module
        if method == "forward":
            return self._module_output(module, args)
        if method == "parameters":
            return Value(Kind.SEQUENCE, element=Value(Kind.TENSOR, requires_grad=module.has_params,
                                                      on_accelerator=module.on_accelerator))
        return UNKNOWN

    def _tensor_method(self, node: cst.Call, tensor: Value, method: str, args: _Args) -> Value:
        if method == "numpy":
            force = "force" in args.keywords and _bool_literal(args.keywords["force"]) is not False
            if not force:
                self.facts.tensor_to_numpy.append(TensorToNumpy(node, "numpy", tensor, self.grad_enabled))
            return Value(Kind.NDARRAY, dtype=tensor.dtype)
        if method in ("detach", "detach_"):
            return tensor.but(requires_grad=False)
        if method in ("cpu", "cuda", "to"):
            return self._tensor_move(node, tensor, method, args)
        if method in api.TENSOR_DTYPE_METHODS:
            dtype = api.TENSOR_DTYPE_METHODS[method]
            self.facts.dtype_decided.update(tensor.float64_origins)
            return tensor.but(dtype=dtype, float64_origins=frozenset(),
                              requires_grad=tensor.requires_grad if is_float(dtype) else False)
        if method == "type" and (args.positional or args.keywords):
            self.facts.dtype_decided.update(tensor.float64_origins)
            return tensor.but(dtype=None, float64_origins=frozenset())
        if method == "requires_grad_":
            flag = _bool_literal(args.first) if args.first is not None else True
            return tensor.but(requires_grad=flag)
        if method in api.TENSOR_INDEX_OR_BOOL:
            return Value(Kind.TENSOR, requires_grad=False, on_accelerator=tensor.on_accelerator)
        if method in api.TENSOR_NOT_ARRAYS:
            return OTHER
        if method in ("max", "min", "median", "mode", "sort", "topk", "kthvalue") and (
                args.positional or args.keywords):
            return UNKNOWN  # with a dim these return (values, indices)
        if method in api.TENSOR_SAME or method in ("max", "min", "median"):
            others = args.tensors()
            if others:
                combined = self._tensor_arithmetic(tensor, *others)
                return combined.but(loop_item=tensor.loop_item, transfer=tensor.transfer)
            return tensor.but(requires_grad=self._result_requires_grad([tensor]) if tensor.requires_grad
                              else tensor.requires_grad)
        return UNKNOWN

    def _tensor_move(self, node: cst.Call, tensor: Value, method: str, args: _Args) -> Value:
        dtype: str | None = tensor.dtype
        decided = False
        if method == "to":
            for value in (*args.positional, args.keywords.get("dtype"), args.keywords.get("other")):
                if value is None:
                    continue
                if value.kind is Kind.REF and self._dtype_of_value(value):
                    dtype, decided = self._dtype_of_value(value), True
                elif value.kind is Kind.TENSOR:
                    dtype, decided = value.dtype, True
                elif value.kind is Kind.UNKNOWN and any(
                        v is value and not _names_a_device(n) for v, n in zip(args.positional, args.positional_nodes)):
                    dtype, decided = None, True  # ``.to(x)``: x may be a dtype, unless it is named as a device
            if "dtype" in args.keywords:
                decided = True
        if decided:
            self.facts.dtype_decided.update(tensor.float64_origins)
        on_accelerator = self._destination_on_accelerator(method, args, tensor.on_accelerator)
        moved = tensor.but(dtype=dtype, on_accelerator=on_accelerator,
                           float64_origins=frozenset() if decided else tensor.float64_origins)
        loop = self._current_loop()
        if (on_accelerator and loop is not None and tensor.loop_item == loop.id
                and tensor.on_accelerator is not True):
            moved = moved.but(transfer=node)
        return moved

    def _destination_on_accelerator(self, method: str, args: _Args, current: bool | None) -> bool | None:
        if method == "cuda":
            return True
        if method == "cpu":
            return False
        device = args.keywords.get("device")
        if device is not None:
            return device_on_accelerator(device)
        for value, node in zip(args.positional, args.positional_nodes):
            if value.kind is Kind.REF and self._dtype_of_value(value):
                continue  # ``.to(torch.float32)``: the device stays
            if value.kind is Kind.UNKNOWN and _names_a_dtype(node):
                continue  # ``.to(dtype)``
            return device_on_accelerator(value)
        return current

    # dtype arguments

    def _dtype_argument(self, args: _Args, position: int | None) -> str | None:
        """The canonical dtype given by ``dtype=`` (or at ``position``): None when not given; "?" when unknown."""
        value = args.keywords.get("dtype")
        if value is None and position is not None and len(args.positional) > position:
            value = args.positional[position]
        if value is None or value.kind is Kind.NONE:
            return None
        return self._dtype_of_value(value) or "?"

    def _dtype_of_value(self, value: Value) -> str | None:
        if value.kind is Kind.REF and value.qualname:
            module, _, name = value.qualname.rpartition(".")
            if module in ("numpy", "torch"):
                return DTYPE_NAMES.get(name)
            if module == "builtins":
                return BUILTIN_DTYPES.get(name)
            return None
        if value.kind is Kind.STRING and value.literal:
            # strings are NumPy's: "float" means float64 there, as the builtin does
            return BUILTIN_DTYPES.get(value.literal) or DTYPE_NAMES.get(value.literal)
        return None


_NOT_A_GRAD_MODE = object()
_RUNTIME = "np2torch_lint.runtime."


@dataclass(slots=True)
class _Args:
    positional: list[Value]
    keywords: dict[str, Value]
    positional_nodes: list[cst.BaseExpression]

    @property
    def first(self) -> Value | None:
        return self.positional[0] if self.positional else None

    def all_values(self) -> list[Value]:
        return [*self.positional, *(v for k, v in self.keywords.items() if not k.startswith("*"))]

    def tensors(self) -> list[Value]:
        found = []
        for value in self.all_values():
            if value.kind is Kind.TENSOR:
                found.append(value)
            elif value.kind is Kind.SEQUENCE:
                found.extend(v for v in (value.items or ((value.element,) if value.element else ()))
                             if v.kind is Kind.TENSOR)
        return found


# --- small helpers -----------------------------------------------------------------------------------------


def _either_all(flags: Iterable[bool | None]) -> bool | None:
    flags = list(flags)
    if any(flags):
        return True
    if flags and all(flag is False for flag in flags):
        return False
    return None


def _bool_literal(value: Value | None) -> bool | None:
    if value is not None and value.kind is Kind.NUMBER and value.dtype == "bool" and value.literal:
        return value.literal == "True"
    return None


def _bool_literal_node(node: cst.BaseExpression | None) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _int_literal(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(
            node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    return None


def _dotted_name(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        owner = _dotted_name(node.value)
        return None if owner is None else f"{owner}.{node.attr.value}"
    return None


def _mentions_copy(test: cst.BaseExpression) -> bool:
    """An ``if copy:``/``if self.copy`` test: code that copies on purpose in one branch."""
    node = test.expression if isinstance(test, cst.UnaryOperation) else test
    if isinstance(node, cst.Name):
        return "copy" in node.value.lower()
    if isinstance(node, cst.Attribute):
        return "copy" in node.attr.value.lower()
    return False


def _pattern_names(pattern: cst.CSTNode) -> Iterator[str]:
    if isinstance(pattern, (cst.MatchAs, cst.MatchStar)) and pattern.name is not None:
        yield pattern.name.value
    for name in _child_fields(type(pattern)):
        child = getattr(pattern, name)
        children = child if isinstance(child, (list, tuple)) else (child,)
        for item in children:
            if isinstance(item, cst.CSTNode) and not isinstance(item, cst.BaseExpression):
                yield from _pattern_names(item)
            elif isinstance(item, (cst.MatchAs, cst.MatchStar)):
                yield from _pattern_names(item)
    if isinstance(pattern, cst.MatchMapping) and pattern.rest is not None:
        yield pattern.rest.value


def _gives_array(args: _Args, size_position: int | None) -> bool:
    """Whether a NumPy random call gets a size, and so returns an array rather than one Python float."""
    if size_position is None:
        return True
    if size_position == -1:
        return bool(args.positional)
    return "size" in args.keywords or len(args.positional) > size_position


def _literal_data_dtype(node: cst.BaseExpression) -> str | None:
    """The dtype NumPy gives a literal list such as ``[[1.0, 2], [3, 4]]``: float64, int64 or bool."""
    kinds: set[str] = set()

    def collect(item: cst.BaseExpression) -> bool:
        if isinstance(item, (cst.List, cst.Tuple)):
            return all(collect(e.value) for e in item.elements if not isinstance(e, cst.StarredElement)) and not \
                any(isinstance(e, cst.StarredElement) for e in item.elements)
        if isinstance(item, cst.UnaryOperation) and isinstance(item.operator, (cst.Minus, cst.Plus)):
            item = item.expression
        if isinstance(item, cst.Float):
            kinds.add("float")
        elif isinstance(item, cst.Integer):
            kinds.add("int")
        elif isinstance(item, cst.Name) and item.value in ("True", "False"):
            kinds.add("bool")
        else:
            return False
        return True

    if not isinstance(node, (cst.List, cst.Tuple)) or not collect(node) or not kinds:
        return None
    if "float" in kinds:
        return "float64"
    return "int64" if "int" in kinds else "bool"


def _array_of_scalar(fill: Value | None) -> Value:
    if fill is None:
        return Value(Kind.NDARRAY)
    if fill.kind is Kind.NUMBER:
        if fill.dtype == "float":
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if fill.dtype in ("int", "bool"):
            return Value(Kind.NDARRAY, dtype="int64" if fill.dtype == "int" else "bool")
    if fill.is_numpy:
        return fill.but(kind=Kind.NDARRAY)
    return Value(Kind.NDARRAY)


def _numpy_promoted(operands: list[Value], kind: Kind) -> Value:
    """The NumPy 2 result of combining arrays and Python scalars (NEP 50: Python scalars are weak)."""
    arrays = [v for v in operands if v.is_numpy]
    if not arrays or any(not (v.is_numpy or v.kind is Kind.NUMBER) for v in operands):
        return Value(kind)
    dtype: str | None = arrays[0].dtype
    for value in arrays[1:]:
        dtype = promote_numpy(dtype, value.dtype)
    # float64 that no operand chose (f32 + int64 array) is promotion's default, not a decision
    by_default = any(v.float64_by_default for v in arrays) or not any(v.dtype == "float64" for v in arrays)
    if is_integral(dtype) and any(v.kind is Kind.NUMBER and v.dtype == "float" for v in operands):
        dtype, by_default = "float64", True
    return Value(kind, dtype=dtype, float64_by_default=by_default and dtype == "float64")


def _numpy_arithmetic(left: Value, right: Value, operator: cst.CSTNode) -> Value:
    kind = Kind.NDARRAY if Kind.NDARRAY in (left.kind, right.kind) else Kind.NUMPY_VALUE
    result = _numpy_promoted([left, right], kind)
    if isinstance(operator, cst.Divide) and (is_integral(result.dtype) or result.dtype == "bool"):
        result = result.but(dtype="float64", float64_by_default=True)  # true division of integers
    loop_item = left.loop_item if left.loop_item is not None else right.loop_item
    return result.but(loop_item=loop_item) if loop_item is not None else result


def _to_float_result(value: Value, *, reduction: bool) -> Value:
    kind = Kind.NUMPY_VALUE if reduction else Kind.NDARRAY
    if is_integral(value.dtype):
        return value.but(kind=kind, dtype="float64", float64_by_default=True, items=None)
    if is_float(value.dtype):
        return value.but(kind=kind, items=None)
    return Value(kind)


def _numpy_source_dtype(source: Value) -> str | None:
    if source.is_numpy:
        return source.dtype
    if source.kind is Kind.SEQUENCE and source.items:
        dtype: str | None = None
        for item in source.items:
            if item.is_numpy:
                dtype = item.dtype if dtype is None else promote_numpy(dtype, item.dtype)
            elif item.kind is not Kind.NUMBER:
                return None
        return dtype
    return None


def _float64_by_default(source: Value) -> bool:
    if source.is_numpy:
        return source.float64_by_default
    if source.kind is Kind.SEQUENCE and source.items:
        numpy_items = [v for v in source.items if v.is_numpy]
        return bool(numpy_items) and any(v.float64_by_default for v in numpy_items)
    return False


def device_on_accelerator(value: Value | None) -> bool | None:
    """Whether a ``device=``/``.to()`` argument may name an accelerator. Unknown devices may."""
    if value is None:
        return None
    if value.kind is Kind.DEVICE:
        return value.on_accelerator
    if value.kind is Kind.STRING:
        if value.literal is None:
            return True
        if value.literal.startswith("cpu"):
            return False
        if value.literal.startswith(api.ACCELERATOR_DEVICE_PREFIXES):
            return True
        return None  # "meta" and other devices: not the accelerator NPT002 speaks of
    if value.kind is Kind.NONE:
        return False
    if value.kind is Kind.NUMBER and value.dtype == "int":
        return True
    if value.kind is Kind.TENSOR:
        return value.on_accelerator
    if value.kind in (Kind.UNKNOWN, Kind.REF):
        return True  # a parameter, ``args.device``, an imported ``DEVICE``: it may name an accelerator
    return None


def _last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call):
        node = node.func
    name = _dotted_name(node)
    return "" if name is None else name.rsplit(".", 1)[-1].lower()


def _names_a_dtype(node: cst.BaseExpression) -> bool:
    """``x.to(dtype)``, ``x.to(self.dtype)``, ``x.to(get_default_dtype())``: taken for a dtype, not a device."""
    return "dtype" in _last_name(node)


def _names_a_device(node: cst.BaseExpression) -> bool:
    """``x.to(device)``, ``x.to(args.device)``, ``x.to(dev)``: taken for a device, not a dtype."""
    name = _last_name(node)
    return "device" in name or name in ("dev", "gpu", "cuda", "accelerator", "rank", "local_rank")


def analyze(module: cst.Module) -> Facts:
    """Run the analysis over a parsed module and return what the rules need."""
    return Analyzer().analyze(module)
