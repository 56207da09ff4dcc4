"""NPT006: ``torch.tensor(list_of_ndarrays)``: torch converts the list element by element.

``torch.tensor``, ``torch.as_tensor``, ``torch.asarray`` and the legacy constructors walk a list of arrays as
nested Python sequences, number by number, and warn "Creating a tensor from a list of numpy.ndarrays is extremely
slow"; stacking with NumPy first is one copy. Docs: ``docs/rules/NPT006.md``.

The fix stacks first: ``torch.from_numpy(np.stack(xs))`` (``torch.as_tensor(np.stack(xs), dtype=..., device=...)``
when those are given), or ``stack_to_device(xs, device)`` (helpers, with ``device=``). It is safe for a written-out
list of arrays of one known dtype. It is unsafe otherwise: NumPy promotes mixed dtypes differently
(int64 with float32 gives float64, where torch gives float32), and an empty list, which a comprehension or a
loop may build, gives torch an empty tensor but makes ``np.stack`` raise.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..analysis import Facts, NumpyToTensor
from ..analysis.values import Kind, Value
from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, call, rename_call, wrapped_argument
from ._wording import constructor_name

CODE = "NPT006"

_SHARING = {"torch.tensor", "torch.as_tensor", "torch.asarray"}  # they take dtype= and device=
# dtypes a NumPy cast gives exactly as torch's does (torch rounds float64 -> float16 twice, through float32)
_SAME_CAST_IN_NUMPY = {None, "float32", "float64"}


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        if not (conversion.constructor in _SHARING or _is_legacy(conversion)) or not _is_list_of_arrays(
                conversion.source):
            continue
        name = constructor_name(conversion)
        yield Finding(CODE, conversion.node, f"{name}() of a list of ndarrays converts them element by element "
                                             "(torch warns it is extremely slow): stack them with np.stack() first",
                      _fix(conversion, style), conversion.through)


def _is_legacy(conversion: NumpyToTensor) -> bool:
    """``torch.FloatTensor``, ``torch.cuda.FloatTensor``..., or one of them picked at run time."""
    return conversion.legacy_dtype is not None or bool(conversion.alternatives)


def _is_list_of_arrays(source: Value) -> bool:
    """A list of ndarrays, or a list of such lists (torch walks nested lists the same way)."""
    if source.kind is not Kind.SEQUENCE:
        return False
    if source.items is not None:
        return bool(source.items) and all(_is_array_or_list_of_arrays(item) for item in source.items)
    return source.element is not None and _is_array_or_list_of_arrays(source.element)


def _is_array_or_list_of_arrays(value: Value) -> bool:
    return value.kind is Kind.NDARRAY or _is_list_of_arrays(value)


def _fix(conversion: NumpyToTensor, style: FixStyle) -> Fix | None:
    node = conversion.node
    if not node.args or node.args[0].keyword is not None or node.args[0].star or any(
            arg.star for arg in node.args):
        return None
    source = conversion.source
    dtypes = {item.dtype for item in source.items} if source.items else {source.element.dtype}  # type: ignore
    # a written-out list is never empty; one known dtype is what np.stack and torch both give
    same_result = source.items is not None and len(dtypes) == 1 and None not in dtypes
    applicability = Applicability.SAFE if same_result else Applicability.UNSAFE
    to_device = style is FixStyle.HELPERS and _stacks_to_device(conversion)
    if to_device:
        return Fix(applicability, "Stack on the host and move once with stack_to_device()", _stacked_to_device)
    return Fix(applicability, "Stack with np.stack() first", _stacked_first(
        None if _is_legacy(conversion) else conversion.constructor))


def _stacks_to_device(conversion: NumpyToTensor) -> bool:
    """``torch.tensor(xs, device=d)`` with at most a ``dtype=`` that NumPy casts as torch does."""
    node = conversion.node
    return (conversion.constructor in _SHARING and not _is_legacy(conversion) and conversion.device is not None
            and len(node.args) <= 3
            and all(arg.keyword is not None for arg in node.args[1:]) and conversion.keywords <= {"dtype", "device"}
            and conversion.dtype in _SAME_CAST_IN_NUMPY)


def _stacked_first(constructor: str | None):
    """``torch.tensor(xs)`` -> ``torch.from_numpy(np.stack(xs))``; with ``dtype=``/``device=``, ``torch.as_tensor``
    of the stack; any other constructor (None: a legacy one) or argument stays, given the stack."""

    def build(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
        if not isinstance(node, cst.Call):
            return node
        stacked = wrapped_argument(node, edit.attribute("numpy", "stack"))
        if constructor not in _SHARING:
            return stacked  # a legacy constructor: the stack gives it the same dtype and values
        if len(node.args) == 1:
            return call(edit.attribute("torch", "from_numpy"), stacked.args[0]).with_changes(
                lpar=node.lpar, rpar=node.rpar)
        others = [arg.keyword.value for arg in node.args[1:] if arg.keyword is not None]
        if constructor == "torch.tensor" and set(others) <= {"dtype", "device"} and len(others) == len(node.args) - 1:
            return rename_call(stacked, edit, "torch", "as_tensor")  # no second copy of the stack
        return stacked

    return build


def _stacked_to_device(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    """``torch.tensor(xs, device=d, dtype=t)`` -> ``stack_to_device(xs, d, dtype=t)``."""
    if not isinstance(node, cst.Call):
        return node
    keywords = {arg.keyword.value: arg for arg in node.args[1:] if arg.keyword is not None}
    device = keywords["device"].value
    args = [cst.Arg(node.args[0].value), cst.Arg(device)]
    if "dtype" in keywords:
        args.append(keywords["dtype"].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return call(edit.helper("stack_to_device"), *args).with_changes(lpar=node.lpar, rpar=node.rpar)
