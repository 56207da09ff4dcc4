"""Small questions about LibCST nodes that do not need the analysis: dotted names, literals, child fields."""

from __future__ import annotations

import dataclasses
import re
from typing import Iterator

import libcst as cst
import libcst.matchers as m

# Node fields that never hold an expression or statement: skipping them makes the generic walk cheap.
_TRIVIA_FIELDS = {"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
                  "footer", "trailing_whitespace", "newline", "equal", "colon", "star", "dot", "operator",
                  "whitespace_before", "whitespace_after", "lbracket", "rbracket", "lbrace", "rbrace", "quote",
                  "prefix", "string", "value_str"}
_child_fields_cache: dict[type, tuple[str, ...]] = {}


def child_fields(node_type: type) -> tuple[str, ...]:
    fields = _child_fields_cache.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _TRIVIA_FIELDS and not f.name.startswith("whitespace")
        )
        _child_fields_cache[node_type] = fields
    return fields


def bool_literal_node(node: cst.BaseExpression | None) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def int_literal(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return _integer(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(
            node.expression, cst.Integer):
        return -_integer(node.expression)
    return None


def _integer(node: cst.Integer) -> int:
    # int(..., 0) reads every form of an integer literal (0x, 0o, 0b; underscores), without LibCST's
    # evaluated_value, which compiles the text
    return int(node.value, 0) if node.value[:2] not in ("00", "0_") else 0


def dotted_name(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        owner = dotted_name(node.value)
        return None if owner is None else f"{owner}.{node.attr.value}"
    return None


def is_copy_flag_test(test: cst.BaseExpression) -> bool:
    """An ``if copy:``/``if self.copy`` test: code that copies on purpose in one branch."""
    node = test.expression if isinstance(test, cst.UnaryOperation) else test
    if isinstance(node, cst.Name):
        return "copy" in node.value.lower()
    if isinstance(node, cst.Attribute):
        return "copy" in node.attr.value.lower()
    return False


def pattern_names(pattern: cst.CSTNode) -> Iterator[str]:
    if isinstance(pattern, (cst.MatchAs, cst.MatchStar)) and pattern.name is not None:
        yield pattern.name.value
    for name in child_fields(type(pattern)):
        child = getattr(pattern, name)
        children = child if isinstance(child, (list, tuple)) else (child,)
        for item in children:
            if isinstance(item, cst.CSTNode) and not isinstance(item, cst.BaseExpression):
                yield from pattern_names(item)
            elif isinstance(item, (cst.MatchAs, cst.MatchStar)):
                yield from pattern_names(item)
    if isinstance(pattern, cst.MatchMapping) and pattern.rest is not None:
        yield pattern.rest.value


def last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call):
        node = node.func
    name = dotted_name(node)
    return "" if name is None else name.rsplit(".", 1)[-1].lower()


#: a ``%`` conversion (``"scale_%d" % i``): where a formatted name's variable part is
_PERCENT_CONVERSION = re.compile(r"%[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[diouxXeEfFgGcrsa]")
_FORMAT_METHOD = m.Attribute(value=m.SimpleString(), attr=m.Name("format"))


def formatted_name(node: cst.BaseExpression) -> tuple[str, str] | None:
    """The literal text before and after the variable part of a name built at run time, when there is a variable
    part and some text before it: ``f"encoder_{size}"``, ``"encoder_{}".format(size)``, ``"encoder_%d" % size`` and
    ``"encoder_" + str(size)`` all give ``("encoder_", "")``."""
    prefix = suffix = None
    if isinstance(node, cst.FormattedString):
        parts = node.parts
        if not any(isinstance(part, cst.FormattedStringExpression) for part in parts):
            return None
        prefix = parts[0].value if isinstance(parts[0], cst.FormattedStringText) else ""
        suffix = parts[-1].value if isinstance(parts[-1], cst.FormattedStringText) else ""
    elif isinstance(node, cst.Call) and m.matches(node.func, _FORMAT_METHOD):
        text = node.func.value.evaluated_value
        if isinstance(text, str) and "{" in text:
            prefix, suffix = text[:text.index("{")], text[text.rindex("}") + 1:]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.left, cst.SimpleString):
        text = node.left.evaluated_value
        if isinstance(text, str) and isinstance(node.operator, cst.Modulo):
            pieces = _PERCENT_CONVERSION.split(text)
            if len(pieces) > 1:
                prefix, suffix = pieces[0], pieces[-1]
        elif isinstance(text, str) and isinstance(node.operator, cst.Add) and not isinstance(
                node.right, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            prefix, suffix = text, ""
    if not prefix or "{" in prefix or "%" in prefix:
        return None
    return prefix, suffix or ""


def parameters_frozen_by(loop: cst.For) -> cst.BaseExpression | None:
    """``model`` in ``for p in model.parameters(): p.requires_grad = False`` (or ``p.requires_grad_(False)``), which
    is ``model.requires_grad_(False)`` written out: the body sets it on every parameter, unconditionally. (Plain
    checks, not matchers: this runs for every ``for`` loop.)"""
    call = loop.iter
    if not (isinstance(loop.target, cst.Name) and isinstance(call, cst.Call) and not call.args
            and isinstance(call.func, cst.Attribute) and call.func.attr.value == "parameters"):
        return None
    if isinstance(loop.body, cst.SimpleStatementSuite):
        statements: list[cst.BaseSmallStatement] = list(loop.body.body)
    else:
        statements = [small for line in loop.body.body if isinstance(line, cst.SimpleStatementLine)
                      for small in line.body]
    for statement in statements:
        if (isinstance(statement, cst.Assign) and len(statement.targets) == 1
                and isinstance(statement.value, cst.Name) and statement.value.value == "False"):
            target = statement.targets[0].target  # ``p.requires_grad = False``
            if (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"
                    and isinstance(target.value, cst.Name) and target.value.value == loop.target.value):
                return call.func.value
        elif isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
            freeze = statement.value  # ``p.requires_grad_(False)``
            if (isinstance(freeze.func, cst.Attribute) and freeze.func.attr.value == "requires_grad_"
                    and isinstance(freeze.func.value, cst.Name) and freeze.func.value.value == loop.target.value
                    and len(freeze.args) == 1 and isinstance(freeze.args[0].value, cst.Name)
                    and freeze.args[0].value.value == "False"):
                return call.func.value
    return None


def names_a_dtype(node: cst.BaseExpression) -> bool:
    """``x.to(dtype)``, ``x.to(self.dtype)``, ``x.to(get_default_dtype())``: taken for a dtype, not a device."""
    return "dtype" in last_name(node)


def names_a_device(node: cst.BaseExpression) -> bool:
    """``x.to(device)``, ``x.to(args.device)``, ``x.to(dev)``: taken for a device, not a dtype."""
    name = last_name(node)
    return "device" in name or name in ("dev", "gpu", "cuda", "accelerator", "rank", "local_rank")


def ends_abruptly(suite: cst.BaseSuite) -> bool:
    """Whether running ``suite`` never reaches its end: its last statement returns, raises, breaks or continues
    (or is an ``if`` whose every branch does)."""
    if isinstance(suite, cst.IndentedBlock):
        if not suite.body:
            return False
        last = suite.body[-1]
    else:
        last = suite
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return bool(last.body) and isinstance(last.body[-1], _EXITS)
    if isinstance(last, cst.If):
        branch: cst.If | cst.Else | None = last
        while isinstance(branch, cst.If):
            if not ends_abruptly(branch.body):
                return False
            branch = branch.orelse
        return branch is not None and ends_abruptly(branch.body)
    return False


_EXITS = (cst.Return, cst.Raise, cst.Break, cst.Continue)


def exits(statement: cst.CSTNode) -> bool:
    """Whether a statement line ends in ``return``, ``raise``, ``break`` or ``continue``: what follows it in its block
    cannot run."""
    return type(statement) is cst.SimpleStatementLine and isinstance(statement.body[-1], _EXITS)


def reads_before_binding(loop: cst.For | cst.While, names: set[str]) -> bool:
    """Whether a loop's body may read one of ``names`` before binding it in the same iteration: it mentions the
    name before a top-level assignment (or the loop's target) binds it (``x = f(batch)`` as the body's first use
    of ``x`` binds it first; a mention inside an ``if`` or a nested loop counts as a read). Over-approximated on
    purpose: a name taken as read only costs a second read of the body. The body is walked only until each name
    is settled."""
    pending = set(names)
    if isinstance(loop, cst.For) and _mentions_before_binding(loop.target, pending):
        return True
    body = loop.body
    for statement in body.body if isinstance(body, cst.IndentedBlock) else (body,):
        if not pending:
            return False
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            if _mentions(statement, pending):
                return True
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                if _mentions(small.value, pending) or any(
                        _mentions_before_binding(target.target, pending) for target in small.targets):
                    return True
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                if (_mentions(small.value, pending) or _mentions(small.annotation, pending)
                        or _mentions_before_binding(small.target, pending)):
                    return True
            elif _mentions(small, pending):
                return True
    return False


def _mentions_before_binding(target: cst.BaseExpression, pending: set[str]) -> bool:
    """Bind an assignment's target: its names are settled (no longer pending); ``a[i] = ...`` and ``a.b = ...``
    read ``a``."""
    if isinstance(target, cst.Name):
        pending.discard(target.value)
        return False
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_mentions_before_binding(element.value, pending) for element in target.elements)
    return _mentions(target, pending)


def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
    """Whether an identifier under ``node`` is one of ``names`` (an attribute's own name aside: ``a.b`` mentions
    ``a``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            if current.value in names:
                return True
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        else:
            _push_children(stack, current)
    return False


def binds_name(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is assigned anywhere under ``node`` (``=``, ``+=``, a ``for`` or ``with`` target, ``:=``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        targets: list[cst.CSTNode] = []
        if isinstance(current, cst.Assign):
            targets = [target.target for target in current.targets]
        elif isinstance(current, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor)):
            targets = [current.target]
        elif isinstance(current, cst.WithItem) and current.asname is not None:
            targets = [current.asname.name]
        if any(name in _target_names(target) for target in targets):
            return True
        _push_children(stack, current)
    return False


def _target_names(target: cst.CSTNode) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {found for element in target.elements for found in _target_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


def identifiers_in(node: cst.CSTNode) -> set[str]:
    """Every identifier under ``node``, attributes' own names too (``self.register_buffer`` gives ``self`` and
    ``register_buffer``)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        else:
            _push_children(stack, current)
    return found


