"""NPT003: ``torch.tensor(ndarray)`` and legacy ``torch.Tensor(ndarray)``-style constructors copy the array.

``torch.tensor`` always copies; ``torch.from_numpy``/``torch.as_tensor`` share the array's memory (FACTS.md
section 3). The legacy constructors share when the dtype already matches and copy otherwise, so they are only
reported where the dtype is known to differ. Docs: ``docs/rules/NPT003.md``.

Fixes: ``torch.tensor(a)`` -> ``torch.as_tensor(a)`` (inline) or ``from_numpy(a)`` (helpers) is unsafe, since
the tensor then shares memory with the array. A legacy ``torch.FloatTensor(a)`` of an array of another dtype ->
``torch.as_tensor(a, dtype=torch.float32)`` is safe: the dtype change copies either way, so nothing aliases.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, sharing_conversion, with_keyword
from ..analysis import Facts, NumpyToTensor, device_on_accelerator
from ..analysis.values import Kind

CODE = "NPT003"
NAME = "torch-tensor-copies-ndarray"
SUMMARY = "torch.tensor(ndarray) makes a full copy where from_numpy/as_tensor share memory"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        source = conversion.source
        if source.kind is not Kind.NDARRAY or conversion.under_copy_test or source.negative_strides:
            continue  # with a negative stride every constructor raises: NPT008's finding
        if conversion.constructor == "torch.tensor":
            if source.read_only:
                continue  # sharing a read-only array would hand out a writable tensor over it (NPT008)
            if "requires_grad" in conversion.keywords:
                continue  # as_tensor has no requires_grad=: a new leaf tensor is a copy on purpose
            if conversion.dtype is not None and (conversion.dtype == "?" or conversion.dtype != source.dtype):
                continue  # a dtype change copies whichever constructor is used
            if conversion.device is not None and device_on_accelerator(conversion.device) is not False:
                continue  # a copy to the device is needed anyway
            yield Finding(CODE, conversion.node, "torch.tensor() copies the whole array: use torch.as_tensor() "
                                                 "or torch.from_numpy() to share its memory",
                          _sharing_fix(conversion, style), conversion.through)
        elif conversion.legacy_dtype is not None:
            made = conversion.legacy_dtype
            if source.dtype is None or source.dtype == made:
                continue  # same dtype: the legacy constructor shares memory
            # a constructor picked at run time (``Tensor = torch.cuda.FloatTensor if cuda else ...``) has no one
            # device to keep, so no fix; torch.cuda's constructors keep theirs with device="cuda"
            fix = None if len(conversion.node.args) != 1 or conversion.made_on_accelerator is None else _legacy_fix(
                conversion.constructor, made, source.dtype, style, _default_dtype_changed_in(facts),
                conversion.made_on_accelerator)
            yield Finding(CODE, conversion.node,
                          f"{_constructor_name(conversion)}() silently copies this {source.dtype} array into {made}: "
                          f"use torch.as_tensor(array, dtype=torch.{made}) to say so", fix, conversion.through)


def _default_dtype_changed_in(facts: Facts) -> list[str]:
    """Where the program changes torch's default dtype or tensor type: this file, other modules of the project."""
    return (["this file"] if facts.sets_default_dtype else []) + list(facts.default_dtype_changed_in)


def _constructor_name(conversion: NumpyToTensor) -> str:
    if not conversion.alternatives:
        return conversion.constructor
    called = cst.Module([]).code_for_node(conversion.node.func)
    return f"{called} (here {' or '.join(conversion.alternatives)})"


#: legacy constructors whose dtype is torch's default dtype (float32 unless a program changes it)
DEFAULT_DTYPE_CONSTRUCTORS = {"torch.Tensor"}


def _legacy_fix(constructor: str, made: str, source_dtype: str, style: FixStyle, default_changed_in: list[str],
                on_accelerator: bool) -> Fix:
    """``torch.FloatTensor(a)`` -> ``as_tensor(a, dtype=torch.float32)``: safe when it converts exactly as the
    legacy constructor does. Unsafe wherever the program changes torch's default dtype or default tensor type
    (``default_changed_in``: this file or another module of the project; ``torch.Tensor`` then makes another dtype,
    or a CUDA tensor, where the fix makes float32 on the CPU), and in the helpers style where NumPy's cast may
    round or warn differently from torch's (``from_numpy`` casts with NumPy: float64 -> float16 rounds once there,
    twice in torch; float -> int warns on NaN)."""
    title = f"Convert with an explicit dtype=torch.{made}"
    if constructor in DEFAULT_DTYPE_CONSTRUCTORS:
        title += f" (assumes torch's default dtype is {made})"
    if default_changed_in:
        where = ", ".join(default_changed_in[:3]) + (" and others" if len(default_changed_in) > 3 else "")
        title += f" (unsafe: {where} changes torch's default dtype or tensor type)"
    numpy_cast_differs = style is FixStyle.HELPERS and not casts_alike_in_numpy_and_torch(source_dtype, made)
    unsafe = bool(default_changed_in) or numpy_cast_differs
    return Fix(Applicability.UNSAFE if unsafe else Applicability.SAFE, title,
               _explicit_dtype(made, on_accelerator=on_accelerator))


def casts_alike_in_numpy_and_torch(source: str, target: str) -> bool:
    """Whether NumPy's ``astype`` and torch's ``.to`` give the same values (and no warning) for this cast."""
    if target in ("float16", "bfloat16") or source.startswith("complex"):
        return False  # float16 rounding differs (FACTS.md section 10); complex -> real warns in NumPy only
    source_is_float = source.startswith("float")
    target_is_float = target.startswith(("float", "complex"))
    return target_is_float or not source_is_float  # float -> int/bool: NaN and overflow differ, NumPy warns


def _sharing_fix(conversion: NumpyToTensor, style: FixStyle) -> Fix | None:
    node = conversion.node
    positional = [arg for arg in node.args if arg.keyword is None]
    if len(positional) != 1 or positional[0].star or not conversion.keywords <= {"dtype", "device"}:
        return None  # pin_memory= and the like have no as_tensor equivalent
    title = "Share memory with from_numpy()" if style is FixStyle.HELPERS else "Share memory with torch.as_tensor()"
    return Fix(Applicability.UNSAFE, title, _share)


def _share(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return sharing_conversion(node, edit) if isinstance(node, cst.Call) else node


def _explicit_dtype(dtype: str, on_accelerator: bool):
    def build(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
        if not isinstance(node, cst.Call) or len(node.args) != 1:
            return node
        converted = with_keyword(sharing_conversion(node, edit), "dtype", edit.attribute("torch", dtype))
        return with_keyword(converted, "device", cst.SimpleString('"cuda"')) if on_accelerator else converted

    return build
