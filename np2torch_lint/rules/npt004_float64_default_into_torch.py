"""NPT004: NumPy's default float64 carried into torch with no dtype decision.

``np.random.rand``, ``np.zeros``, ``np.linspace``, float literals... give float64 arrays; ``from_numpy``,
``as_tensor`` and ``tensor`` keep that dtype, and a float64 tensor later meets float32 weights
(``RuntimeError: mat1 and mat2 must have the same dtype``) or silently doubles memory and time.
Docs: ``docs/rules/NPT004.md``.
"""

from __future__ import annotations

from typing import Iterator

from ..diagnostics import Finding
from ..inference import Facts

CODE = "NPT004"
NAME = "float64-default-into-torch"
SUMMARY = "NumPy's default float64 becomes a float64 tensor with no dtype decision"


def check(facts: Facts) -> Iterator[Finding]:
    if facts.sets_default_dtype:
        return  # a file that sets torch's default dtype may well want float64
    for conversion in facts.float64_conversions:
        if conversion not in facts.dtype_decided:
            yield Finding(CODE, conversion, "this float64 comes from NumPy's default, so the tensor is float64: "
                                            "pass dtype=torch.float32 or call .float() (or spell float64 out)")
