"""What a call to a function, method, lambda or class of this file gives: its summary.

A summary is worked out by reading the callee's body silently with the arguments of the call (so a helper that
returns ``x.astype(float)`` gives float64 of whatever it is given, and ``model(x)`` runs ``forward`` with ``x``)
and joining what its ``return`` statements give: where return paths disagree, only what they share is kept, and a
generator gives what it yields. Summaries are remembered per callee and arguments; recursion, calls nested deeper
than ``MAX_CALL_DEPTH`` and files that would need more than ``MAX_SUMMARIES`` give what the return annotation says,
or unknown. A decorator the analysis does not know makes a function's result unknown too.
"""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import DOUBLE_STARRED, STARRED, Args
from .construction import construction_of
from .definitions import BoundCall, ClassInfo, FunctionInfo, parameter_names, parameter_names_of, record_of
from .facts import CallSite, Facts
from .module_parameters import holds_no_parameters
from .scope import Scope
from .syntax import ends_abruptly, moves_a_parameter
from .torch_semantics import device_on_accelerator
from .values import NONE, UNKNOWN, Kind, ParameterMove, Value, held_by_module, join_all, sequence

MAX_CALL_DEPTH = 4
MAX_SUMMARIES = 2000


class SummariesMixin:
    """Calls to what the file defines, and reading a body for what it returns."""

    def _run_body(self, info: FunctionInfo, scope: Scope, grad_enabled: bool | None, *, silently: bool,
                  generic: bool = True, facts: Facts | None = None) -> Value:
        """Run a function's body in ``scope`` and return what it gives (facts recorded unless ``silently``, or into
        ``facts`` when given); ``generic``: its parameters are unknown (or as annotated or defaulted), not a call's
        arguments."""
        saved = (self.scope, self.grad_enabled, self.loops, self.copy_tests, self.facts, self.silent, self.returns,
                 self.yields, self.function_node, self.function_info, self.generic_read, self.current_module,
                 self.construction, self.call_facts, self.false_device_tests)
        self.scope, self.grad_enabled, self.loops, self.copy_tests = scope, grad_enabled, [], 0
        self.false_device_tests = ()  # the caller's tests name the caller's values
        self.current_module = info.module
        self.function_node, syncs_before = info.node, self.syncs_seen
        self.function_info, self.generic_read = info, generic
        self.construction = construction_of(info, self.assigned_in_method)
        self._begin_own_stores()
        if facts is not None:
            self.facts, self.silent = facts, True
            self.call_facts = facts
        elif silently and not self.silent:
            self.facts, self.silent = self._fresh_facts(), True
        self.returns, self.yields = [], []
        _mark_parameters(info, scope)
        if not self.device_tests_noted and any(value.device_test is not None for value in scope.names.values()):
            self.device_tests_noted = True  # a caller's argument holds something only under a device test
        pending_start = len(self.pending_bodies)
        try:
            if isinstance(info.node, cst.Lambda):
                self.returns.append(self.eval(info.node.body))
            else:
                self._suite(info.node.body)
                if not ends_abruptly(info.node.body):
                    self.returns.append(NONE)  # falling off the end returns None
                if self.grad_enabled is not None and self.grad_enabled != grad_enabled:
                    self.grad_mode_left_by[info] = self.grad_enabled  # set for good, not by a ``with`` block
                self._read_pending_bodies(pending_start)  # functions defined inside, now that it has run
            if self.yields:
                return Value(Kind.SEQUENCE, element=join_all(self.yields))
            return join_all(self.returns) or NONE
        finally:
            (self.scope, self.grad_enabled, self.loops, self.copy_tests, self.facts, self.silent, self.returns,
             self.yields, self.function_node, self.function_info, self.generic_read, self.current_module,
             self.construction, self.call_facts, self.false_device_tests) = saved
            if self.syncs_seen > syncs_before:
                self.synchronizing_functions.add(info)

    def _fresh_facts(self) -> Facts:
        """Facts of their own, sharing only the dtype decisions (``.float()`` in a helper decides for its caller):
        dropped after a silent read, held back by a kept read or a loop's first read until they stand."""
        return Facts(dtype_decided=self.recorded_facts.dtype_decided,
                     dtype_maybe_decided=self.recorded_facts.dtype_maybe_decided)

    def _return(self, node: cst.Return) -> None:
        value = self.eval(node.value) if node.value is not None else NONE
        if self.returns is not None:
            self.returns.append(value)

    def _yield(self, node: cst.Yield) -> Value:
        value = node.value
        if isinstance(value, cst.From):
            given = self._element_of(self.eval(value.item))
        else:
            given = self.eval(value) if value is not None else NONE
        if self.yields is not None:
            if given.kind is Kind.SEQUENCE and given.items is not None and not given.open_ended and (
                    given.qualname is None):
                given = given.but(qualname=api.YIELDED_FIELDS)  # ``yield x, y``: one batch's fields
            self.yields.append(given)
        return UNKNOWN  # what ``send()`` passes in

    # -- calls

    def _call_function(self, info: FunctionInfo, args: Args, receiver: Value | None = None,
                       node: cst.Call | None = None, called: str | None = None) -> Value:
        """What calling ``info`` gives; what its body does with these arguments counts as done at ``node`` (the call
        of ``called``: the function's name unless said otherwise)."""
        if node is not None:
            self._note_used_after_the_loop(args.all_values())
        if info.node is None:
            info = self._readable(info, args, receiver) or info  # another module's, read with these arguments
        waiting = len(self.transfers_awaiting_stack), len(self.transfers_awaiting_use)
        result, found = self._function_result(info, args, receiver)
        if found is not None and node is not None:
            site = CallSite(node, called or info.name, self.current_module)
            self._absorb_read(found, info.module, site)
            if info.module != self.current_module:
                self._name_waiting_transfers(site, *waiting)
        if info.opaque or info in self.synchronizing_functions:
            self._synchronize()  # it waits for the device, or may: the caller's copies have landed (host_sync.py)
        left = self.grad_mode_left_by.get(info)
        if left is not None:
            self.grad_enabled = left  # ``torch.set_grad_enabled(False)`` in the body holds after the call
        if node is not None and info.node is not None:
            self._forget_modules_it_may_move(node, info)
        move = result.moves_parameter if info.node is not None else info.moves_argument
        if result.parameter is not None or result.moves_parameter is not None:
            result = result.but(parameter=None, moves_parameter=None)  # the callee's parameters, not the caller's
        if move is not None and move.function is info and node is not None:
            result = self._helper_transfer(node, info, move, args, receiver, result)
        return result

    def _forget_modules_it_may_move(self, node: cst.Call, info: FunctionInfo) -> None:
        """``to_device(cpu, self.policy)``: a function whose body moves something (``[x.to(device) for x in args]``)
        may move a module it is given in place, which the analysis does not follow into the caller; so from here the
        device of each module this call passes, by name or as ``obj.attribute``, is not known."""
        passed = [(arg.value, value) for arg in node.args if isinstance(arg.value, (cst.Name, cst.Attribute))
                  for value in (self._passed_value(arg.value),)
                  if value is not None and value.kind is Kind.NN_MODULE and value.on_accelerator is not None]
        if not passed or not self._moves_modules(info):
            return
        for target, value in passed:
            forgotten = value.but(on_accelerator=None, device_test=None)
            if isinstance(target, cst.Name):
                self.scope.names[target.value] = forgotten
            else:
                self._replace_attribute(self.eval_quietly(target.value), target.attr.value, forgotten)

    def _passed_value(self, node: cst.Name | cst.Attribute) -> Value | None:
        """What a name, or an attribute of a name's object (``self.policy``), holds, recording nothing."""
        if isinstance(node, cst.Name):
            return self.scope.lookup(node.value)
        owner = self.eval_quietly(node.value) if isinstance(node.value, cst.Name) else None
        if owner is None or not isinstance(owner.definition, ClassInfo):
            return None
        return self._attribute_of(owner.definition, node.attr.value)

    def _moves_modules(self, info: FunctionInfo) -> bool:
        """Whether the body of ``info`` moves a parameter in place, or each item of one (``.to``, ``.cuda``, ...)."""
        found = self.moving_functions.get(info.node)
        if found is None:
            found = self.moving_functions[info.node] = isinstance(info.node, cst.FunctionDef) and moves_a_parameter(
                info.node, parameter_names(info), self.models.module_moves)
        return found

    def _helper_transfer(self, node: cst.Call, info: FunctionInfo, move: ParameterMove, args: Args,
                         receiver: Value | None, result: Value) -> Value:
        """``frame_to_tensor(frame, device)`` in a loop over frames, where the function moves its parameter to a
        device: one transfer per item, made by this call, as an inline ``.to(device)`` would be (NPT005)."""
        loop = self._current_loop()
        if loop is None:
            return result
        item = _argument(info, args, receiver, move.item)
        if item is None or item.loop_item != loop.id or (item.kind is Kind.TENSOR and item.on_accelerator):
            return result
        needs_stack = move.needs_stack
        if move.device is not None:
            device = _argument(info, args, receiver, move.device)
            if device is not None and device.loop_item == loop.id:
                return result  # each item to its own device
            if info.node is None:  # another module's function: where the caller's device is decides
                on_accelerator = None if device is None else device_on_accelerator(device)
                if device is None or on_accelerator is False or (
                        on_accelerator is None and device.kind is not Kind.DEVICE):
                    return result
                needs_stack = move.item_kind_unknown or on_accelerator is None
        if needs_stack and move.item_kind_unknown and self.torch_function_overridden:
            return result  # ``torch.stack`` may take objects of a class of the file
        return result.but(loop_item=loop.id, transfer=node, transfer_needs_stack=needs_stack)

    def _function_result(self, info: FunctionInfo, args: Args, receiver: Value | None) -> tuple[Value, Facts | None]:
        """What a call gives, and what reading the body with its arguments recorded (None: it was not read)."""
        if info.opaque or info.role == "setter":
            self.escaped_methods.add(info)  # what it does with its arguments is not read (containers.py)
            return info.returns, None
        if info.node is None:  # a function of another module of the project: its summary, in this grad mode
            # what it does with a float64 tensor is not summarised: it may decide
            self.facts.dtypes_may_be_decided(args.tensors())
            result = info.generic_returns
            if info.defaults_returns is not None and not _passes_a_defaulted_parameter(info, args, receiver):
                result = info.defaults_returns
            if self.grad_enabled is False and result.kind is Kind.TENSOR and result.requires_grad:
                result = result.but(requires_grad=False)
            return result, None
        bound = self._bound_arguments(info, args, receiver)
        if info.module is None:
            info.called_in_modes.add(self.grad_enabled)
        grad_enabled = self.grad_enabled if info.grad_enabled is None else info.grad_enabled
        key = (info, grad_enabled, tuple(bound.items()))
        cached = self.summaries.get(key)
        if cached is not None:
            return cached
        if key in self.summaries_running or len(self.summaries_running) >= MAX_CALL_DEPTH or (
                len(self.summaries) >= MAX_SUMMARIES):
            self.escaped_methods.add(info)
            return info.returns, None  # recursion, or too deep or too many: what the annotation says, or unknown
        self.summaries_running.add(key)
        found = self._fresh_facts()
        try:
            result = self._run_body(info, Scope(info.scope, bound), grad_enabled, silently=True, generic=False,
                                    facts=found)
        finally:
            self.summaries_running.discard(key)
        if result.kind is Kind.UNKNOWN and result.choices is None:
            result = _unknown_as(result, info.returns)  # a stub (``...``) or a body the analysis cannot follow
        elif result.kind is Kind.NONE and info.returns.kind is not Kind.UNKNOWN:
            result = info.returns  # a stub: trust the annotation
        self.summaries[key] = result, found
        return result, found

    def _bound_arguments(self, info: FunctionInfo, args: Args, receiver: Value | None) -> dict[str, Value]:
        """Parameter name -> the argument's value (as the callee sees it), its default or its annotation."""
        args = args.spread()
        bound = {name: info.defaults.get(name, UNKNOWN) for name in parameter_names(info)}
        node = info.node
        params = node.params
        positional = [*params.posonly_params, *params.params]
        given = list(args.positional)
        if receiver is not None and info.role in ("method", "classmethod", "property") and positional:
            bound[positional[0].name.value] = receiver
            positional = positional[1:]
        elif info.role == "method" and receiver is None and positional:
            positional = positional[1:]  # called through the class without an instance: unknown ``self``
        starred = any(key.startswith("*") for key in args.keywords)
        for param, value in zip(positional, given):
            bound[param.name.value] = _as_argument(value, info.annotations.get(param.name.value))
        if isinstance(params.star_arg, cst.Param) and (len(given) > len(positional) or STARRED not in args.keywords):
            extra_positional = sequence(tuple(given[len(positional):]))
            bound[params.star_arg.name.value] = extra_positional.but(open_ended=STARRED in args.keywords)
        keyword_names = {param.name.value for param in (*positional, *params.kwonly_params)}
        for name, value in args.keywords.items():
            if name in keyword_names:
                bound[name] = _as_argument(value, info.annotations.get(name))
        if isinstance(params.star_kwarg, cst.Param) and DOUBLE_STARRED not in args.keywords:
            # ``**kwargs``: the keywords no parameter takes, by name (``super().__init__(*args, **kwargs)`` hands
            # them on)
            extra = {name: value for name, value in args.keywords.items()
                     if name not in keyword_names and not name.startswith("*")}
            bound[params.star_kwarg.name.value] = sequence(tuple(extra.values()), join_all(list(extra.values())),
                                                           tuple(extra), Kind.MAPPING)
        if starred:  # ``f(*xs)``/``f(**kw)``: which parameter gets what is unknown
            for param in positional[len(given):]:
                if param.name.value not in args.keywords:
                    bound[param.name.value] = UNKNOWN
        return bound

    def _call_class(self, info: ClassInfo, args: Args, node: cst.Call | None = None) -> Value:
        self._class_attributes_known(info)
        instance = _instance(info)
        if info.record_fields is not None:  # a named tuple or a dataclass: its fields hold what it is given
            values = record_of(info.record_fields, args, _class_defaults(info))
            if info.record_is_tuple:
                return sequence(values, join_all(list(values)), info.record_fields)
            return instance.but(items=values, keys=info.record_fields)
        init = info.method("__init__")
        name = info.node.name.value if info.node is not None else (
            init.origin[1][0] if init is not None and init.origin is not None else None)
        if info.node is None and name is not None and node is not None and (args.positional or args.keywords):
            info = info.specialized()  # another module's class: this object is what its construction makes it
            instance = _instance(info)
        if init is not None and name is not None and node is not None and (args.positional or args.keywords):
            # a network of this file is judged again for this object (``_kept_arguments``); other objects need not
            # have their arguments bound for it
            judged_again = bool(instance.has_params) and info.node is not None
            kept_arguments = self._kept_arguments(info, init, args, instance) if judged_again else {}
            self._call_function(init, args, instance, node, name)  # what ``__init__`` does with these arguments
            if judged_again and holds_no_parameters(info, kept_arguments):
                instance = instance.but(has_params=False)
        if instance.kind is Kind.INSTANCE and instance.qualname is not None:
            wrapped = self._wrapped_at_construction(info, instance, args)
            if wrapped is not None:
                instance = instance.but(wrapped=wrapped)
        return instance

    def _kept_arguments(self, info: ClassInfo, init: FunctionInfo, args: Args, instance: Value) -> dict[str, Value]:
        """What this construction passes for the attributes that keep a parameter of ``__init__`` as it came
        (``self.stride = stride``): ``ConvSTFT(400, 100, win_type="hanning")`` keeps numbers and strings beside its
        buffers, so this object holds no parameter, whatever other constructions pass."""
        if not info.parameter_attributes or not isinstance(init.node, cst.FunctionDef):
            return {}
        bound = self._bound_arguments(init, args, instance)
        return {attribute: bound[parameter] for attribute, parameter in info.parameter_attributes.items()
                if parameter in bound}

    def _wrapped_at_construction(self, info: ClassInfo, instance: Value, args: Args) -> Value | None:
        """``RecordEpisodeStatistics(envs)`` of a ``gym.Wrapper`` subclass: the argument its ``__init__`` hands to
        the library base (``super().__init__(env)``), when that is an object of a known class."""
        row = self.models.call(instance.qualname or "")
        position = None if row is None else row.param("wraps")
        if position is None:
            return None
        init = info.method("__init__")
        if init is None:  # the library's own ``__init__``
            given = args.positional[int(position)] if len(args.positional) > int(position) else None
        elif isinstance(init.node, cst.FunctionDef):
            name = _parameter_given_to_base(init.node, int(position))
            given = None if name is None else self._bound_arguments(init, args, instance).get(name)
        else:
            return None
        return given if given is not None and given.kind is Kind.INSTANCE else None

    def _super_object(self, args: Args) -> Value:
        """``super()`` in a method of a wrapper of this file: the same object, its methods looked up past the class
        being run (in the file's base classes, then the library base's rows). Anything else is unknown."""
        if len(args.positional) == 2:
            cls, obj = args.positional
            owner = cls.definition if isinstance(cls.definition, ClassInfo) else None
        else:
            function = self.function_node
            params = function.params.posonly_params or function.params.params if isinstance(
                function, cst.FunctionDef) else ()
            obj = (self.scope.lookup(params[0].name.value) or UNKNOWN) if params else UNKNOWN
            lineage = obj.definition.lineage() if isinstance(obj.definition, ClassInfo) else []
            owner = next((each for each in lineage if any(
                method.node is function for method in each.methods.values())), None)
        if owner is None and isinstance(self.function_info, FunctionInfo) and self.function_info.owner is not None:
            owner = self.function_info.owner  # a method of another module's class, read from its tree
        if owner is None or obj.kind not in (Kind.INSTANCE, Kind.NN_MODULE):
            return UNKNOWN
        if obj.wrapped is not None:  # a wrapper: past the class, then the library base's rows
            return obj.but(definition=owner.bases[0] if owner.bases else None)
        if owner.bases and isinstance(obj.definition, ClassInfo):
            return obj.but(definition=owner.bases[0].super_view(obj.definition))  # ``super().__init__(...)``
        return UNKNOWN

    def _call_instance(self, instance: Value, info: ClassInfo, args: Args, node: cst.Call | None = None) -> Value:
        """``model(x)``: ``forward`` (through ``nn.Module.__call__``) or the class's own ``__call__``."""
        if instance.kind is Kind.NN_MODULE:
            self._note_module_dtype(instance, args)
        method = info.method("__call__") or (info.method("forward") if instance.kind is Kind.NN_MODULE else None)
        result = UNKNOWN if method is None else self._call_function(method, args, instance, node)
        if result.kind is Kind.UNKNOWN and result.choices is None and instance.kind is Kind.NN_MODULE:
            return self._module_output(instance, args)  # what any module gives: a tensor, maybe with grad
        return result

    def _class_attribute(self, owner: Value, info: ClassInfo, attribute: str) -> Value | None:
        """``obj.x`` for an object of a class of this file: what its methods assign, or a property's value."""
        self._class_attributes_known(info)
        value = self._attribute_of(info, attribute)
        if value is not None:
            if value.kind in (Kind.SEQUENCE, Kind.NN_MODULE) and owner.kind is not Kind.CLASS:
                return held_by_module(owner, self._container_view(info, attribute, value))
            return held_by_module(owner, value)
        method = info.method(attribute)
        if method is not None:
            if method.role == "property" and owner.kind is not Kind.CLASS:
                return self._call_function(method, Args([], {}, []), owner)
            self.escaped_methods.add(method)  # ``f = obj.put``: called where the analysis cannot tell
            if owner.kind is not Kind.CLASS and method.role == "method":
                if info.seen_from is not None:  # ``super().sample(n)``: the base's method, on the object itself
                    owner = owner.but(definition=info.seen_from)
                return Value(Kind.FUNCTION, definition=BoundCall(method, owner))  # called later with ``owner``
            return Value(Kind.FUNCTION, definition=method)
        return None