def subscripted_name(node: cst.BaseExpression) -> str | None:
    """``batch`` in ``batch[key]`` (a name subscripted with one index), or None."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 and (
            isinstance(node.slice[0].slice, cst.Index)):
        return node.value.value
    return None


def runs_over_its_keys(loop: cst.For) -> bool:
    """``for key in batch: batch[key] = ...``: a loop whose body indexes what it runs over with its own item runs
    over a mapping's keys (the fields of one record, ``observation``, ``reward``...), not over many alike items."""
    if not (isinstance(loop.iter, cst.Name) and isinstance(loop.target, cst.Name)):
        return False
    container, key = loop.iter.value, loop.target.value
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if subscripted_name(node) == container:
            index = node.slice[0].slice.value  # type: ignore[attr-defined]
            if isinstance(index, cst.Name) and index.value == key:
                return True
        _push_children(stack, node)
    return False


def children_of(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` less its trivia (whitespace, commas, parentheses), in order, at a fraction of the cost:
    LibCST makes ``children`` by visiting every field."""
    found: list[cst.CSTNode] = []
    _push_children(found, node)
    return found


def _push_children(stack: list[cst.CSTNode], node: cst.CSTNode) -> None:
    """Push the child nodes of ``node`` (its expression and statement fields only, as ``child_fields`` says)."""
    for field in child_fields(type(node)):
        child = getattr(node, field)
        if isinstance(child, cst.CSTNode):
            stack.append(child)
        elif isinstance(child, (list, tuple)):
            stack.extend(item for item in child if isinstance(item, cst.CSTNode))


def moves_a_parameter(function: cst.FunctionDef, parameters: list[str], moves: frozenset[str]) -> bool:
    """Whether ``function`` calls one of the methods ``moves`` on a parameter itself (``model.cuda()``) or on each
    item of one (``[x.to(device) for x in args]``): not on what it computes (``model(x).cpu()``)."""
    moved = set(parameters)
    for loop in m.findall(function, m.For() | m.CompFor()):
        if isinstance(loop.target, cst.Name) and isinstance(loop.iter, cst.Name) and loop.iter.value in parameters:
            moved.add(loop.target.value)
    return bool(m.findall(function, m.Call(func=m.Attribute(
        value=m.Name(value=m.MatchIfTrue(moved.__contains__)), attr=m.Name(value=m.MatchIfTrue(moves.__contains__))))))


def asserted_flags(test: cst.BaseExpression) -> Iterator[tuple[str, bool]]:
    """The attribute flags an ``assert`` holds true or false after it: ``assert not config.deep_fusion and n == 1``
    gives ``("config.deep_fusion", False)``. Plain names are left out: a function rebinds its names far more often
    than a configuration's attributes."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from asserted_flags(test.left)
        yield from asserted_flags(test.right)
        return
    holds = True
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, holds = test.expression, False
    if isinstance(test, cst.Attribute) and (flag := dotted_name(test)) is not None:
        yield flag, holds
