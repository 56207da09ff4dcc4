"""NPT008: an ndarray with a negative stride (or a read-only one) handed to torch.

``torch.from_numpy``, ``torch.as_tensor``, ``torch.tensor``, ``torch.asarray`` and the legacy constructors raise
``ValueError: At least one stride in the given numpy array is negative`` for ``a[::-1]``, ``img[..., ::-1]``,
``np.flip``, ``np.flipud``/``np.fliplr`` and ``np.rot90``. A read-only array (``np.broadcast_to``,
``np.frombuffer`` of bytes, a memmap opened "r") is shared as a *writable* tensor, with a warning printed once per
process. Docs: ``docs/rules/NPT008.md``.

Fixes: negative strides (safe: the original raises): ``np.ascontiguousarray(a)`` (inline) or the runtime's
``from_numpy(a)``, which copies such arrays. Read-only (unsafe: the tensor no longer shares the array's memory,
which for a large memmap means reading it all): ``a.copy()`` (inline) or the runtime's ``from_numpy(a)``.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..analysis import Facts, NumpyToTensor, device_on_accelerator
from ..analysis.values import Kind
from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, method_call, sharing_conversion, wrapped_argument
from ._wording import constructor_name

CODE = "NPT008"

_CONVERSIONS = {"torch.from_numpy", "torch.as_tensor", "torch.tensor", "torch.asarray"}
_SHARING = {"torch.from_numpy", "torch.as_tensor", "torch.asarray"}


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        source = conversion.source
        legacy = conversion.legacy_dtype is not None or bool(conversion.alternatives)
        if source.kind is not Kind.NDARRAY or not (conversion.constructor in _CONVERSIONS or legacy):
            continue
        name = constructor_name(conversion)
        if source.negative_strides:
            yield Finding(CODE, conversion.node, f"{name}() raises ValueError for an array with a negative stride "
                                                 "(a[::-1], np.flip): make it contiguous with np.ascontiguousarray()",
                          _fix(conversion, style, Applicability.SAFE, legacy), conversion.through)
        elif source.read_only and not legacy and _shares(conversion):
            yield Finding(CODE, conversion.node, f"{name}() of a read-only array gives a writable tensor over its "
                                                 "memory (torch warns once; writing through it is undefined "
                                                 "behaviour): copy the array first",
                          _fix(conversion, style, Applicability.UNSAFE, legacy), conversion.through)


def _shares(conversion: NumpyToTensor) -> bool:
    """Whether the tensor aliases the array: a dtype change, a device or ``copy=True`` copies instead."""
    if conversion.constructor not in _SHARING or "copy" in conversion.keywords:
        return False
    if conversion.dtype is not None and conversion.dtype != conversion.source.dtype:
        return False
    return conversion.device is None or device_on_accelerator(conversion.device) is False


def _fix(conversion: NumpyToTensor, style: FixStyle, applicability: Applicability, legacy: bool) -> Fix | None:
    node = conversion.node
    if not node.args or node.args[0].keyword is not None or any(arg.star for arg in node.args):
        return None
    positional = [arg for arg in node.args if arg.keyword is None]
    if (style is FixStyle.HELPERS and len(positional) == 1 and conversion.keywords <= {"dtype", "device"}
            and not legacy):
        return Fix(applicability, "Convert with from_numpy(), which copies such arrays", _runtime_from_numpy)
    if conversion.source.negative_strides:
        return Fix(applicability, "Make the array contiguous with np.ascontiguousarray()", _contiguous)
    return Fix(applicability, "Copy the array first", _copied)


def _runtime_from_numpy(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return sharing_conversion(node, edit) if isinstance(node, cst.Call) else node


def _contiguous(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return wrapped_argument(node, edit.attribute("numpy", "ascontiguousarray")) if isinstance(node, cst.Call) else node


def _copied(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    if not isinstance(node, cst.Call):
        return node
    first = node.args[0]
    return node.with_changes(args=[first.with_changes(value=method_call(first.value, "copy")), *node.args[1:]])
