"""Control flow: branches and their joins, device tests and narrowing, ``with``, ``try``, ``match``.

Loops are in ``loops.py``."""

from __future__ import annotations

from typing import Callable

import libcst as cst

from . import known_apis as api
from .scope import ASSERTED, Scope
from .syntax import (asserted_flags, bool_literal_node, children_of, dotted_name, ends_abruptly, int_literal,
                     is_copy_flag_test, pattern_names)
from .values import UNKNOWN, Kind, Value, bool_literal, has_a_device_fact

#: what ``_grad_mode_of`` returns for something that does not set autograd's mode
NOT_A_GRAD_MODE = object()


class ControlFlowMixin:
    """Control flow: branches and their joins, device tests and narrowing, ``with``, ``try``, ``match``."""

    def _if(self, node: cst.If) -> None:
        """``if``/``elif``/``else`` (an ``elif`` chain is walked, not recursed): each branch starts from what the
        tests before it say (``isinstance``, device checks), and only branches that reach their end are joined."""
        before = self.scope
        reaching: list[Scope] = []
        copy_tests = 0
        incoming = before
        false_before = incoming_false = self.false_device_tests
        branch: cst.If | None = node
        colocated = self._colocation_test(node.test)
        first_body: Scope | None = None
        first_tested: tuple[str, bool] | None = None
        try:
            while branch is not None:
                self.scope = incoming
                self.eval(branch.test)
                tested_here = self.device_test(branch.test)
                when_true, when_false = self._narrowing(branch.test, tested_here)
                mentions_copy = is_copy_flag_test(branch.test)
                copy_tests += mentions_copy
                self.copy_tests += mentions_copy
                outcome = self.test_outcome(branch.test)
                false_in_body, false_in_else = false_under(tested_here)
                first_tested = tested_here if branch is node else first_tested
                body_scope = incoming.copy()
                body_scope.names.update(when_true)
                self.scope = body_scope
                self.false_device_tests = incoming_false + false_in_body
                first_body = body_scope if first_body is None else first_body
                # what a branch of a device test returns holds under it (only a function's body returns)
                branch_test = tested_here if self.returns is not None else None
                if outcome is False:
                    self.read_unreachable(lambda: self._suite(branch.body))
                else:
                    returns_before = len(self.returns) if self.returns is not None else 0
                    self._suite(branch.body)
                    self._returned_under(branch_test, True, returns_before)
                    if not ends_abruptly(branch.body):
                        reaching.append(body_scope)
                else_scope = incoming.copy()
                else_scope.names.update(when_false)
                incoming_false += false_in_else
                self.false_device_tests = incoming_false
                orelse = branch.orelse
                if isinstance(orelse, cst.If) and outcome is not True:
                    incoming, branch = else_scope, orelse
                    continue
                self.scope = else_scope
                if outcome is True:  # the test holds: no other branch runs
                    if orelse is not None:
                        self.read_unreachable(lambda: self._visit(orelse))
                else:
                    if isinstance(orelse, cst.Else):
                        returns_before = len(self.returns) if self.returns is not None else 0
                        self._suite(orelse.body)
                        self._returned_under(branch_test, False, returns_before)
                    if orelse is None or not ends_abruptly(orelse.body):
                        reaching.append(else_scope)
                branch = None
        finally:
            self.copy_tests -= copy_tests
            self.scope = before
            self.false_device_tests = false_before
        tested = first_tested if len(reaching) == 2 and not isinstance(node.orelse, cst.If) else None
        branches = {} if tested is None else {  # read before the join writes the names the branches inherit
            name: (reaching[0].lookup(name), reaching[1].lookup(name)) for name in before.rebound_in(*reaching)}
        # ``if x.is_cuda: iden = iden.cuda()``: ``iden`` is on an accelerator only where ``x`` already is
        moved_under = [] if colocated is None or first_body is None else [
            name for name in before.rebound_in(first_body) if _moved_there(first_body.get(name), before.lookup(name))]
        if reaching:
            before.join_from(*reaching)
        # where no branch that can run reaches its end, what follows in the block cannot run either (set, not only
        # raised: an ``elif`` read here as unreachable may have raised it for itself)
        self.rest_unreachable = not reaching
        for name in moved_under:
            joined = before.names.get(name)
            if joined is not None and joined.on_accelerator:
                before.names[name] = joined.but(on_accelerator=colocated.on_accelerator, device_test=None)
        if tested is not None:
            # after ``if use_cuda: x = x.cuda()``, what ``x`` has of an accelerator it has only where ``use_cuda`` is
            # true (``Value.device_test``): where the same test is false again, it is on the host
            for name, (when_true, when_false) in branches.items():
                value = before.names.get(name)
                if value is not None:
                    marked = under_device_test(value, self.placing(when_true), self.placing(when_false), *tested)
                    self.device_tests_noted = self.device_tests_noted or marked is not value
                    before.names[name] = marked

    def placing(self, value: Value | None) -> Value | None:
        """``value``, where it is a constructor that makes accelerator tensors (``torch.cuda.FloatTensor``), marked as
        on one, so that ``Tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor`` is that device test's
        choice (``under_device_test``) and the tensors it makes are on the host where the test is false."""
        if value is None or value.kind is not Kind.REF or value.qualname is None or value.on_accelerator:
            return value
        model = self.models.call(value.qualname)
        return value.but(on_accelerator=True) if model is not None and "accelerator" in model.flags else value

    def _colocation_test(self, test: cst.BaseExpression) -> Value | None:
        """The tensor ``if x.is_cuda:`` (or ``x.device.type != "cpu"``) tests, where it is not known to be on an
        accelerator: what the branch moves there goes where ``x`` is, no further."""
        on_cpu = _tested_on_cpu(test)
        if on_cpu is None or on_cpu[1]:
            return None
        tested = self.scope.lookup(on_cpu[0])
        if tested is None or tested.kind not in (Kind.TENSOR, Kind.UNKNOWN) or tested.on_accelerator:
            return None
        return tested

    def _returned_under(self, tested: tuple[str, bool] | None, holds: bool, returns_before: int) -> None:
        """What a branch of ``if <device test>`` returns has what it has of an accelerator only where the branch
        runs: ``if torch.cuda.is_available(): return x.cuda()`` (``Value.device_test``), so that a caller's later
        ``if torch.cuda.is_available(): ... else: x.numpy()`` knows ``x`` is on the host there."""
        if tested is None or self.returns is None:
            return
        key, positive = tested
        where = key if positive == holds else f"not:{key}"
        for index in range(returns_before, len(self.returns)):
            value = self.returns[index]
            if value.device_test is None and has_a_device_fact(value):
                self.returns[index] = value.but(device_test=where)
                self.device_tests_noted = True

    def device_test(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """The device test an ``if`` test is, and whether it says it is true (False: ``not use_cuda``):
        ``torch.cuda.is_available()`` or a name bound to it, a flag (``args.cuda``, ``self.use_gpu``: the same
        test wherever it is written), or a comparison of a name with a string (``device.type == "cuda"``)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.device_test(test.expression)
            return None if inner is None else (inner[0], not inner[1])
        if isinstance(test, (cst.Call, cst.Name, cst.Attribute)):
            value = self.eval_quietly(test) if not isinstance(test, cst.Call) else None
            if isinstance(test, cst.Call) and not test.args:
                callee = self.eval_quietly(test.func)
                key = api.ACCELERATOR_AVAILABILITY.get(callee.qualname or "") if callee.kind is Kind.REF else None
                return None if key is None else (key, True)
            if value is not None and value.kind is Kind.NUMBER and value.device_test is not None:
                return value.device_test, True
            name = dotted_name(test)
            return None if name is None else (f"flag:{name}", True)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            left, right = test.left, target.comparator
            if isinstance(left, cst.SimpleString):
                left, right = right, left
            name = dotted_name(left)
            if name is not None and (number := int_literal(right)) is not None:
                # ``gpu >= 0``, ``args.gpu_id > -1``: the same comparison, written again, is the same test
                return f"compare:{name}:{type(target.operator).__name__}:{number}", True
            if name is None or not isinstance(right, cst.SimpleString) or "b" in right.prefix.lower():
                return None
            if isinstance(target.operator, (cst.Equal, cst.Is)):
                return f"is:{name}:{right.raw_value}", True
            if isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
                return f"is:{name}:{right.raw_value}", False
        return None

    def _device_test_narrowing(self, tested: tuple[str, bool] | None) -> tuple[dict[str, Value], dict[str, Value]]:
        """What a device test (``device_test``) says where it is true and where it is false: a value that has
        something of an accelerator only under it, or only under its opposite, has none of it where that does not
        hold; where ``torch.cuda.is_available()`` is false, nothing is on CUDA and no copy from a CUDA device is
        pending."""
        if tested is None or not (self.device_tests_noted or tested[0] == api.NO_CUDA_WHERE_FALSE):
            return {}, {}  # no value holds anything under a test yet, and it is not the test for CUDA
        false_in_body, false_in_else = false_under(tested)
        when_true: dict[str, Value] = {}
        when_false: dict[str, Value] = {}
        scope = self.scope
        seen: set[str] = set()
        for layer in (scope.names, *scope.inherited):
            for name, value in layer.items():
                if name in seen:
                    continue
                seen.add(name)
                where_false = on_host_where_false(value, false_in_else)
                where_true = on_host_where_false(value, false_in_body)
                if where_false is not value:
                    when_false[name] = where_false
                if where_true is not value:
                    when_true[name] = where_true
        return when_true, when_false

    def _assert(self, node: cst.Assert) -> None:
        self.eval(node.test)
        if node.msg is not None:
            self.eval(node.msg)
        self.scope.names.update(self._narrowing(node.test, self.device_test(node.test))[0])
        for flag, holds in asserted_flags(node.test):
            # ``assert not config.deep_fusion``: a later ``if config.deep_fusion:`` of this function cannot run
            self.scope.names[ASSERTED + flag] = Value(Kind.NUMBER, dtype="bool", literal=str(holds))

    def _narrowing(self, test: cst.BaseExpression, tested: tuple[str, bool] | None,
                   ) -> tuple[dict[str, Value], dict[str, Value]]:
        """What ``test`` being true, and being false, says of names: ``isinstance(x, np.ndarray)``,
        ``x.device.type == "cpu"``, ``x.is_cuda``, a device test (``torch.cuda.is_available()``, ``use_cuda``: the
        ``device_test`` of ``test``, asked once by the caller), and ``not``/``and``/``or`` of those."""
        device_true, device_false = self._device_test_narrowing(tested)
        when_true, when_false = self._type_narrowing(test)
        if device_true or device_false:
            return {**device_true, **when_true}, {**device_false, **when_false}
        return when_true, when_false

    def _type_narrowing(self, test: cst.BaseExpression) -> tuple[dict[str, Value], dict[str, Value]]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            when_true, when_false = self._narrowing(test.expression, self.device_test(test.expression))
            return when_false, when_true
        if isinstance(test, cst.BooleanOperation):
            left_true, left_false = self._narrowing(test.left, self.device_test(test.left))
            right_true, right_false = self._narrowing(test.right, self.device_test(test.right))
            if isinstance(test.operator, cst.And):
                return {**left_true, **right_true}, {}
            return {}, {**left_false, **right_false}
        typed = self._type_test(test)
        if typed is not None and typed[0] is not None:
            return self._type_test_narrowing(*typed[:4])
        if isinstance(test, cst.Attribute) and test.attr.value == "requires_grad" and isinstance(test.value, cst.Name):
            current = self.scope.lookup(test.value.value)  # ``t.detach() if t.requires_grad else t``
            if current is None or current.kind is not Kind.TENSOR:
                return {}, {}
            return ({test.value.value: current.but(requires_grad=True)},
                    {test.value.value: current.but(requires_grad=False)})
        on_cpu = _tested_on_cpu(test)
        if on_cpu is not None:
            name, cpu_when = on_cpu
            current = self.scope.lookup(name)
            if current is None or current.kind is not Kind.TENSOR:
                return {}, {}
            narrowed = {name: current.but(on_accelerator=False)}
            return (narrowed, {}) if cpu_when else ({}, narrowed)
        return {}, {}

    def test_outcome(self, test: cst.BaseExpression) -> bool | None:
        """Whether a test is known to be true or false where it stands: ``isinstance(x, torch.Tensor)`` of a value
        the analysis knows is a tensor (or an array), a string compared with a string (``device == "auto"`` where
        a caller passed ``"cpu"``), and ``not`` of those. A branch that cannot run is then read without recording
        (``x.clone() if isinstance(x, torch.Tensor) else np.copy(x)`` given a tensor)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.test_outcome(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            # ``gpu and torch.cuda.is_available()`` where the caller passed ``gpu=False``: one side decides
            deciding = isinstance(test.operator, cst.Or)  # the outcome of a side that decides the whole test
            sides = (self.test_outcome(test.left), self.test_outcome(test.right))
            if deciding in sides:
                return deciding
            return None if None in sides else not deciding
        on_cpu = _tested_on_cpu(test)
        if on_cpu is not None:
            # ``if x.is_cuda: iden = iden.cuda()`` of a tensor known to be on the host (made there, or the output
            # of a module never moved, given tensors that are): the branch cannot run
            tested = self.scope.lookup(on_cpu[0])
            return on_cpu[1] if tested is not None and tested.kind is Kind.TENSOR and (
                tested.on_accelerator is False) else None
        if isinstance(test, cst.Attribute) and test.attr.value == "requires_grad" and isinstance(test.value, cst.Name):
            # ``if matrix.requires_grad: result.requires_grad_()`` given a tensor made without grad: the flag as
            # reading it gives it (``_attribute_of_value``, which knows it where it is False)
            tested = self.scope.lookup(test.value.value)
            known = bool_literal(self._attribute_of_value(tested, "requires_grad")) if (
                tested is not None and tested.kind is Kind.TENSOR) else None
            if known is not None:
                return known
        if isinstance(test, (cst.Name, cst.Attribute)):
            flag = dotted_name(test) if isinstance(test, cst.Attribute) else None
            asserted = self.scope.get(ASSERTED + flag) if flag is not None else None
            if bool_literal(asserted) is not None:
                return bool_literal(asserted)
            # ``if return_vis:`` where the caller passed ``return_vis=False``; ``if mask:`` of None on every path
            value = self.eval_quietly(test)
            return False if value.kind is Kind.NONE else bool_literal(value)
        legacy_variable = self._exact_legacy_variable_test(test)
        if legacy_variable is not None:
            return legacy_variable
        typed = self._type_test(test)
        if typed is not None:
            _, narrowed, current, holds, exact = typed
            if narrowed.kind is Kind.NUMBER:
                # ``isinstance(grad_norm, float)`` of a tensor (TTS's check for old torch): false; of a number, not
                # known (an int is no float, and NumPy's float64 scalar is one)
                return (not holds) if current.kind in _EXCLUSIVE_KINDS else None
            if narrowed.kind is current.kind:
                return None if exact else holds  # ``type(p) is torch.Tensor`` fails for a Parameter
            return (not holds) if len({narrowed.kind, current.kind} & _EXCLUSIVE_KINDS) == 2 else None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            operator = test.comparisons[0].operator
            if isinstance(operator, (cst.Is, cst.IsNot)) and isinstance(test.comparisons[0].comparator, cst.Name) and (
                    test.comparisons[0].comparator.value == "None"):
                # ``original_image is not None`` where it is None on every path (a default the call left)
                is_none = self.eval_quietly(test.left).kind is Kind.NONE
                return (True if isinstance(operator, cst.Is) else False) if is_none else None
            same_dtype = self._dtype_comparison(test.left, test.comparisons[0].comparator)
            if same_dtype is not None:  # ``x.dtype is torch.float32`` of a tensor whose dtype is known
                return same_dtype == isinstance(operator, (cst.Is, cst.Equal))
            if not isinstance(operator, (cst.Equal, cst.NotEqual)):
                return None
            left, right = self.eval_quietly(test.left), self._literal_string(test.comparisons[0].comparator)
            if right is None or left.kind is not Kind.STRING or left.literal is None:
                return None
            return (left.literal == right) == isinstance(operator, cst.Equal)
        return None

    def _dtype_comparison(self, left: cst.BaseExpression, right: cst.BaseExpression) -> bool | None:
        """Whether ``t.dtype`` (``left``) is the torch dtype ``right`` names, where the tensor's dtype is known."""
        if not (isinstance(left, cst.Attribute) and left.attr.value == "dtype"):
            return None
        named = self.eval_quietly(right)
        if named.kind is not Kind.REF or not (named.qualname or "").startswith("torch."):
            return None
        wanted = self._dtype_of_value(named)
        tensor = self.eval_quietly(left.value)
        if wanted is None or tensor.kind is not Kind.TENSOR or tensor.dtype is None:
            return None
        return tensor.dtype == wanted

    @staticmethod
    def _literal_string(node: cst.BaseExpression) -> str | None:
        """A plain string literal's text (no prefix, no escapes), or None."""
        if isinstance(node, cst.SimpleString) and not node.prefix and "\\" not in node.raw_value:
            return node.raw_value
        return None

    def read_unreachable(self, read: Callable[[], object]) -> None:
        """Read code that cannot run (a branch its test rules out): its facts go, and so do its returns."""
        saved = self.facts, self.silent, self.returns, self.yields
        self.facts, self.silent = self._fresh_facts(), True
        self.returns = [] if self.returns is not None else None
        self.yields = [] if self.yields is not None else None
        try:
            read()
        finally:
            self.facts, self.silent, self.returns, self.yields = saved

    def _type_test(self, test: cst.BaseExpression) -> tuple[str | None, Value, Value, bool, bool] | None:
        """``isinstance(x, T)``, ``torch.is_tensor(x)`` or ``type(x) is T`` (``==``; negated by ``is not``/``!=``):
        the name tested (None for another expression, ``batch[0][k]``, which is not narrowed), what it is where it
        has that type, what it is now, whether the test holds where it has that type, and whether the test is exact
        (``type(x) is T`` fails for a subclass)."""
        if isinstance(test, cst.Call):
            func = test.func
            is_isinstance = isinstance(func, cst.Name) and func.value == "isinstance" and len(test.args) == 2
            is_tensor_test = self.eval_quietly(func).qualname == "torch.is_tensor" and len(test.args) == 1
            if not (is_isinstance or is_tensor_test):
                return None
            operand, type_node, holds, exact = test.args[0].value, test.args[-1].value, True, False
        else:
            compared = _type_comparison(test)
            if compared is None:
                return None
            operand, type_node, holds = compared
            exact, is_tensor_test = True, False
        name = operand.value if isinstance(operand, cst.Name) else None
        current = (self.scope.lookup(name) if name is not None else self._tested_operand(operand)) or UNKNOWN
        type_value = None if is_tensor_test else self.eval_quietly(type_node)
        if exact and type_value.qualname in api.NO_TENSOR_IS_EXACTLY:
            return None  # ``type(x) == Variable``: no narrowing (``test_outcome`` decides it for a known tensor)
        narrowed = Value(Kind.TENSOR) if is_tensor_test else self._annotated_type(type_value)
        if narrowed.kind is Kind.UNKNOWN and not exact:
            narrowed = self._builtin_type(type_node)
        return None if narrowed.kind is Kind.UNKNOWN else (name, narrowed, current, holds, exact)

    def _tested_operand(self, operand: cst.BaseExpression) -> Value:
        """What an expression tested by ``isinstance`` is, without recording facts (it was evaluated already): a name
        or attribute chain, or an item of one by names and literals (``outputs[0][k]``, PyPOTS's gathered dicts)."""
        if isinstance(operand, cst.Subscript) and all(isinstance(e.slice, cst.Index) for e in operand.slice):
            base = self._tested_operand(operand.value)
            if base.kind is Kind.UNKNOWN or base.choices is not None:
                return UNKNOWN
            indices = [self._tested_operand(e.slice.value) for e in operand.slice]  # type: ignore[union-attr]
            return self._subscript_of(operand, base, indices)
        if isinstance(operand, cst.Integer):
            return Value(Kind.NUMBER, dtype="int")
        literal = self._literal_string(operand)
        if literal is not None:
            return Value(Kind.STRING, literal=literal)
        return self.eval_quietly(operand)

    def _builtin_type(self, type_node: cst.BaseExpression) -> Value:
        """``list``, ``tuple`` or ``(list, tuple)`` in ``isinstance``: a list or tuple; ``dict``: a dict; ``int``,
        ``float``, ``bool``, ``complex``: a Python number; else unknown (``if isinstance(labels, list): labels =
        np.array(labels)`` is not run for a tensor)."""
        types = [element.value for element in type_node.elements] if isinstance(type_node, cst.Tuple) else [type_node]
        kinds = {_BUILTIN_TYPES.get(self._name(named).qualname or "") if isinstance(named, cst.Name) else None
                 for named in types}
        return Value(kinds.pop()) if len(kinds) == 1 and None not in kinds else UNKNOWN

    def _exact_legacy_variable_test(self, test: cst.BaseExpression) -> bool | None:
        """``type(x) == Variable`` (``is``, ``!=``, ``is not``) of a value known to be a tensor: false (true when
        negated), since ``Variable`` is no tensor's own type; None for anything else."""
        compared = _type_comparison(test)
        if compared is None or self.eval_quietly(compared[1]).qualname not in api.NO_TENSOR_IS_EXACTLY:
            return None
        if self.eval_quietly(compared[0]).kind is not Kind.TENSOR:
            return None
        return not compared[2]

    @staticmethod
    def _type_test_narrowing(name: str, narrowed: Value, current: Value,
                             holds: bool) -> tuple[dict[str, Value], dict[str, Value]]:
        """Where ``x`` has the tested type it is one (unless already known to be, which keeps what else is known);
        where it has not, a tensor it may have been (a caller's CUDA tensor) is not what it is there, so it is
        unknown."""
        if narrowed.kind is Kind.NUMBER:
            return {}, {}  # (NumPy's float64 scalar is a float: narrowing it to a Python number would lose that)
        of_type = {} if narrowed.kind is current.kind else {name: narrowed}
        # (not exactly a tensor, where the test is ``type(x) is torch.Tensor``: another type, or a rare subclass)
        not_of_type = {name: UNKNOWN} if narrowed.kind is Kind.TENSOR and current.kind in (
            Kind.TENSOR, Kind.UNKNOWN) else {}
        return (of_type, not_of_type) if holds else (not_of_type, of_type)

    def _with(self, node: cst.With) -> None:
        mode: object = NOT_A_GRAD_MODE
        for item in node.items:
            self.eval(item.item)
            item_mode = self._grad_mode_of(item.item, as_decorator=False)
            if item_mode is not NOT_A_GRAD_MODE:
                mode = item_mode
            if item.asname is not None:
                self._bind(item.asname.name, UNKNOWN)
        saved = self.grad_enabled
        if mode is not NOT_A_GRAD_MODE:
            self.grad_enabled = mode  # type: ignore[assignment]
        try:
            self._suite(node.body)
        finally:
            self.grad_enabled = saved

    def _try(self, node: cst.Try) -> None:
        # ``try: torch.log(x) except: np.log(x)``: the fallback runs where torch refused x, so x is no tensor there
        rejected = self._torch_arguments_of_a_lone_statement(node.body)
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
                if rejected and _catches_a_type_error(handler):
                    self._forget_tensors(rejected)
                self._suite(handler.body)
                branches.append(handler_scope)
        finally:
            self.scope = before
        before.join_from(*branches)
        if node.finalbody is not None:
            self._suite(node.finalbody.body)

    def _torch_arguments_of_a_lone_statement(self, body: cst.BaseSuite) -> frozenset[str]:
        """The names a ``try`` body of one simple statement passes to torch functions (as an argument or an operand
        of one): if that statement raised, torch refused them, which it does not do to a tensor."""
        statements = body.body if isinstance(body, cst.IndentedBlock) else ()
        if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
            return frozenset()
        if len(statements[0].body) != 1:
            return frozenset()
        names: set[str] = set()
        for call in _calls_in(statements[0].body[0]):
            callee = self.eval_quietly(call.func)
            if callee.kind is Kind.REF and (callee.qualname or "").startswith("torch."):
                for arg in call.args:
                    names.update(_operand_names(arg.value))
        return frozenset(names)

    def _forget_tensors(self, names: frozenset[str]) -> None:
        """Where torch refused these names, what made them tensors on some path did not happen on this one."""
        for name in names:
            value = self.scope.lookup(name)
            if value is not None and (value.kind is Kind.TENSOR
                                      or any(choice.kind is Kind.TENSOR for choice in value.choices or ())):
                self.scope.names[name] = UNKNOWN

    def _match(self, node: cst.Match) -> None:
        self.eval(node.subject)
        before = self.scope
        branches = [before.copy()]
        try:
            for case in node.cases:
                case_scope = before.copy()
                self.scope = case_scope
                for name in pattern_names(case.pattern):
                    case_scope.names[name] = UNKNOWN
                self._walk_children(case.pattern)
                if case.guard is not None:
                    self.eval(case.guard)
                self._suite(case.body)
                branches.append(case_scope)
        finally:
            self.scope = before
        before.join_from(*branches)

    def _grad_mode_of(self, expression: cst.BaseExpression, *, as_decorator: bool) -> object:
        """The autograd mode a ``with`` item or decorator sets, or ``NOT_A_GRAD_MODE``."""
        call = expression if isinstance(expression, cst.Call) else None
        callee = self.eval_quietly(call.func if call is not None else expression)
        model = self.models.call(callee.qualname) if callee.kind is Kind.REF and callee.qualname else None
        if model is None or model.kind != "grad-mode":
            return NOT_A_GRAD_MODE
        if call is None and not as_decorator:
            return NOT_A_GRAD_MODE  # ``with torch.no_grad:`` is a TypeError, not a mode
        first = call.args[0].value if call is not None and call.args else None
        if "set" in model.flags:  # set_grad_enabled(flag)
            return bool_literal_node(first)
        if "inference" in model.flags and first is not None:  # inference_mode(False) keeps the mode
            flag = bool_literal_node(first)
            return False if flag is True else (self.grad_enabled if flag is False else None)
        return "on" in model.flags


def under_device_test(joined: Value, when_true: Value | None, when_false: Value | None, key: str,
                      positive: bool) -> Value:
    """A name joined after ``if <device test>``: when only one branch gave it something of an accelerator, it has
    that only where the test says so. A flag set to ``True`` on one branch and ``False`` on the other
    (``has_cuda_tensors = True`` beside the copy) is that test, where a later ``if`` reads it."""
    if joined.device_test is not None:
        return joined
    parts = _paired_items(joined, when_true, when_false)
    if parts is not None:
        # ``eva, evc = (eva, evc) if not use_cuda else (torch.from_numpy(eva).cuda(), ...)``: each item, as a name
        items = tuple(under_device_test(*part, key, positive) for part in parts)
        return joined.but(items=items) if any(new is not part[0] for new, part in zip(items, parts)) else joined
    flags = (bool_literal(when_true), bool_literal(when_false))
    if flags in ((True, False), (False, True)):
        holds = positive == flags[0]
        return joined.but(device_test=key if holds else f"not:{key}")
    true_has = when_true is not None and _has_device_fact(when_true)
    false_has = when_false is not None and _has_device_fact(when_false)
    if true_has == false_has:
        return joined
    holds = positive == true_has  # the branch with the device fact is the one where the key is true
    return joined.but(device_test=key if holds else f"not:{key}")


def _paired_items(joined: Value, when_true: Value | None, when_false: Value | None,
                  ) -> list[tuple[Value, Value, Value]] | None:
    """The items of a tuple joined from two tuples of its length, each with the two it was joined from."""
    if joined.kind is not Kind.SEQUENCE or joined.items is None or when_true is None or when_false is None:
        return None
    if when_true.items is None or when_false.items is None or not (
            len(joined.items) == len(when_true.items) == len(when_false.items)):
        return None
    return list(zip(joined.items, when_true.items, when_false.items))


def _has_device_fact(value: Value) -> bool:
    return has_a_device_fact(value) or (value.kind is Kind.STRING and value.literal is not None
                                        and value.literal.startswith(api.ACCELERATOR_DEVICE_PREFIXES))


def _cleared(value: Value, test: str, no_cuda: bool) -> Value:
    """``value`` where ``test`` is false (or, with ``no_cuda``, where there is no CUDA device): what it, or a list
    or dict of it, had of an accelerator only under that test is gone, as is any pending copy without CUDA, and
    without CUDA no tensor or module is on it (``if torch.cuda.is_available(): x = x.cpu()`` leaves ``x`` as it was
    only where nothing can be on CUDA)."""
    def cleared(each: Value) -> Value:
        if each.device_test == test or (no_cuda and (each.pending_copy is not None or (
                each.on_accelerator and each.kind not in (Kind.DEVICE, Kind.STRING)))):
            return _without_device_facts(each)
        return each
    return _nested(value, cleared)


def _nested(value: Value, change: Callable[[Value], Value], depth: int = 0) -> Value:
    """``change`` applied to ``value`` and to the items of the lists and dicts it is (three levels deep)."""
    value = change(value)
    if depth > 3 or value.kind not in (Kind.SEQUENCE, Kind.MAPPING):
        return value
    changes: dict[str, object] = {}
    if value.element is not None:
        element = _nested(value.element, change, depth + 1)
        if element is not value.element:
            changes["element"] = element
    if value.items:
        items = tuple(_nested(item, change, depth + 1) for item in value.items)
        if any(new is not old for new, old in zip(items, value.items)):
            changes["items"] = items
    return value.but(**changes) if changes else value


def with_tests_renamed(value: Value, renamed: dict[str, str]) -> Value:
    """``value`` with the device tests it (or a list or dict of it) holds under named as ``renamed`` says, the test
    and its opposite (``flag:cuda`` -> ``flag:self.cuda``, ``not:flag:cuda`` -> ``not:flag:self.cuda``)."""
    def renamed_test(each: Value) -> Value:
        test = each.device_test
        if test is None:
            return each
        negated = test.startswith("not:")
        new = renamed.get(test[4:] if negated else test)
        return each if new is None else each.but(device_test=f"not:{new}" if negated else new)
    return _nested(value, renamed_test)


def false_under(tested: tuple[str, bool] | None) -> tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]]:
    """A device test (``device_test``) as the tests false where it is true and where it is false, each with whether
    it is the test for CUDA itself (``false_device_tests``, ``on_host_where_false``)."""
    if tested is None:
        return (), ()
    key, positive = tested
    no_cuda = key == api.NO_CUDA_WHERE_FALSE
    holds, opposite = (key, f"not:{key}") if positive else (f"not:{key}", key)
    return ((opposite, no_cuda and not positive),), ((holds, no_cuda and positive),)


