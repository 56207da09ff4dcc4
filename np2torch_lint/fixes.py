"""The fix styles, the ``Edit`` a fix builds with, and the small node builders the rules' fixes share.

A rule attaches a ``diagnostics.Fix`` to a finding; its ``build(node, edit)`` returns the replacement node,
made from the node as already updated (LibCST's ``updated_node``), never from the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from .fix_style import FixStyle
from .fix_imports import MODULE_NAMES, RUNTIME_ALIASES, Import, NameUses, Spelling

if TYPE_CHECKING:
    from .analysis.facts import ConvertedArguments

#: every runtime helper a fix may write: the names looked for in the file before one is written bare
HELPER_NAMES = ("from_numpy", "stack_to_device", "to_numpy", "to_numpy_async")


@dataclass(slots=True)
class Edit:
    """What one fixing pass knows and collects: the style, how the file spells the names a fix writes (chosen
    so that no other line changes meaning: ``fix_imports``), and the imports to add."""

    style: FixStyle
    spelling: Spelling
    module_node: cst.Module | None = None
    text: str = ""
    imports: set[Import] = field(default_factory=set)
    _uses: NameUses | None = None

    @property
    def uses(self) -> NameUses:
        if self._uses is None:
            assert self.module_node is not None
            candidates = {*HELPER_NAMES, *RUNTIME_ALIASES, *self.spelling.module_names.values()}
            candidates.update(name for names in MODULE_NAMES.values() for name in names)
            self._uses = NameUses(self.module_node, self.text, candidates)
        return self._uses

    def module(self, qualname: str) -> cst.BaseExpression:
        """An expression naming ``torch``/``numpy`` in this file, adding ``import torch``/``numpy as np`` if needed."""
        name, needed = self.spelling.module(qualname, self.uses)
        if needed is not None:
            self.imports.add(needed)
        return cst.Name(name)

    def module_name(self, qualname: str) -> str:
        return self.spelling.module(qualname, self.uses)[0]

    def attribute(self, qualname: str, attribute: str) -> cst.Attribute:
        """``torch.as_tensor`` spelled with this file's name for torch (``th.as_tensor``)."""
        return cst.Attribute(value=self.module(qualname), attr=cst.Name(attribute))

    def helper(self, name: str) -> cst.BaseExpression:
        """A runtime helper: ``to_numpy`` with ``from np2torch_lint.runtime import to_numpy`` where that name is
        free, else ``npt_runtime.to_numpy`` with ``from np2torch_lint import runtime as npt_runtime``."""
        written, needed = self.spelling.helper(name, self.uses)
        self.imports.add(needed)
        owner, _, attribute = written.rpartition(".")
        return cst.Attribute(value=cst.Name(owner), attr=cst.Name(attribute)) if owner else cst.Name(written)


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
    """``node`` with one more keyword argument, written as the existing ones are: on the same line, or, in a call
    laid out one argument per line, on a line of its own at their indentation, keeping a trailing comma and
    leaving each comment beside the argument it was beside."""
    added = keyword(name, value)
    args = list(node.args)
    if not args:
        return node.with_changes(args=[added])
    last = args[-1]
    has_comma = isinstance(last.comma, cst.Comma)
    after_last = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else last.whitespace_after_arg
    if not isinstance(after_last, cst.ParenthesizedWhitespace):  # ``f(a, b)``: the same line
        return node.with_changes(args=_with_commas([*args, added]))
    between = [arg.comma.whitespace_after for arg in args[:-1] if isinstance(arg.comma, cst.Comma)]
    one_per_line = (after_last.first_line.comment is not None or not between
                    or all(isinstance(space, cst.ParenthesizedWhitespace) for space in between))
    if not one_per_line:  # ``f(\n    a, b\n)``: join the last line of arguments
        moved = last.with_changes(comma=cst.Comma(
            whitespace_before=last.comma.whitespace_before if isinstance(last.comma, cst.Comma)
            else cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(" ")),
            whitespace_after_arg=last.whitespace_after_arg if has_comma else cst.SimpleWhitespace(""))
        closing_comma = cst.Comma(whitespace_after=after_last) if has_comma else cst.MaybeSentinel.DEFAULT
        return node.with_changes(args=[*args[:-1], moved, added.with_changes(
            comma=closing_comma, whitespace_after_arg=cst.SimpleWhitespace("") if has_comma else after_last)])
    indent = _argument_line(node, after_last)
    # the last argument keeps its own comment line; the new one takes the line break before ``)``
    own_line = after_last.with_changes(empty_lines=[], indent=indent.indent, last_line=indent.last_line)
    closing = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=after_last.empty_lines,
                                          indent=after_last.indent, last_line=after_last.last_line)
    moved = last.with_changes(
        comma=cst.Comma(whitespace_before=last.comma.whitespace_before if isinstance(last.comma, cst.Comma)
                        else cst.SimpleWhitespace(""), whitespace_after=own_line),
        whitespace_after_arg=last.whitespace_after_arg if has_comma else cst.SimpleWhitespace(""))
    added = added.with_changes(comma=cst.Comma(whitespace_after=closing) if has_comma else cst.MaybeSentinel.DEFAULT,
                               whitespace_after_arg=cst.SimpleWhitespace("") if has_comma else closing)
    return node.with_changes(args=[*args[:-1], moved, added])


