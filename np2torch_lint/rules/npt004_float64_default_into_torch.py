"""NPT004: NumPy's default float64 carried into torch with no dtype decision.

``np.random.rand``, ``np.zeros``, ``np.linspace``, float literals... give float64 arrays; ``from_numpy``,
``as_tensor`` and ``tensor`` keep that dtype, and a float64 tensor later meets float32 weights
(``RuntimeError: mat1 and mat2 must have the same dtype``) or silently doubles memory and time.
Docs: ``docs/rules/NPT004.md``.

The fix (unsafe: float64 -> float32 changes precision) asks for float32 while converting, in one pass:
``torch.as_tensor(a, dtype=torch.float32)`` (inline) or ``from_numpy(a, dtype=torch.float32)`` (helpers).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, sharing_conversion, with_keyword
from ..analysis import Facts

CODE = "NPT004"


def reports(facts: Facts, conversion: cst.Call) -> bool:
    """Whether this rule reports ``conversion`` (NPT003 then leaves it alone: the fix makes it a cast)."""
    return _may_report(facts) and conversion in facts.float64_conversions and not _decided(facts, conversion)


def _decided(facts: Facts, conversion: cst.Call) -> bool:
    return conversion in facts.dtype_decided or conversion in facts.dtype_maybe_decided


def _may_report(facts: Facts) -> bool:
    # a program that sets torch's default dtype (here or in another module) may well want float64; a test nearly
    # always does (a reference computed with NumPy or SciPy in float64), and a float32 model it feeds fails the test
    return not (facts.may_want_float64 or facts.in_test_module)


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    if not _may_report(facts):
        return
    title = "Convert to float32 (dtype=torch.float32)"
    add_dtype = Fix(Applicability.UNSAFE, title, _with_float32)
    convert_and_cast = Fix(Applicability.UNSAFE, title, _converted_as_float32)
    for conversion, constructor in facts.float64_conversions.items():
        if not _decided(facts, conversion):
            fix = convert_and_cast if constructor == "torch.from_numpy" else add_dtype
            yield Finding(CODE, conversion, "this float64 comes from NumPy's default, so the tensor is float64: "
                                            "pass dtype=torch.float32 or call .float() (or spell float64 out)",
                          None if any(arg.star for arg in conversion.args) else fix,
                          facts.float64_through.get(conversion))


def _with_float32(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    if not isinstance(node, cst.Call) or any(arg.keyword and arg.keyword.value == "dtype" for arg in node.args):
        return node
    return with_keyword(node, "dtype", edit.attribute("torch", "float32"))


def _converted_as_float32(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    """``torch.from_numpy`` has no ``dtype=``: convert and cast in one pass instead of ``.float()`` after."""
    if not isinstance(node, cst.Call):
        return node
    return _with_float32(sharing_conversion(node, edit), edit)