def on_host_where_false(value: Value, false_tests: tuple[tuple[str, bool], ...]) -> Value:
    """``value`` where each of ``false_tests`` is false (``_cleared``)."""
    for test, no_cuda in false_tests:
        value = _cleared(value, test, no_cuda)
    return value


def _without_device_facts(value: Value) -> Value:
    """A value where the test it held its accelerator under is false: on the host, no copy from a device pending."""
    if value.kind in (Kind.DEVICE, Kind.STRING):
        return Value(Kind.DEVICE, on_accelerator=False)
    return value.but(on_accelerator=None if value.on_accelerator else value.on_accelerator, pending_copy=None,
                     device_test=None)


#: the builtin types an ``isinstance`` test may name that make a value a list or tuple, a dict, or a Python number
_BUILTIN_TYPES = {"builtins.list": Kind.SEQUENCE, "builtins.tuple": Kind.SEQUENCE, "builtins.dict": Kind.MAPPING,
                  "builtins.int": Kind.NUMBER, "builtins.float": Kind.NUMBER, "builtins.bool": Kind.NUMBER,
                  "builtins.complex": Kind.NUMBER}

#: kinds no value has two of: an isinstance test of one on a value known to be another is false (a list or a dict
#: is never a tensor: ``if isinstance(output, torch.Tensor)`` of the list a detector's NMS returns)
_EXCLUSIVE_KINDS = frozenset({Kind.TENSOR, Kind.NDARRAY, Kind.NN_MODULE, Kind.SEQUENCE, Kind.MAPPING})


