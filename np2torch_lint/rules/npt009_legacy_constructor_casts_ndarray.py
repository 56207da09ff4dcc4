"""NPT009: a legacy constructor (``torch.FloatTensor(a)``, ``torch.Tensor(a)``, ...) given an array of another dtype.

The legacy constructors share an array of their own dtype and cast (so copy) any other, without saying so: the
same line aliases the array in one run and copies it in another (FACTS.md section 3). Off by default: on real code
nearly every instance is a small array cast on purpose (``FloatTensor(np.random.normal(0, 1, (batch, latent)))``),
a readability matter; select it to spell those casts out. Docs: ``docs/rules/NPT009.md``.

Fix: -> ``torch.as_tensor(a, dtype=torch.float32)`` (inline) or ``from_numpy(a, dtype=torch.float32)`` (helpers),
with ``device="cuda"`` for torch.cuda's constructors. Safe where it converts exactly as the legacy constructor does:
the dtype change copies either way, so nothing starts to alias. A constructor picked at run time
(``FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``) has no one device to keep: no fix.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, sharing_conversion, with_keyword
from ..analysis import Facts, NumpyToTensor
from ..analysis.values import Kind
from ._copy_size import copy_size
from ._wording import constructor_name

CODE = "NPT009"

#: legacy constructors whose dtype is torch's default dtype (float32 unless a program changes it)
DEFAULT_DTYPE_CONSTRUCTORS = {"torch.Tensor"}


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        source, made = conversion.source, conversion.legacy_dtype
        if source.kind is not Kind.NDARRAY or conversion.under_copy_test or source.negative_strides:
            continue  # with a negative stride every constructor raises: NPT008's finding
        if made is None or source.dtype is None or source.dtype == made:
            continue  # same dtype: the legacy constructor shares memory
        fix = None if len(conversion.node.args) != 1 or conversion.made_on_accelerator is None else _legacy_fix(
            conversion.constructor, made, source.dtype, style, _default_dtype_changed_in(facts),
            conversion.made_on_accelerator)
        yield Finding(CODE, conversion.node, _message(conversion, made, facts), fix, conversion.through)


def _message(conversion: NumpyToTensor, made: str, facts: Facts) -> str:
    """What the constructor does and how to say so, keeping the device it makes the tensor on."""
    source = conversion.source
    size = copy_size(conversion.node, source.dtype, facts.module_names.get("numpy"))
    copies = f"silently copies this {source.dtype} array ({size}) into {made}" if size else (
        f"silently copies this {source.dtype} array into {made}")
    if conversion.constructor in DEFAULT_DTYPE_CONSTRUCTORS and not conversion.alternatives:
        copies += ", torch's default dtype"
    if conversion.made_on_accelerator is None:  # one of several, picked at run time, on different devices
        called = constructor_name(conversion)
        return (f"{called}, which is {' or '.join(conversion.alternatives)}, {copies}: say so with "
                f"torch.as_tensor(array, dtype=torch.{made}, device=...) on the device {called} stands for, "
                f"or keep {called}")
    device = ', device="cuda"' if conversion.made_on_accelerator else ""
    return f"{constructor_name(conversion)}() {copies}: say so with torch.as_tensor(array, dtype=torch.{made}{device})"


def _default_dtype_changed_in(facts: Facts) -> list[str]:
    """Where the program changes torch's default dtype or tensor type: this file, other modules of the project."""
    return (["this file"] if facts.sets_default_dtype else []) + list(facts.default_dtype_changed_in)


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


def _explicit_dtype(dtype: str, on_accelerator: bool):
    def build(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
        if not isinstance(node, cst.Call) or len(node.args) != 1:
            return node
        converted = with_keyword(sharing_conversion(node, edit), "dtype", edit.attribute("torch", dtype))
        return with_keyword(converted, "device", cst.SimpleString('"cuda"')) if on_accelerator else converted

    return build
