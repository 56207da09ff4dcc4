"""Array layout: which ndarrays may have a negative stride or be read-only (what NPT008 reads).

torch rejects an array with a negative stride (``a[::-1]``, ``np.flip``) and shares a read-only one as a writable
tensor. Both facts live on ``Value`` (``negative_strides``, ``read_only``) and change only here: after a NumPy
call or method, and after a subscript. The tables are in ``known_apis``; anything they do not name gives
"unknown", so only a flip, a read-only view or a memmap opened "r" that the code spells out leads to a finding.
"""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .syntax import int_literal
from .values import Kind, Value, bool_literal

Layout = tuple[bool | None, bool | None]  # (negative_strides, read_only)
_UNKNOWN_LAYOUT: Layout = (None, None)
_FRESH: Layout = (False, False)


class ArrayLayoutMixin:
    """Negative strides and the writeable flag through NumPy calls, methods and subscripts."""

    def _numpy_call_layout(self, node: cst.Call, qualname: str, args: Args, result: Value) -> Value:
        """``result`` of ``qualname(...)`` with what is known of its strides and writeable flag."""
        first = args.first
        source = first if first is not None and first.kind is Kind.NDARRAY else None
        kept: Layout = (source.negative_strides, source.read_only) if source is not None else (
            self._array_interface_layout(first))
        layout = _UNKNOWN_LAYOUT
        if qualname in api.NUMPY_FLIPS:
            k = _argument_node(node, 1, "k")
            quarter_turns = 1 if k is None else int_literal(k)
            if qualname == "numpy.rot90" and quarter_turns is not None and quarter_turns % 4 == 0:
                layout = kept
            else:  # a second flip of the same axis would undo the first: then it is unknown
                layout = (None if kept[0] else True, kept[1])
        elif qualname in api.NUMPY_LAYOUT_KEEPING:
            converts = qualname in ("numpy.asarray", "numpy.asanyarray") and (len(args.positional) > 1 or args.keywords)
            layout = _UNKNOWN_LAYOUT if converts else kept  # np.asarray(a, dtype) may copy
        elif qualname in api.NUMPY_COPYING:
            if "copy" not in args.keywords:
                layout = _FRESH
            elif qualname == "numpy.array" and len(args.positional) == 1 and set(args.keywords) == {"copy"}:
                # ``copy=False`` (NumPy 2 raises if a copy is needed, NumPy 1 copies then) or ``copy=None``: with
                # no dtype asked for, no copy is needed, so it is the argument's own array
                layout = kept if _no_copy(args.keywords["copy"]) else _UNKNOWN_LAYOUT
            else:
                layout = _UNKNOWN_LAYOUT
        elif qualname in api.NUMPY_CONTIGUOUS:  # an array that is contiguous already comes back as it is
            layout = (False, False if kept[1] is False else None)
        elif qualname in api.NUMPY_READ_ONLY_VIEWS:
            layout = (kept[0], True)
        elif qualname == "numpy.frombuffer":
            layout = (False, True if _is_bytes(_argument_node(node, 0, "buffer")) else None)
        elif qualname == "numpy.memmap":
            mode = _string_argument(args, 2, "mode", default="r+")
            layout = (False, None if mode is None else mode == "r")
        elif qualname == "numpy.load":
            mode = _string_argument(args, 1, "mmap_mode", default=None)
            if mode is not None:
                layout = (False, mode == "r")
        return _with_layout(result, layout)

    def _array_interface_layout(self, value: Value | None) -> Layout:
        """The array NumPy takes from a library object without copying: read-only where its ``__array__`` row says
        so (``PIL.Image.Image``: the pixels come as ``bytes``)."""
        if value is None or value.kind is not Kind.INSTANCE or not value.qualname:
            return _UNKNOWN_LAYOUT
        model = self.models.call(value.qualname + ".__array__")
        return (False, True) if model is not None and "read-only" in model.flags else _UNKNOWN_LAYOUT

    def _numpy_method_layout(self, func: cst.Attribute, receiver: Value, method: str, args: Args,
                             result: Value) -> Value:
        """``result`` of ``receiver.method(...)``; ``a.setflags(write=False)`` makes ``a`` itself read-only."""
        if method == "setflags":
            writeable = bool_literal(args.keywords.get("write") or args.first)
            if writeable is not None and isinstance(func.value, cst.Name) and receiver.kind is Kind.NDARRAY:
                self.scope.names[func.value.value] = receiver.but(read_only=not writeable)
            return result
        kept: Layout = (receiver.negative_strides, receiver.read_only) if (
            receiver.kind is Kind.NDARRAY) else _UNKNOWN_LAYOUT
        if method in api.NUMPY_COPYING_METHODS:
            layout = _FRESH if "copy" not in args.keywords else _UNKNOWN_LAYOUT
        elif method in api.NUMPY_LAYOUT_KEEPING_METHODS or (method == "view" and not args.positional
                                                            and not args.keywords):
            layout = kept
        else:
            layout = _UNKNOWN_LAYOUT
        return _with_layout(result, layout)


def subscript_layout(node: cst.Subscript, base: Value, index_values: list[Value]) -> Layout:
    """``base[...]``: a negative step flips an axis; slices, integers, ``...`` and ``None`` are views."""
    if base.kind is not Kind.NDARRAY:
        return _UNKNOWN_LAYOUT
    flips = drops_an_axis = False
    indices = iter(index_values)
    for element in node.slice:
        part = element.slice
        if isinstance(part, cst.Slice):
            if part.step is not None:
                step = int_literal(part.step)
                if step is None:
                    return _UNKNOWN_LAYOUT  # a step only known at run time
                flips = flips or step < 0
            continue
        index = next(indices)
        if index.kind is Kind.NUMBER and index.dtype == "int":
            drops_an_axis = True
        elif not (isinstance(part.value, cst.Ellipsis) or index.kind is Kind.NONE):
            return _UNKNOWN_LAYOUT  # maybe an index array or a mask: those copy
    if flips:  # flipping an axis that was flipped already would undo it
        return (None if base.negative_strides else True), base.read_only
    if drops_an_axis:  # the axis dropped may be the one with the negative stride
        return (False if base.negative_strides is False else None), base.read_only
    return base.negative_strides, base.read_only


def _no_copy(copy: Value) -> bool:
    return copy.kind is Kind.NONE or bool_literal(copy) is False


def _with_layout(value: Value, layout: Layout) -> Value:
    if value.kind is not Kind.NDARRAY:
        layout = _UNKNOWN_LAYOUT  # a NumPy scalar has no strides to speak of
    if (value.negative_strides, value.read_only) == layout:
        return value
    return value.but(negative_strides=layout[0], read_only=layout[1])


def _argument_node(node: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
    return positional[position].value if position < len(positional) else None


def _string_argument(args: Args, position: int, keyword: str, default: str | None) -> str | None:
    """A string argument's text: ``default`` when it is not given, None when it is not a literal."""
    value = args.keywords.get(keyword) or (args.positional[position] if position < len(args.positional) else None)
    if value is None:
        return default
    return value.literal if value.kind is Kind.STRING else None


def _is_bytes(node: cst.BaseExpression | None) -> bool:
    """A ``b"..."`` literal (also repeated or joined), ``x.tobytes()`` or ``bytes(...)``: immutable, so an array
    over it is read-only."""
    if isinstance(node, cst.SimpleString):
        return "b" in node.prefix.lower()
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Add)):
        return _is_bytes(node.left) or _is_bytes(node.right)
    if isinstance(node, cst.Call):
        func = node.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "tobytes") or (
            isinstance(func, cst.Name) and func.value == "bytes")
    return False
