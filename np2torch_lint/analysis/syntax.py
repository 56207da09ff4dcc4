"""Small questions about LibCST nodes that do not need the analysis: dotted names, literals, child fields."""

from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

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


def names_read_before_bound(loop: cst.For | cst.While) -> frozenset[str]:
    """The names a loop's body may read before binding them in the same iteration: every name it mentions, less
    the loop's target and the names a top-level assignment binds before any mention of them (``x = f(batch)``
    as the body's first use of ``x``). Over-approximated on purpose: a name kept in only costs a second read."""
    seen: set[str] = set()
    bound_first: set[str] = set()
    if isinstance(loop, cst.For):
        _bind_first(loop.target, seen, bound_first)
    body = loop.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    for statement in statements:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            seen.update(names_in(statement))
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign):
                seen.update(names_in(small.value))
                for target in small.targets:
                    _bind_first(target.target, seen, bound_first)
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                seen.update(names_in(small.value))
                seen.update(names_in(small.annotation))
                _bind_first(small.target, seen, bound_first)
            else:
                seen.update(names_in(small))
    return frozenset(seen - bound_first)


def _bind_first(target: cst.BaseExpression, seen: set[str], bound_first: set[str]) -> None:
    if isinstance(target, cst.Name):
        if target.value not in seen:
            bound_first.add(target.value)
        seen.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind_first(element.value, seen, bound_first)
    else:
        seen.update(names_in(target))  # ``a[i] = ...``, ``a.b = ...``: reads ``a``


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """The identifiers under ``node`` (an attribute's own name excluded: ``a.b`` mentions ``a``)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            yield current.value
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        else:
            for field in child_fields(type(current)):
                child = getattr(current, field)
                if isinstance(child, cst.CSTNode):
                    stack.append(child)
                elif isinstance(child, (list, tuple)):
                    stack.extend(item for item in child if isinstance(item, cst.CSTNode))