def _argument_line(node: cst.Call, after_last: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """The line break an argument line of ``node`` starts with: the one after ``(`` or between arguments."""
    candidates = [node.whitespace_before_args] + [
        arg.comma.whitespace_after for arg in node.args[:-1] if isinstance(arg.comma, cst.Comma)]
    for space in reversed(candidates):
        if isinstance(space, cst.ParenthesizedWhitespace):
            return space
    # ``f(a  # note\n)``: one level in from the closing bracket
    return after_last.with_changes(last_line=cst.SimpleWhitespace(after_last.last_line.value + "    "))


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


def prepare_for_numpy(node: cst.CSTNode, edit: Edit, method: str,
                      arguments: ConvertedArguments = ()) -> cst.CSTNode:
    """``t.numpy()`` -> ``t.<method>().numpy()`` (inline) or ``to_numpy(t)`` (helpers); a NumPy function's tensor
    arguments at ``arguments`` ((argument, item) positions: a position or a keyword's name, then None for the argument
    itself or an item of a list or tuple display) likewise get
    ``.<method>()`` or become ``to_numpy(t)``, and ``np.asarray(t)``/``np.array(t)`` become ``to_numpy(t)``."""
    if not isinstance(node, cst.Call):
        return node
    name = _called_name(node)
    if name == "numpy" and isinstance(node.func, cst.Attribute):
        receiver = node.func.value
        keeps_comments = _is_simple(node.func.dot.whitespace_before) and _is_simple(node.func.dot.whitespace_after)
        # to_numpy takes no force=: only the default (False) goes, any other argument keeps the plain idiom
        if edit.style is FixStyle.HELPERS and keeps_comments and all(_is_default_force(arg) for arg in node.args):
            return node.with_changes(func=edit.helper("to_numpy"),  # an argument needs no parentheses of its own
                                     args=[cst.Arg(unparenthesized(_without_host_copy(receiver)))])
        moved = method_call(receiver, method)
        return node.with_changes(func=node.func.with_changes(value=moved))
    if (name in ("asarray", "asanyarray", "array") and arguments == ((0, None),) and edit.style is FixStyle.HELPERS
            and len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star):
        # np.array copies; np.asarray shares when it can, as to_numpy does
        copy = [keyword("copy", cst.Name("True"))] if name == "array" else []
        return call(edit.helper("to_numpy"), cst.Arg(_without_host_copy(node.args[0].value)), *copy).with_changes(
            lpar=node.lpar, rpar=node.rpar)
    positional = [index for index, arg in enumerate(node.args) if not arg.keyword and not arg.star]
    by_keyword = {arg.keyword.value: index for index, arg in enumerate(node.args) if arg.keyword}
    args = list(node.args)
    for position, item in arguments:
        index = by_keyword.get(position) if isinstance(position, str) else (
            positional[position] if position < len(positional) else None)
        if index is None:
            return node  # the call is not the one the analysis read: leave it
        value = args[index].value
        if item is None:
            value = _ready_for_numpy(value, edit, method)
        elif isinstance(value, (cst.List, cst.Tuple)) and item < len(value.elements):
            elements = list(value.elements)
            elements[item] = elements[item].with_changes(value=_ready_for_numpy(elements[item].value, edit, method))
            value = value.with_changes(elements=elements)
        else:
            return node
        args[index] = args[index].with_changes(value=value)
    return node.with_changes(args=args)


#: how messages spell the modules of the functions that convert tensors with NumPy, by their usual alias
_USUAL_ALIASES = {"numpy.": "np.", "matplotlib.pyplot.": "plt.", "matplotlib.axes.Axes.": "ax.",
                  "sklearn.metrics.": "metrics.", "scipy.ndimage.": "ndimage.",
                  "scipy.misc.": "misc."}


def numpy_function(qualname: str) -> str:
    """How a message names a function that converts with NumPy: ``np.linalg.norm`` for ``numpy.linalg.norm``,
    ``plt.plot`` for ``matplotlib.pyplot.plot``."""
    for module, alias in _USUAL_ALIASES.items():
        if qualname.startswith(module):
            return alias + qualname.removeprefix(module)
    return qualname


def _ready_for_numpy(tensor: cst.BaseExpression, edit: Edit, method: str) -> cst.BaseExpression:
    """A tensor expression NumPy may convert: ``to_numpy(t)`` (helpers) or ``t.<method>()`` (inline)."""
    if edit.style is FixStyle.HELPERS:
        return call(edit.helper("to_numpy"), cst.Arg(unparenthesized(_without_host_copy(tensor))))
    return method_call(tensor, method)


def _is_default_force(arg: cst.Arg) -> bool:
    """``False`` or ``force=False`` given to ``Tensor.numpy``: what it does without it."""
    return (not arg.star and (arg.keyword is None or arg.keyword.value == "force")
            and isinstance(arg.value, cst.Name) and arg.value.value == "False")


def _without_host_copy(tensor: cst.BaseExpression) -> cst.BaseExpression:
    """``to_numpy(t.cpu())`` is ``to_numpy(t)``: on the CPU ``.cpu()`` is the tensor itself; elsewhere both copy
    to a fresh array of the same values, which ``to_numpy`` does itself. The finding says the receiver of each
    ``.cpu()`` is a tensor (the analysis types ``x.cpu()`` as one only then). Only a bare ``.cpu()`` goes
    (``.to("cpu", non_blocking=True)`` means something else), and only where no comment or line break sits."""
    while (isinstance(tensor, cst.Call) and not tensor.args and not tensor.lpar
           and isinstance(tensor.func, cst.Attribute) and tensor.func.attr.value == "cpu"
           and all(_is_simple(space) for space in (tensor.func.dot.whitespace_before, tensor.func.dot.whitespace_after,
                                                   tensor.whitespace_after_func, tensor.whitespace_before_args))):
        tensor = tensor.func.value
    return tensor


#: a tensor method that converts to a dtype returns the tensor itself when it already has it
DTYPE_METHODS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                 "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool"}


