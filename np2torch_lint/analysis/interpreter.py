"""The analysis: one pass over a module that works out what each expression is and records facts for the rules.

It is a small abstract interpreter over LibCST nodes: statements run in order, names bind to ``Value``s in a
scope, the branches of ``if``/``try``/loops are joined, and imports resolve names to qualified names, so
``th.tensor`` is ``torch.tensor`` while a local ``def tensor`` is not. The handlers live in one module per
concern (statements, control flow, expressions, calls, NumPy, torch); ``Analyzer`` puts them together.

Why not a ``CSTVisitor`` with ``ScopeProvider``/``QualifiedNameProvider``: values must flow through
assignments in statement order, which a visitor does not model, and those providers cost 3x-5.5x a parse on
their own, where the whole lint is budgeted at 1.5x (STYLE.md, ``benchmarks/lint_speed.py``). This walk reads
node fields directly (about 0.15x a parse for the bare walk).

What is unknown stays unknown: a function parameter, the result of a call to a local function, an attribute of
an object we did not build. Rules only speak on known facts, so unknown values never produce findings.
"""

from __future__ import annotations

import itertools
from typing import Callable, Iterable, Protocol

import libcst as cst

from .annotations import AnnotationsMixin
from .array_layout import ArrayLayoutMixin
from .calls import CallsMixin
from .construction import Construction, ConstructionMixin
from .containers import ContainersMixin
from .control_flow import ControlFlowMixin, on_host_where_false
from .definitions import ClassInfo, DefinitionsMixin, FunctionInfo, KeptRead
from .expressions import ExpressionsMixin
from .exported import encode_names
from .facts import Facts
from .foreign import ForeignMixin
from .host_sync import HostSyncMixin
from .library import LibraryMixin
from .loops import Loop, LoopsMixin, Waiting
from .models import Models, builtin_models
from .scope import Scope
from .statements import StatementsMixin
from .summaries import SummariesMixin
from .syntax import child_fields, exits
from .torch_semantics import TorchMixin
from .values import UNKNOWN, Kind, Value, member

_ROLES: dict[type, str] = {}
#: expressions whose value does not come from a name of the scope (``false_device_tests``)
_READ_FROM_ELSEWHERE = (cst.Attribute, cst.Call)


