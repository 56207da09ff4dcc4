"""NPT002: ``.numpy()`` (or ``np.asarray``/``np.array``) on a tensor that may live on an accelerator.

NumPy arrays live in host memory: ``cuda_tensor.numpy()`` raises ``TypeError: can't convert cuda:0 device type
tensor to numpy``. The fix (safe: on the CPU ``.cpu()`` returns the tensor itself, elsewhere the original raises)
moves the tensor first, or converts with ``np2torch_lint.runtime.to_numpy``. Docs: ``docs/rules/NPT002.md``.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, prepare_for_numpy
from ..analysis import Facts

CODE = "NPT002"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    title = "Convert with to_numpy()" if style is FixStyle.HELPERS else "Move to the CPU before converting to NumPy"
    fix = Fix(Applicability.SAFE, title, _move_to_cpu)
    for conversion in facts.tensor_to_numpy:
        if conversion.tensor.on_accelerator:
            if conversion.via == "numpy":
                message = ".numpy() on a tensor that may be on an accelerator raises TypeError: call .cpu() first"
            else:
                function = "np." + conversion.via.rsplit(".", 1)[1]
                message = (f"{function}() of a tensor that may be on an accelerator raises TypeError: "
                           "move it with .cpu() first")
            yield Finding(CODE, conversion.node, message, fix)


def _move_to_cpu(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return prepare_for_numpy(node, edit, "cpu")