def without_redundant_cast(target: cst.CSTNode, replacement: cst.CSTNode, parent: cst.CSTNode | None,
                           grandparent: cst.CSTNode | None, edit: Edit) -> cst.CSTNode | None:
    """``from_numpy(a, dtype=torch.float32).float()`` -> ``from_numpy(a, dtype=torch.float32)``: what replaces
    ``grandparent`` (the ``.float()`` call on the fixed ``target``), or None when there is nothing to fold.
    Folded only where the replacement asks for the method's dtype with this file's own ``torch``."""
    if not (isinstance(grandparent, cst.Call) and not grandparent.args and isinstance(parent, cst.Attribute)
            and grandparent.func is parent and parent.value is target and isinstance(replacement, cst.Call)
            and not replacement.lpar):
        return None
    dtype = DTYPE_METHODS.get(parent.attr.value)
    asked = next((arg.value for arg in replacement.args if arg.keyword and arg.keyword.value == "dtype"), None)
    if (dtype is None or not isinstance(asked, cst.Attribute) or asked.attr.value != dtype
            or not isinstance(asked.value, cst.Name) or asked.value.value != edit.module_name("torch")):
        return None
    spaces = (parent.dot.whitespace_before, parent.dot.whitespace_after, grandparent.whitespace_after_func,
              grandparent.whitespace_before_args)
    if not all(_is_simple(space) for space in spaces):
        return None
    return replacement.with_changes(lpar=grandparent.lpar, rpar=grandparent.rpar)


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
    """``th.tensor(...)`` -> ``th.as_tensor(...)``: the same module spelling, another function. A call through a
    submodule (``torch.cuda.FloatTensor``, where ``torch.cuda.as_tensor`` does not exist) or an imported name is
    spelled with the file's name for the module."""
    if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
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