def _class_defaults(info: ClassInfo) -> dict[str, Value]:
    """A record's field defaults: what its class body assigns (``done: bool = False``)."""
    return {name: value for name, value in info.class_names.items() if name in (info.record_fields or ())}


def _as_argument(value: Value, annotated: Value | None) -> Value:
    """What the callee sees: the caller's value, without the caller's loop bookkeeping; an unknown argument is
    what the parameter's annotation says (one made from tensors that may be on an accelerator stays so:
    ``format_output(net(batch.cuda()))``)."""
    if value.kind is Kind.UNKNOWN and value.choices is None:
        value = _unknown_as(value, annotated or UNKNOWN)
    if value.loop_item is not None or value.transfer is not None or value.parameter is not None or (
            value.moves_parameter is not None):
        return value.but(loop_item=None, transfer=None, parameter=None, moves_parameter=None)
    return value


def _unknown_as(value: Value, annotated: Value) -> Value:
    """An unknown value where an annotation says what it is: the annotation, unless the value was made from tensors
    that may be on an accelerator (``_placed_like_inputs``), which stays so (a tensor there, if annotated one)."""
    if not value.on_accelerator:
        return annotated
    return annotated.but(on_accelerator=True, device_test=value.device_test) if annotated.kind is Kind.TENSOR else value


