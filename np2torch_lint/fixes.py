"""The fix styles, the ``Edit`` a fix builds with, and the small node builders the rules' fixes share.

A rule attaches a ``diagnostics.Fix`` to a finding; its ``build(node, edit)`` returns the replacement node,
made from the node as already updated (LibCST's ``updated_node``), never from the original.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import libcst as cst

RUNTIME_MODULE = "np2torch_lint.runtime"


class FixStyle(enum.Enum):
    HELPERS = "helpers"  # rewrite to np2torch_lint.runtime's helpers
    INLINE = "inline"  # the plain torch idiom, no new dependency


@dataclass(slots=True)
class Edit:
    """What one fixing pass knows and collects: the style, the file's names for torch and numpy, new imports."""

    style: FixStyle
    #: the names this file binds to the modules, e.g. {"torch": "th", "numpy": "np"}
    module_names: dict[str, str]
    #: (module, name or None, asname or None) to add with LibCST's AddImportsVisitor
    imports: set[tuple[str, str | None, str | None]] = field(default_factory=set)

    def module(self, qualname: str) -> cst.BaseExpression:
        """An expression naming ``torch``/``numpy`` in this file, adding ``import torch``/``numpy as np`` if needed."""
        name = self.module_names.get(qualname)
        if name is None:
            name = {"numpy": "np"}.get(qualname, qualname)
            self.imports.add((qualname, None, name if name != qualname else None))
            self.module_names[qualname] = name
        return cst.parse_expression(name)

    def attribute(self, qualname: str, attribute: str) -> cst.Attribute:
        """``torch.as_tensor`` spelled with this file's name for torch (``th.as_tensor``)."""
        return cst.Attribute(value=self.module(qualname), attr=cst.Name(attribute))

    def helper(self, name: str) -> cst.Name:
        """A runtime helper by name, imported once with ``from np2torch_lint.runtime import name``."""
        self.imports.add((RUNTIME_MODULE, name, None))
        return cst.Name(name)


def parenthesized(expression: cst.BaseExpression) -> cst.BaseExpression:
    """``expression`` ready to take ``.method()``: atoms stay as they are, anything else gets parentheses."""
    if isinstance(expression, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expression.lpar:
        return expression
    return expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def unparenthesized(expression: cst.BaseExpression) -> cst.BaseExpression:
    return expression.with_changes(lpar=[], rpar=[]) if len(expression.lpar) == 1 else expression


def method_call(receiver: cst.BaseExpression, method: str) -> cst.Call:
    """``receiver.method()``."""
    return cst.Call(func=cst.Attribute(value=parenthesized(receiver), attr=cst.Name(method)))


def call(func: cst.BaseExpression, *args: cst.Arg) -> cst.Call:
    return cst.Call(func=func, args=_with_commas(list(args)))


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def with_keyword(node: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """``node`` with one more keyword argument, keeping how the existing ones are written."""
    return node.with_changes(args=_with_commas([*node.args, keyword(name, value)]))


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Every argument but the last ends with ``, `` (keeping commas the code already had)."""
    fixed = []
    for index, arg in enumerate(args):
        is_last = index == len(args) - 1
        if not is_last and arg.comma is cst.MaybeSentinel.DEFAULT:
            arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif is_last and not isinstance(arg.comma, cst.Comma):
            arg = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        fixed.append(arg)
    return fixed


# --- shared by NPT001 and NPT002: make a tensor safe to hand to NumPy ---------------------------------------


def _called_name(node: cst.Call) -> str | None:
    func = node.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def prepare_for_numpy(node: cst.CSTNode, edit: Edit, method: str) -> cst.CSTNode:
    """``t.numpy()`` -> ``t.<method>().numpy()`` (inline) or ``to_numpy(t)`` (helpers); likewise for
    ``np.asarray(t)``/``np.array(t)``, whose tensor argument gets ``.<method>()`` or becomes ``to_numpy(t)``."""
    if not isinstance(node, cst.Call):
        return node
    name = _called_name(node)
    if name == "numpy" and isinstance(node.func, cst.Attribute):
        receiver = node.func.value
        keeps_comments = _is_simple(node.func.dot.whitespace_before) and _is_simple(node.func.dot.whitespace_after)
        if edit.style is FixStyle.HELPERS and keeps_comments:  # an argument needs no parentheses of its own
            return node.with_changes(func=edit.helper("to_numpy"), args=[cst.Arg(unparenthesized(receiver))])
        moved = method_call(receiver, method)
        return node.with_changes(func=node.func.with_changes(value=moved))
    if name in ("asarray", "asanyarray", "array") and node.args and not node.args[0].keyword:
        tensor = node.args[0].value
        if edit.style is FixStyle.HELPERS:
            if len(node.args) == 1:  # np.array copies; np.asarray shares when it can, as to_numpy does
                copy = [keyword("copy", cst.Name("True"))] if name == "array" else []
                return call(edit.helper("to_numpy"), cst.Arg(tensor), *copy).with_changes(
                    lpar=node.lpar, rpar=node.rpar)
            converted = call(edit.helper("to_numpy"), cst.Arg(tensor))
        else:
            converted = method_call(tensor, method)
        return node.with_changes(args=[node.args[0].with_changes(value=converted), *node.args[1:]])
    return node


def _is_simple(whitespace: cst.BaseParenthesizableWhitespace) -> bool:
    """Plain spaces: dropping them loses no comment or line break (``x  # note\n    .numpy()`` has both)."""
    return isinstance(whitespace, cst.SimpleWhitespace) and "\\" not in whitespace.value


def sharing_conversion(node: cst.Call, edit: Edit) -> cst.Call:
    """``torch.tensor(a, ...)``/``torch.from_numpy(a)`` -> ``from_numpy(a, ...)`` (helpers) or
    ``torch.as_tensor(a, ...)`` (inline): the conversion that shares memory when it can and takes ``dtype=``."""
    if edit.style is FixStyle.HELPERS:
        return node.with_changes(func=edit.helper("from_numpy"))
    return rename_call(node, edit, "torch", "as_tensor")


def rename_call(node: cst.Call, edit: Edit, qualname: str, attribute: str) -> cst.Call:
    """``th.tensor(...)`` -> ``th.as_tensor(...)``: the same module spelling, another function."""
    if isinstance(node.func, cst.Attribute):
        return node.with_changes(func=node.func.with_changes(attr=cst.Name(attribute)))
    return node.with_changes(func=edit.attribute(qualname, attribute))


def without_keyword(node: cst.Call, name: str) -> cst.Call:
    """``node`` without its ``name=`` argument; the argument before it takes over its comma (or its absence)."""
    args = list(node.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            del args[index]
            if index == len(args) and args:  # it was the last: the new last one ends as it did
                args[-1] = args[-1].with_changes(comma=arg.comma)
            return node.with_changes(args=args)
    return node


def wrapped_argument(node: cst.Call, func: cst.BaseExpression) -> cst.Call:
    """``f(x, ...)`` -> ``f(func(x), ...)``: the first positional argument passed through ``func``."""
    first = node.args[0]
    return node.with_changes(args=[first.with_changes(value=call(func, cst.Arg(first.value))), *node.args[1:]])