class Analyzer(StatementsMixin, DefinitionsMixin, ControlFlowMixin, LoopsMixin, ExpressionsMixin, CallsMixin,
               SummariesMixin, ForeignMixin, ConstructionMixin, ContainersMixin, AnnotationsMixin, LibraryMixin,
               TorchMixin, ArrayLayoutMixin, HostSyncMixin):
    """Runs a module once and fills ``facts``. Use ``analyze(module)``."""

    def __init__(self, models: Models | None = None, project: ProjectLink | None = None) -> None:
        self.recorded_facts = self.facts = Facts()
        self.models = models if models is not None else builtin_models()
        #: the other modules of the project, when known (``np2torch_lint.project``): imports resolve to them
        self.project = project
        self.scope = Scope()
        self.grad_enabled: bool | None = True
        self.loops: list[Loop] = []
        #: for each loop body being read, innermost last: the scope it started from, and what each ``continue`` or
        #: ``break`` left rebound since (``loops._loop`` joins it where the body ends)
        self.loop_exits: list[tuple[Scope, list[dict[str, Value]]]] = []
        self.copy_tests = 0  # how many enclosing ``if`` tests mention ``copy``
        #: the statement just read cannot complete (an ``if`` whose every branch that can run returns or raises)
        self.rest_unreachable = False
        self.module_scope = self.scope
        self.silent = False  # in a summary (or a loop's silent first pass): facts go nowhere
        #: the facts a body read with a call's arguments records (silent, but they are that call's findings)
        self.call_facts: Facts | None = None
        #: loops whose first read's facts are held back around the code being read (loops._loop)
        self.held_loops = 0
        #: the grad mode a body read where it is defined starts in (unless a decorator sets one)
        self.body_grad_mode: bool | None = True
        self.class_being_defined: ClassInfo | None = None
        #: functions defined but not read yet: read when the code around them has run (definitions.py)
        self.pending_bodies: list[FunctionInfo] = []
        #: methods read while their class's attributes were collected, until their turn; the attributes looked up by
        #: the read being kept, if one is (definitions.py)
        self.kept_reads: dict[FunctionInfo, KeptRead] = {}
        self.attribute_reads: list[tuple[ClassInfo, str, Value | None]] | None = None
        #: what the function being read returns and yields, when one is (summaries.py)
        self.returns: list[Value] | None = None
        self.yields: list[Value] | None = None
        #: what a call of a function of the file gives, and what its body read with those arguments recorded
        self.summaries: dict[tuple, tuple[Value, Facts]] = {}
        #: the functions, lambdas and classes of the file, for ``release``
        self.definitions: list[FunctionInfo | ClassInfo] = []
        self.summaries_running: set[tuple] = set()
        #: another module's functions as this analysis reads their bodies (foreign.py), that module's globals,
        #: and the module whose code is being read (None: this file)
        self.readable_functions: dict[FunctionInfo, FunctionInfo | None] = {}
        #: whether a function body moves a module in place (``summaries._moves_modules``), per ``def``
        self.moving_functions: dict[cst.CSTNode, bool] = {}
        #: ``for key in batch`` loops whose body indexes ``batch[key]`` (loops.py), found once per loop
        self.loops_over_keys: dict[cst.For, bool] = {}
        self.foreign_scopes: dict[object, Scope] = {}
        self.current_module: object | None = None
        #: some value holds what it has of an accelerator under a device test (control_flow.device_test): only
        #: then do tests narrow by it
        self.device_tests_noted = False
        #: the device tests known false where the code being read runs (``if not self.cuda:``), with whether the
        #: test is the one for CUDA itself: what an attribute or a call gives there has nothing held under them
        self.false_device_tests: tuple[tuple[str, bool], ...] = ()
        self.stacking_call: cst.Call | None = None  # a torch.stack(...) whose argument is being evaluated
        self.dropped_call: cst.Call | None = None  # a call made as a statement, whose result nothing keeps
        #: a class of the file defines ``__torch_function__``: torch.stack/cat may take its objects, not only tensors
        self.torch_function_overridden = False
        #: per-item transfers of unknown items appended to a list: the loop, until the list is stacked (NPT005)
        self.transfers_awaiting_stack: dict[cst.Call, Waiting] = {}
        #: per-step transfers appended to a list the loop reads nowhere else: the loop, until the list is given to a
        #: function of the project after it (NPT005)
        self.transfers_awaiting_use: dict[cst.Call, Waiting] = {}
        self.function_node: cst.FunctionDef | cst.Lambda | None = None  # whose body is being read; None: module
        #: the function whose body is being read (None: the module), and whether with its parameters unknown
        self.function_info: FunctionInfo | None = None
        #: the method being read, while it is one: its object's own attributes so far (construction.py)
        self.construction: Construction | None = None
        self.assigned_in_method: dict[cst.FunctionDef, frozenset[str]] = {}
        #: what a method of the file may assign to its object when another method calls it (construction.py)
        self.stores_of_method: dict[cst.FunctionDef, frozenset[str] | None] = {}
        self.generic_read = False
        self._init_containers()
        #: non-blocking device-to-host copies seen: the function that made each, and the tensor it copies
        self._host_copies: dict[cst.Call, tuple[cst.CSTNode | None, Value]] = {}
        #: how many syncs were seen, and the functions of the file whose bodies synchronise (host_sync.py)
        self.syncs_seen = 0
        self.synchronizing_functions: set[FunctionInfo] = set()
        # functions whose body sets the grad mode for good (``torch.set_grad_enabled(False)`` in ``__init__``): the
        # mode their callers go on in
        self.grad_mode_left_by: dict[FunctionInfo, bool] = {}
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
            cst.Return: self._return,
            cst.Assert: self._assert,
            cst.Continue: self._loop_exit,
            cst.Break: self._loop_exit,
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
            cst.Dict: self._dict,
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
            cst.Yield: self._yield,
            cst.Await: lambda node: self.eval(node.expression),
        }

    # -- entry points

    def analyze(self, module: cst.Module) -> Facts:
        self._block(module.body)
        # ``torch.set_grad_enabled(False)`` at module level (a script's) holds when its functions are called
        self.body_grad_mode = self.grad_enabled if self.grad_enabled is not True else True
        self._read_pending_bodies(containers_last=True)
        return self.facts

    def release(self) -> None:
        """Break the reference cycles the analysis made (a scope holds a function whose definition holds the
        scope; the analyzer holds its own bound methods), once its facts and summary are taken: the file's tree
        is then freed as soon as it is dropped, instead of waiting for the garbage collector to walk all of it
        (about 0.1x of the parse). The facts stay as they are; what their values say of definitions goes."""
        for info in self.definitions:
            info.forget()
        self.definitions.clear()
        self.assigned_in_method.clear()
        self.stores_of_method.clear()
        self._statement_handlers.clear()
        self._expression_handlers.clear()

    def exported(self) -> dict[str, object]:
        """This module's summary for the other modules of the project (after ``analyze``), as plain data."""
        for value in self.module_scope.names.values():
            definition = value.definition
            functions = [definition] if isinstance(definition, FunctionInfo) else (
                [method for each in definition.lineage() for method in each.methods.values()]
                if isinstance(definition, ClassInfo) else [])
            for function in functions:
                if (function.node is not None and function.defaults and function.defaults_returns is None
                        and _defaults_may_tell_more(function)):
                    function.defaults_returns = self._returns_with_defaults(function)
        return encode_names(self.module_scope.names)

    def _block(self, statements: Iterable[cst.CSTNode]) -> None:
        handlers = self._statement_handlers
        remaining = iter(statements)
        for statement in remaining:
            handler = handlers.get(type(statement))
            if handler is None:
                self._walk_children(statement)
            else:
                handler(statement)
            # an ``if`` none of whose branches reaches its end, or a ``return``, ``raise``, ``break`` or ``continue``
            if self.rest_unreachable or exits(statement):
                self.rest_unreachable = False
                rest = list(remaining)
                if rest:
                    self.read_unreachable(lambda: self._block(rest))

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
        if self.false_device_tests and type(node) in _READ_FROM_ELSEWHERE:
            # names are narrowed where the test is (``_device_test_narrowing``); what an object holds or a call
            # returns is read here, under every test the branch is in
            return on_host_where_false(handler(node), self.false_device_tests)
        return handler(node)

    def _walk_children(self, node: cst.CSTNode) -> None:
        """Evaluate every expression and run every statement below a node we have no special handling for."""
        for name in child_fields(type(node)):
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

    def eval_quietly(self, node: cst.BaseExpression) -> Value:
        """The value of a name or attribute chain, without recording facts (it was evaluated already)."""
        if isinstance(node, cst.Name):
            value = self.scope.lookup(node.value) or UNKNOWN
        elif isinstance(node, cst.Attribute):
            owner = self.eval_quietly(node.value)
            if owner.kind is not Kind.REF:
                return UNKNOWN
            value = member(owner, node.attr.value)
        else:
            return UNKNOWN
        return self._from_project(value) if value.kind is Kind.REF and self.project is not None else value

    def _from_project(self, value: Value) -> Value:
        """An imported name that is another module of the project's: what its summary says (else the name).
        A models row, the user's or a built-in one, wins: it is what the project says of itself."""
        if value.qualname is None or self.models.call(value.qualname) is not None:
            return value
        return self.project.lookup(value.qualname) or value  # type: ignore[union-attr]