def _instance(info: ClassInfo) -> Value:
    """What ``C(...)`` gives: a network of a class that holds no parameter (a box decoder, a loss) has none."""
    instance = info.instance()
    if instance.kind is Kind.NN_MODULE and holds_no_parameters(info):
        return instance.but(has_params=False)
    return instance


def _mark_parameters(info: FunctionInfo, scope: Scope) -> None:
    """Each parameter's value (the receiver aside) knows it is that parameter of ``info``: what the body moves to
    a device is then known to be a parameter (``ParameterMove``)."""
    if info.node is None:
        return
    names = parameter_names(info)
    if info.owner is not None and info.role in ("method", "classmethod", "property"):
        names = names[1:]
    for name in names:
        value = scope.names.get(name)
        if value is not None:
            scope.names[name] = value.but(parameter=(info, name))


def _argument(info: FunctionInfo, args: Args, receiver: Value | None, name: str) -> Value | None:
    """What a call passes for parameter ``name`` (None: left to its default, or not known)."""
    if any(key.startswith("*") for key in args.keywords):
        return None
    if name in args.keywords:
        return args.keywords[name]
    if info.node is not None:
        params = info.node.params
        positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    else:
        positional = list(info.moves_positional)
    if info.role in ("method", "classmethod", "property"):
        if receiver is None:
            return None  # ``Class.method(obj, x)``
        positional = positional[1:]
    if name not in positional:
        return None
    index = positional.index(name)
    return args.positional[index] if index < len(args.positional) else None