def _moved_there(moved: Value | None, previous: Value | None) -> bool:
    """Whether a branch put on an accelerator what was not known to be on one before it."""
    return moved is not None and bool(moved.on_accelerator) and not (previous is not None and previous.on_accelerator)


def _type_comparison(test: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression, bool] | None:
    """``type(x) is T`` (``==``; negated by ``is not``/``!=``): ``x``, ``T``, and whether the test says they match."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    comparison, left = test.comparisons[0], test.left
    if not (isinstance(comparison.operator, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual))
            and isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type"
            and len(left.args) == 1):
        return None
    return left.args[0].value, comparison.comparator, isinstance(comparison.operator, (cst.Is, cst.Equal))


def _tested_on_cpu(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``x.device.type == "cpu"`` (x on the CPU when true), ``!= "cpu"`` and ``x.is_cuda`` (when false)."""
    if isinstance(test, cst.Attribute) and test.attr.value == "is_cuda" and isinstance(test.value, cst.Name):
        return test.value.value, False
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    left, right = test.left, target.comparator
    if isinstance(left, cst.SimpleString):
        left, right = right, left
    # the raw text, not LibCST's evaluated_value (a literal_eval, and a compile, per comparison with a string)
    if not (isinstance(right, cst.SimpleString) and right.raw_value == "cpu" and "b" not in right.prefix.lower()):
        return None
    if not (isinstance(left, cst.Attribute) and left.attr.value == "type" and isinstance(left.value, cst.Attribute)
            and left.value.attr.value == "device" and isinstance(left.value.value, cst.Name)):
        return None
    if isinstance(target.operator, cst.Equal):
        return left.value.value.value, True
    if isinstance(target.operator, cst.NotEqual):
        return left.value.value.value, False
    return None


_TYPE_ERROR_CATCHERS = frozenset({"Exception", "BaseException", "TypeError"})


def _catches_a_type_error(handler: cst.ExceptHandler) -> bool:
    """Whether this handler runs when torch refuses an argument (a ``TypeError``)."""
    if handler.type is None:
        return True
    if isinstance(handler.type, cst.Tuple):
        types = [element.value for element in handler.type.elements]
    else:
        types = [handler.type]
    return any(dotted_name(entry) in _TYPE_ERROR_CATCHERS for entry in types)


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call in a statement, outermost first."""
    calls: list[cst.Call] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            calls.append(current)
        if not isinstance(current, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            stack.extend(reversed(children_of(current)))
    return calls


def _operand_names(expression: cst.BaseExpression) -> set[str]:
    """The names an argument is made of by arithmetic alone: ``x`` and ``d`` in ``x`` and ``d - 0.5``."""
    if isinstance(expression, cst.Name):
        return {expression.value}
    if isinstance(expression, cst.BinaryOperation):
        return _operand_names(expression.left) | _operand_names(expression.right)
    if isinstance(expression, cst.UnaryOperation):
        return _operand_names(expression.expression)
    return set()