def analyze(module: cst.Module, models: Models | None = None, project: ProjectLink | None = None) -> Facts:
    """Run the analysis over a parsed module and return what the rules need."""
    analyzer = Analyzer(models, project)
    facts = analyzer.analyze(module)
    analyzer.release()
    return facts


class ProjectLink(Protocol):
    """What the analysis of one module needs from the project around it (``np2torch_lint.project``)."""

    def absolute(self, level: int, module: str | None) -> str | None:
        """The absolute name of ``from <level dots><module> import ...`` in this module, or None."""

    def lookup(self, qualname: str) -> Value | None:
        """A member of another module of the project (``pkg.utils.helper``) as its summary says, or None."""

    def names_of(self, module: str) -> dict[str, Value]:
        """``from module import *`` of a module of the project: its public names, as its summary says."""

    def foreign_module(self, path: object):  # -> project.ForeignModule | None
        """Another module of the project whose function bodies this one reads with its arguments: its tree,
        names and definitions (``foreign.py``), or None."""


def _defaults_may_tell_more(function: FunctionInfo) -> bool:
    """Whether a body's defaults may tell a caller more than what it returns for unknown arguments. Not when that
    is None (it returns None with its defaults too), nor when it is unknown, unless it is a defaulted parameter as
    it came (``return device``): on torch's sources, 1,238 of 1,241 bodies that return something unknown for
    unknown arguments return something unknown with their defaults too, and reading them again was half of what
    the defaults cost (0.03x of the parse)."""
    generic = function.generic_returns
    if generic.kind is Kind.NONE:
        return False
    if generic.kind is not Kind.UNKNOWN:
        return True
    return generic.parameter is not None and generic.parameter[0] is function and (
        generic.parameter[1] in function.defaults)