def _parameter_given_to_base(init: cst.FunctionDef, position: int) -> str | None:
    """The parameter of ``__init__`` passed at ``position`` to the base's ``__init__``: ``super().__init__(env)``
    or ``gym.Wrapper.__init__(self, env)`` as a statement of its body."""
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else (init.body,)
    parameters = set(parameter_names_of(init))
    for line in body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            call = statement.value if isinstance(statement, cst.Expr) else None
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "__init__"):
                continue
            through_super = isinstance(call.func.value, cst.Call) and isinstance(call.func.value.func, cst.Name) and (
                call.func.value.func.value == "super")
            index = position if through_super else position + 1  # ``Base.__init__(self, env)``
            given = [arg for arg in call.args if arg.keyword is None and not arg.star]
            if len(given) > index and isinstance(given[index].value, cst.Name):
                name = given[index].value.value
                return name if name in parameters else None
    return None


def _passes_a_defaulted_parameter(info: FunctionInfo, args: Args, receiver: Value | None) -> bool:
    """Whether a call gives a value to a parameter that has a default (else the defaults summary applies)."""
    if any(key.startswith("*") for key in args.keywords):
        return True
    positional = list(info.positional_names)
    if receiver is not None and info.role in ("method", "classmethod", "property"):
        positional = positional[1:]
    passed = set(positional[:len(args.positional)]) | set(args.keywords)
    return len(args.positional) > len(positional) or bool(passed & info.defaulted_names)
