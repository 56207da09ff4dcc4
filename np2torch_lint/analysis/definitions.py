"""Functions, lambdas and classes defined in the file: what a ``def`` or ``class`` statement binds, and when
their bodies are read.

A body is read (its findings recorded, its parameters unknown or as annotated) once the code around it has run:
at the end of the module for top-level functions and methods, at the end of the enclosing function for nested
ones. That is when Python would call them, so names bound further down the module are known. What a call gives
is worked out separately, at each call, by ``summaries.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from . import known_apis as api
from .arguments import STARRED, Args
from .control_flow import NOT_A_GRAD_MODE, with_tests_renamed
from .facts import Facts
from .scope import Scope
from .syntax import dotted_name
from .values import UNKNOWN, Kind, ParameterMove, Value, has_a_device_fact, join


#: an unannotated parameter with a number default: a Python number (int, float or bool; which is not known)
A_NUMBER = Value(Kind.NUMBER)
#: one with a float default (``init_temperature=0.1``): a float, or an int where a caller passes one
A_FLOAT = Value(Kind.NUMBER, dtype="float")


@dataclass(eq=False)
class FunctionInfo:
    """A ``def`` or ``lambda`` of this file, as its statement defined it."""

    #: None for a function of another module of the project, known by its summary only (``imported_returns``).
    node: cst.FunctionDef | cst.Lambda | None
    #: the scope it was defined in: its globals or closure, as they are when it is called.
    scope: Scope | None
    #: parameter name -> the value of its default (parameters with one), and what its annotation says (when it
    #: says something the analysis knows; without an annotation, a number default says a Python number).
    defaults: dict[str, Value] = field(default_factory=dict)
    annotations: dict[str, Value] = field(default_factory=dict)
    #: what the return annotation says (UNKNOWN without one).
    returns: Value = UNKNOWN
    #: the mode a decorator sets (``@torch.no_grad()``), or None: the caller's.
    grad_enabled: bool | None = None
    #: "function", "method", "staticmethod", "classmethod" or "property".
    role: str = "function"
    owner: ClassInfo | None = None
    #: wrapped by a decorator the analysis does not know: what a call gives is unknown.
    opaque: bool = False
    #: what the body returns read with its parameters unknown (as annotated): what other modules see of it.
    generic_returns: Value = UNKNOWN
    #: what it returns when every parameter with a default keeps it (other modules' summaries only: ``None``
    #: when not known), with the positional and defaulted parameter names that tell when that applies.
    defaults_returns: Value | None = None
    positional_names: tuple[str, ...] = ()
    defaulted_names: frozenset[str] = frozenset()
    #: another module's function that returns its parameter moved to a device (its summary's ``mv``), with its
    #: positional parameters' names.
    moves_argument: ParameterMove | None = None
    moves_positional: tuple[str, ...] = ()
    #: another module's function known by its summary: (that module, its name there: ``("load",)`` or, for a
    #: method, ``("Buffer", "sample")``), so that a call can read its body (``foreign.py``); None otherwise
    origin: tuple[object, tuple[str, ...]] | None = None
    #: the module whose body it is, when it is another module's read from its own tree (``foreign.py``); None: this
    #: file's
    module: object | None = None
    #: the grad modes of the calls of it read so far in this file (True, False, or None: not known): where every
    #: one is ``False`` (``with torch.no_grad(): evaluate(...)``), its own read has grad off too
    called_in_modes: set[bool | None] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.node.name.value if isinstance(self.node, cst.FunctionDef) else "<lambda>"

    def forget(self) -> None:
        """Drop what links it to the rest of the analysis (see ``Analyzer.release``)."""
        self.scope = self.owner = None
        self.defaults, self.annotations = {}, {}
        self.returns = self.generic_returns = UNKNOWN
        self.defaults_returns = None

    def returns_for_another_module(self) -> Value:
        """What a caller in another module is told this function returns."""
        found = self.generic_returns
        if found.kind is Kind.UNKNOWN or (found.kind is Kind.NONE and self.returns.kind is not Kind.UNKNOWN):
            return self.returns
        return found


@dataclass(frozen=True, eq=False)
class RecordType:
    """A named tuple type made by a call: ``collections.namedtuple("Transition", "state action reward")``. Its
    objects hold what the constructor is given, by field (``batch.state``)."""

    fields: tuple[str, ...]


def parameter_of(value: Value) -> FunctionInfo | None:
    """The function of the file whose parameter ``value`` is, as it came (``Value.parameter``), or None."""
    function = value.parameter[0] if value.parameter is not None else None
    return function if isinstance(function, FunctionInfo) else None


@dataclass(frozen=True, eq=False)
class BoundCall:
    """A function of the file with some of its arguments given already: ``functools.partial(evaluate, model)``, or a
    method taken from an object (``step = agent.step``). Calling it calls ``function`` with ``receiver`` (a
    method's object) and these arguments before the call's own."""

    function: FunctionInfo
    receiver: Value | None = None
    positional: tuple[Value, ...] = ()
    keywords: tuple[tuple[str, Value], ...] = ()

    def arguments(self, args: Args) -> Args:
        """The arguments ``function`` gets when this is called with ``args`` (positions are not the call's)."""
        return Args([*self.positional, *args.positional], {**dict(self.keywords), **args.keywords}, [])


@dataclass(eq=False)
class ClassInfo:
    """A ``class`` of this file: its methods, and what its methods assign to ``self``."""

    node: cst.ClassDef | None  # None for a class of another module of the project, known by its summary
    scope: Scope | None  # around the class statement
    is_nn_module: bool
    bases: list[ClassInfo]
    #: a library base class (``torch.nn.Linear``, ``gym.Wrapper``): where parameters not set in the file come from,
    #: and the rows of the methods not defined in the file.
    library_base: str | None
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    #: ``self.x = ...`` in any method, joined; and names bound in the class body.
    attributes: dict[str, Value] = field(default_factory=dict)
    class_names: dict[str, Value] = field(default_factory=dict)
    #: whether ``attributes`` were collected (by reading every method silently) since the class was defined.
    attributes_collected: bool = False
    #: attributes that hold only a parameter of ``__init__`` as a read with unknown parameters saw it
    #: (``self.model = model``), each with that parameter's name: what a construction of the file passes replaces
    #: it (``_record_attribute``)
    parameter_attributes: dict[str, str] = field(default_factory=dict)
    #: a class of the file derives from it; it derives from a class the analysis does not know (containers.py).
    subclassed: bool = False
    unknown_bases: bool = False
    #: a record's fields, in order (a ``typing.NamedTuple`` or a ``@dataclass``: annotated names of the class body),
    #: and whether its objects are tuples; None for other classes
    record_fields: tuple[str, ...] | None = None
    record_is_tuple: bool = False
    #: a class of another module as one of its objects is after its construction here (``Buffer(device="cpu")``),
    #: or a class seen through ``super()`` from a subclass: the class it stands for, whose attributes this one
    #: records (``specialized``, ``super_view``); ``assigned``: those the construction set (they replace what the
    #: summary joined over every object)
    specializes: ClassInfo | None = None
    assigned: set[str] | None = None
    #: a ``super()`` view: the object's own class, whose methods ``self.method()`` calls in the base's methods
    #: reach (the override, as Python dispatches)
    seen_from: ClassInfo | None = None
    #: another module's class: whether its summary says it holds no parameter (module_parameters.py); None for a
    #: class of this file, worked out from its body
    parameter_free: bool | None = None
    #: what its body names of the ways to add members by name (``setattr``, ``register_parameter``...;
    #: module_parameters.py); None: not looked yet
    registrations: frozenset[str] | None = None
    #: whether it may have members ``attributes`` does not name: added under a name the code builds
    #: (``setattr(self, f"layer_{i}", ...)``), or left out of its summary; None: not looked yet
    unnamed_members: bool | None = None
    #: another module's class: attributes its methods assign that its summary could not say anything of
    unknown_attributes: tuple[str, ...] = ()
    #: a flag a method keeps on the object (``self.cuda = cuda``): the device test of the name, as the attribute's
    #: (``flag:cuda`` -> ``flag:self.cuda``), so that what ``__init__`` moved under ``if cuda:`` is on the host
    #: where a method's ``if self.cuda:`` is false
    flag_attributes: dict[str, str] = field(default_factory=dict)

    def method(self, name: str) -> FunctionInfo | None:
        for info in self.lineage():
            found = info.methods.get(name)
            if found is not None:
                return found
        return None

    def attribute(self, name: str) -> Value | None:
        for info in self.lineage():
            found = info.attributes.get(name) or info.class_names.get(name)
            if found is not None:
                return found
        return None

    def forget(self) -> None:
        """Drop what links it to the rest of the analysis (see ``Analyzer.release``)."""
        self.scope = None
        self.bases, self.methods, self.attributes, self.class_names = [], {}, {}, {}

    def specialized(self) -> ClassInfo:
        """A copy of this class (another module's, known by its summary) for one object constructed here: what its
        ``__init__`` assigns with the construction's arguments is that object's own."""
        copy = ClassInfo(None, None, self.is_nn_module, list(self.bases), self.library_base, self.methods,
                         dict(self.attributes), self.class_names, attributes_collected=True,
                         record_fields=self.record_fields, record_is_tuple=self.record_is_tuple,
                         parameter_free=self.parameter_free, unnamed_members=self.unnamed_members,
                         unknown_attributes=self.unknown_attributes)
        copy.specializes, copy.assigned = self, set()
        return copy

    def super_view(self, actual: ClassInfo) -> ClassInfo:
        """This class, a base of ``actual``'s, as ``super()`` in ``actual``'s methods sees it: methods looked up
        here, attributes assigned to the object (``actual``'s)."""
        view = ClassInfo(None, None, self.is_nn_module, list(self.bases), self.library_base, self.methods,
                         actual.attributes, self.class_names, attributes_collected=True,
                         unnamed_members=actual.unnamed_members, unknown_attributes=actual.unknown_attributes)
        view.specializes, view.assigned = actual.specializes or actual, actual.assigned
        view.seen_from = actual.seen_from or actual
        if actual.node is not None:
            view.specializes = actual
        return view

    def lineage(self) -> list[ClassInfo]:
        """This class and its bases defined in the file, depth first (cycles cannot happen in valid code)."""
        seen: list[ClassInfo] = []
        stack = [self]
        while stack:
            info = stack.pop()
            if info not in seen:
                seen.append(info)
                stack.extend(reversed(info.bases))
        return seen

    def library_bases(self) -> str | None:
        return next((info.library_base for info in self.lineage() if info.library_base), None)

    def instance(self) -> Value:
        """What ``C(...)`` gives: a module (with trainable parameters, as most are) or an object."""
        if self.is_nn_module:
            return Value(Kind.NN_MODULE, qualname=self.library_bases(), has_params=True, on_accelerator=False,
                         definition=self)
        return Value(Kind.INSTANCE, qualname=self.library_bases(), definition=self)


# Decorators that leave what a call gives as it is.
_TRANSPARENT_DECORATORS = {
    "functools.lru_cache", "functools.cache", "functools.wraps", "abc.abstractmethod", "typing.final",
    "typing.override", "torch.jit.ignore", "torch.jit.unused", "torch.jit.export", "torch.no_grad",
    "torch.inference_mode", "torch.enable_grad", "torch.set_grad_enabled",
}
_ROLES = {"staticmethod": "staticmethod", "classmethod": "classmethod", "property": "property"}


def _annotated_fields(node: cst.ClassDef) -> tuple[str, ...]:
    """A record class's fields: the names its body annotates, in order (``state: torch.Tensor``)."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return tuple(small.target.value for line in body if isinstance(line, cst.SimpleStatementLine)
                 for small in line.body if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name))


def record_of(fields: tuple[str, ...], args: Args, defaults: dict[str, Value] | None = None) -> tuple[Value, ...]:
    """What each field of a record holds after ``Record(*args)``: positional arguments in order, then keywords
    (``*xs`` of known length spread), else the field's default, else unknown."""
    args = args.spread()
    starred = STARRED in args.keywords
    values = []
    for index, field_name in enumerate(fields):
        if index < len(args.positional):
            values.append(args.positional[index])
        elif field_name in args.keywords:
            values.append(args.keywords[field_name])
        elif starred:
            star = args.keywords[STARRED]
            values.append(star.element if star.kind is Kind.SEQUENCE and star.element is not None else UNKNOWN)
        else:
            values.append((defaults or {}).get(field_name, UNKNOWN))
    return tuple(values)


def parameter_names(info: FunctionInfo) -> list[str]:
    return parameter_names_of(info.node)


def parameter_names_of(node: cst.FunctionDef | cst.Lambda) -> list[str]:
    params = node.params
    return [param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params,
                                           params.star_arg, params.star_kwarg) if isinstance(param, cst.Param)]


@dataclass(eq=False)
class KeptRead:
    """A method's body read while its class's attributes were collected, as its own read would be: the facts it
    recorded (None when read silently), what it returned, and the attributes it looked up with what it found."""

    facts: Facts | None
    returned: Value
    attribute_reads: list[tuple[ClassInfo, str, Value | None]]
    silent: bool


class DefinitionsMixin:
    """``def``, ``lambda`` and ``class`` statements, and reading their bodies."""

    def _function_def(self, node: cst.FunctionDef) -> None:
        grad_enabled: bool | None = None
        role = "function"
        opaque = False
        for decorator in node.decorators:
            expression = decorator.decorator
            self.eval(expression)
            mode = self._grad_mode_of(expression, as_decorator=True)
            if mode is not NOT_A_GRAD_MODE:
                grad_enabled = mode  # type: ignore[assignment]
                continue
            target = expression.func if isinstance(expression, cst.Call) else expression
            name = dotted_name(target) or ""
            if name in _ROLES:
                role = _ROLES[name]
            elif name.endswith((".setter", ".deleter")):
                role = "setter"
            else:
                decorator_value = self.eval_quietly(target)
                if decorator_value.kind is not Kind.REF or decorator_value.qualname not in _TRANSPARENT_DECORATORS:
                    opaque = True
        defaults, annotations = self._parameter_values(node.params)
        returns = UNKNOWN
        if node.returns is not None:
            returns = self._value_of_annotation(node.returns.annotation)
        owner = self.class_being_defined
        if owner is not None and role == "function":
            role = "method"
        # a ``def`` inside another module's body being read (``current_module``) is that module's code
        info = FunctionInfo(node, owner.scope if owner is not None else self.scope, defaults, annotations, returns,
                            grad_enabled, role, owner, opaque, module=self.current_module)
        self.definitions.append(info)
        if owner is not None:
            if role != "setter":
                owner.methods[node.name.value] = info
            if node.name.value == "__torch_function__":
                self.torch_function_overridden = True  # torch.stack may give objects of this class (torchrl's specs)
            self.scope.names[node.name.value] = Value(Kind.FUNCTION, definition=info)
        else:
            self.scope.names[node.name.value] = Value(Kind.FUNCTION, definition=info)
        if not self.silent:
            self.pending_bodies.append(info)
        if self.function_info is not None:
            self.defines_nested.add(self.function_info)

    def _parameter_values(self, params: cst.Parameters) -> tuple[dict[str, Value], dict[str, Value]]:
        """Defaults, evaluated where the ``def`` stands, and what annotations say; see ``FunctionInfo``."""
        defaults: dict[str, Value] = {}
        annotations: dict[str, Value] = {}
        for param in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg,
                      params.star_kwarg):
            if not isinstance(param, cst.Param):
                continue
            if param.default is not None:
                defaults[param.name.value] = self.eval(param.default)
            if param.annotation is not None:
                annotated = self._value_of_annotation(param.annotation.annotation)
                if annotated.kind is not Kind.UNKNOWN and param.star == "":
                    annotations[param.name.value] = annotated
            elif param.default is not None and param.star == "" and defaults[param.name.value].kind is Kind.NUMBER:
                # ``def f(x, scale=1)``: a Python number, as pyright infers from a default; which kind a caller
                # passes (``scale=0.5``) is not known. A float default says ``float``, which admits an int (as in
                # typing): NumPy makes float64 of both (``np.log(init_temperature=0.1)``)
                default = defaults[param.name.value]
                annotations[param.name.value] = A_FLOAT if default.dtype == "float" else A_NUMBER
        return defaults, annotations

    def _lambda(self, node: cst.Lambda) -> Value:
        defaults, annotations = self._parameter_values(node.params)
        info = FunctionInfo(node, self.scope, defaults, annotations, module=self.current_module)
        self.definitions.append(info)
        if self.function_info is not None:
            self.defines_nested.add(self.function_info)
        if not self.silent:  # a lambda's body is read where it stands, with its parameters unknown
            self._read_body(info)
        return Value(Kind.FUNCTION, definition=info)

    def _class_def(self, node: cst.ClassDef) -> None:
        dataclass_like = False
        for decorator in node.decorators:
            self.eval(decorator.decorator)
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            dataclass_like = dataclass_like or self.eval_quietly(target).qualname in api.RECORD_DECORATORS
        named_tuple = False
        is_nn_module = False
        bases: list[ClassInfo] = []
        library_base = None
        unknown_bases = False
        for base in node.bases:
            base_value = self.eval(base.value)
            if base_value.kind is Kind.REF and base_value.qualname in api.RECORD_BASES:
                named_tuple = True
                continue
            if base_value.kind is Kind.REF and base_value.qualname:
                model = self.models.call(base_value.qualname)
                if base_value.qualname in api.NN_MODULE_BASES or (model is not None and model.kind == "module"):
                    is_nn_module = True
                    if base_value.qualname not in api.NN_MODULE_BASES:
                        library_base = base_value.qualname
                elif model is not None and model.param("wraps") is not None:
                    library_base = base_value.qualname  # ``gym.Wrapper``: its rows hold the methods not defined here
                    unknown_bases = True  # the library's methods may touch what the class keeps
                else:
                    unknown_bases = True
            elif base_value.kind is Kind.CLASS and isinstance(base_value.definition, ClassInfo):
                bases.append(base_value.definition)
                base_value.definition.subclassed = True
                is_nn_module = is_nn_module or base_value.definition.is_nn_module
            elif not (isinstance(base.value, cst.Name) and base.value.value == "object"):
                unknown_bases = True
        for keyword in node.keywords:
            self.eval(keyword.value)
        info = ClassInfo(node, self.scope, is_nn_module, bases, library_base, unknown_bases=unknown_bases)
        if named_tuple or dataclass_like:
            info.record_fields, info.record_is_tuple = _annotated_fields(node), named_tuple
        self.definitions.append(info)
        saved_scope, saved_class = self.scope, self.class_being_defined
        self.scope = Scope(saved_scope)
        self.class_being_defined = info
        try:
            self._suite(node.body)
        finally:
            info.class_names.update(
                (name, value) for name, value in self.scope.names.items() if value.kind is not Kind.FUNCTION)
            self.scope, self.class_being_defined = saved_scope, saved_class
        self.scope.names[node.name.value] = Value(Kind.CLASS, definition=info)

    # -- reading bodies

    def _read_pending_bodies(self, start: int = 0, containers_last: bool = False) -> None:
        """Read the bodies of the functions defined since ``start``, in the order they were defined.

        What one method assigns to ``self`` must be known in all of them (``__init__`` sets ``self.x``, ``forward``
        reads it), so a class's methods are first read to collect its attributes. That read is kept
        (``KeptRead``): at the method's turn it stands for the method's own read when every attribute it looked up
        still holds what it saw, and the method is read again otherwise. With ``containers_last`` (the module's),
        the bodies that read a container kept on ``self`` come last, once every call that fills one was read
        (containers.py).
        """
        pending = self.pending_bodies[start:]
        del self.pending_bodies[start:]
        for owner in dict.fromkeys(info.owner for info in pending if info.owner is not None):
            self._collect_attributes(owner, keep=True)  # again, now that the code around the class has run
        later = [info for info in pending if info in self.container_readers] if containers_last else []
        deferred = set(later)
        for info in pending:
            if info not in deferred:
                self._read_body(info)
        for info in later:
            self.kept_reads.pop(info, None)  # what it read of a container changes when the containers are sealed
        if containers_last:
            self._seal_containers(later)
        for info in later:
            self._read_body(info)
        for info in pending:
            self.kept_reads.pop(info, None)  # one whose turn did not come (a body the analysis left)

    def _collect_attributes(self, info: ClassInfo, keep: bool = False) -> None:
        """What the methods of a class assign to ``self``: every method read from a clean slate, silently, or with
        ``keep`` as its own read would (its facts held back until its turn, ``_read_body``)."""
        info.attributes_collected = True
        if info.node is None:
            return  # a class of another module: its summary holds its attributes
        info.attributes.clear()
        info.parameter_attributes.clear()
        for method in info.methods.values():
            if keep and method.owner is info:
                self._keep_read(method)
            else:
                self._read_body(method, silently=True)

    def _keep_read(self, info: FunctionInfo) -> None:
        outer_reads, self.attribute_reads = self.attribute_reads, []
        held = None
        if not self.silent:  # dtype decisions are not held back: a summary read now is not read again
            held = self._fresh_facts()
        saved_facts, self.facts = self.facts, held if held is not None else self.facts
        try:
            returned = self._read_body(info, keep=True)
        finally:
            self.facts = saved_facts
            reads, self.attribute_reads = self.attribute_reads, outer_reads
        if outer_reads is not None:
            outer_reads.extend(reads)  # a class defined in a method being kept: what it read, that method read
        self.kept_reads[info] = KeptRead(held, returned, reads, self.silent)

    def _class_attributes_known(self, info: ClassInfo) -> None:
        """Before an object of the class is used: its attributes collected once (``C()`` runs ``__init__``)."""
        for each in info.lineage():
            if not each.attributes_collected:
                self._collect_attributes(each)

    def _attribute_of(self, info: ClassInfo, name: str) -> Value | None:
        """``info.attribute(name)``, noted for the read being kept, if one is (``KeptRead``)."""
        value = info.attribute(name)
        if self.attribute_reads is not None:
            self.attribute_reads.append((info, name, value))
        return value

    def _read_body(self, info: FunctionInfo, silently: bool = False, keep: bool = False) -> Value:
        """Read a body where it is defined, with its parameters as annotated (else unknown), recording facts;
        ``keep``: for ``_keep_read``, without setting what it returns."""
        if not silently and not keep:
            kept = self.kept_reads.pop(info, None)
            if kept is not None and self._still_holds(kept):
                if kept.facts is not None:
                    self.facts.absorb(kept.facts)
                info.generic_returns = kept.returned
                return kept.returned
        scope = Scope(info.scope, {name: info.annotations.get(name, UNKNOWN) for name in parameter_names(info)})
        receiver = self._self_parameter(info)
        if receiver is not None:
            scope.names[receiver[0]] = receiver[1]
        # callers usually have grad on, unless the module turned it off for good or every call of it read so far
        # has it off (a call from another module of the project with grad on reads the body with that call)
        grad_enabled = self.body_grad_mode if info.grad_enabled is None else info.grad_enabled
        if info.grad_enabled is None and info.called_in_modes == {False}:
            grad_enabled = False
        returned = self._run_body(info, scope, grad_enabled, silently=silently or self.silent)
        if not silently and not keep:
            info.generic_returns = returned
        return returned

    def _still_holds(self, kept: KeptRead) -> bool:
        """Whether a kept read is what reading the body now would give: read in the same mode, every attribute
        it looked up unchanged, and no non-blocking copy whose syncs it may have missed (host_sync.py)."""
        return (kept.silent == self.silent and not self._host_copies
                and all(info.attribute(name) == value for info, name, value in kept.attribute_reads))

    def _returns_with_defaults(self, info: FunctionInfo) -> Value:
        """What a body returns when every parameter with a default keeps it (the others as annotated)."""
        scope = Scope(info.scope, {name: info.defaults.get(name, info.annotations.get(name, UNKNOWN))
                                   for name in parameter_names(info)})
        receiver = self._self_parameter(info)
        if receiver is not None:
            scope.names[receiver[0]] = receiver[1]
        returned = self._run_body(info, scope, True if info.grad_enabled is None else info.grad_enabled,
                                  silently=True)
        if returned.kind is Kind.UNKNOWN or (returned.kind is Kind.NONE and info.returns.kind is not Kind.UNKNOWN):
            return info.returns
        return returned

    def _self_parameter(self, info: FunctionInfo) -> tuple[str, Value] | None:
        """``self`` (an instance) or ``cls`` (the class) for a method, by the name its first parameter has."""
        if info.owner is None or info.role == "staticmethod" or not isinstance(info.node, cst.FunctionDef):
            return None
        params = info.node.params.posonly_params or info.node.params.params
        if not params:
            return None
        if info.role == "classmethod":
            return params[0].name.value, Value(Kind.CLASS, definition=info.owner)
        instance = info.owner.instance()
        if instance.kind is Kind.NN_MODULE:
            instance = instance.but(on_accelerator=None)  # ``self`` may have been moved by its owner
        return params[0].name.value, instance

    def _replace_attribute(self, owner: Value, attribute: str, value: Value) -> None:
        """``obj.x`` holds ``value`` now, whatever was assigned to it (a call moved the module it held): in the class
        that holds the attribute, unless that is another module's class as its summary says, shared by every file."""
        info = owner.definition
        if not isinstance(info, ClassInfo):
            return
        holder = next((c for c in info.lineage() if attribute in c.attributes), None)
        if holder is not None and (holder.node is not None or holder.specializes is not None):
            holder.attributes[attribute] = value

    def _note_flag_attribute(self, owner: Value, name_test: str, attribute_test: str) -> None:
        """``self.cuda = cuda``: ``ClassInfo.flag_attributes``, applied to what the object holds already."""
        info = owner.definition
        if not isinstance(info, ClassInfo) or owner.kind is Kind.CLASS or info.node is None:
            return
        if info.flag_attributes.get(name_test) == attribute_test:
            return
        info.flag_attributes[name_test] = attribute_test
        for attribute, value in info.attributes.items():
            info.attributes[attribute] = with_tests_renamed(value, {name_test: attribute_test})

    def _record_attribute(self, owner: Value, attribute: str, value: Value) -> bool:
        """``self.x = value`` (or ``obj.x = value``) for an object of a class of this file."""
        info = owner.definition
        if not isinstance(info, ClassInfo):
            return False
        if info.specializes is not None and info.specializes.node is not None:
            info = info.specializes  # ``super().__init__(...)`` in a class of this file: its object's attributes
        elif info.node is None and info.specializes is None:
            # a class of another module, as its summary says: shared by every file that imports it, so what one
            # file assigns would reach the files analysed after it (and depend on the order); not followed
            return True
        # ``self.model = model`` in ``__init__`` read with the parameter unknown stands for what the constructions
        # pass: those of the file replace it, and it adds nothing to what they gave (a class built nowhere here
        # keeps it unknown)
        function = parameter_of(value)
        stands_for_callers = self.generic_read and value.kind is Kind.UNKNOWN and value.choices is None and (
            function is not None and function.name == "__init__")
        parameter = value.parameter[1] if stands_for_callers and value.parameter is not None else None
        if value.parameter is not None or value.moves_parameter is not None:
            value = value.but(parameter=None, moves_parameter=None)  # another call's parameter, when read back
        if info.flag_attributes:
            value = with_tests_renamed(value, info.flag_attributes)
        if self.false_device_tests and value.device_test is None and has_a_device_fact(value):
            # ``if self.cuda: self.matrix = matrix.cuda()``: the object holds it there only where the test holds
            false_here = self.false_device_tests[-1][0]
            value = value.but(device_test=false_here[4:] if false_here.startswith("not:") else f"not:{false_here}")
            self.device_tests_noted = True
        previous = info.attributes.get(attribute)
        if info.assigned is not None and attribute not in info.assigned:
            info.assigned.add(attribute)  # the object's own construction: it replaces what every object may hold
            previous = None
        if stands_for_callers:
            if previous is None:
                info.parameter_attributes[attribute] = parameter
            if previous is None or attribute in info.parameter_attributes:
                info.attributes[attribute] = value
            return True
        if attribute in info.parameter_attributes:
            del info.parameter_attributes[attribute]
            previous = None
        info.attributes[attribute] = value if previous is None else join(previous, value)
        if owner.kind is not Kind.CLASS:
            self._note_container_assigned(info, attribute, value)
        return True
