"""NPT002: ``.numpy()`` (or a NumPy function: ``np.asarray``, ``np.isnan``, ``np.vstack(tensors)``) on a tensor
that may live on an accelerator.

NumPy arrays live in host memory: ``cuda_tensor.numpy()`` raises ``TypeError: can't convert cuda:0 device type
tensor to numpy``. The fix (safe: on the CPU ``.cpu()`` returns the tensor itself, elsewhere the original raises)
moves the tensor first, or converts with ``np2torch_lint.runtime.to_numpy``. Docs: ``docs/rules/NPT002.md``.
"""

from __future__ import annotations

import functools
from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, numpy_function, prepare_for_numpy
from ..analysis import Facts
from ..analysis.facts import WRITTEN_INTO_ARRAY, ConvertedArguments

CODE = "NPT002"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    title = "Convert with to_numpy()" if style is FixStyle.HELPERS else "Move to the CPU before converting to NumPy"
    for conversion in facts.tensor_to_numpy:
        if conversion.tensor.on_accelerator:
            if conversion.via == "numpy":
                message = ".numpy() on a tensor that may be on an accelerator raises TypeError: call .cpu() first"
            elif conversion.via == WRITTEN_INTO_ARRAY:
                message = ("writing a tensor that may be on an accelerator into a NumPy array raises TypeError: "
                           "move it with .cpu() first")
            elif conversion.in_sequence:
                message = (f"{numpy_function(conversion.via)}() of a list holding a tensor that may be on an "
                           "accelerator raises TypeError: move each tensor to the CPU with .cpu() first")
            else:
                message = (f"{numpy_function(conversion.via)}() of a tensor that may be on an accelerator raises "
                           "TypeError: move it with .cpu() first")
            fix = None
            if conversion.via == "numpy" or conversion.arguments:
                fix = Fix(Applicability.SAFE, title, functools.partial(_move_to_cpu, arguments=conversion.arguments))
            yield Finding(CODE, conversion.node, message, fix, conversion.through)


def _move_to_cpu(node: cst.CSTNode, edit: Edit, arguments: ConvertedArguments = ()) -> cst.CSTNode:
    return prepare_for_numpy(node, edit, "cpu", arguments)
