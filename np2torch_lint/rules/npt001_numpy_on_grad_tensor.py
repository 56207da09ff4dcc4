"""NPT001: ``.numpy()`` (or a NumPy function: ``np.asarray``, ``np.exp``, ``np.sum([t, u])``) on a tensor that
may require grad.

``Tensor.numpy()`` raises ``RuntimeError: Can't call numpy() on Tensor that requires grad`` while autograd is on;
``.cpu()`` does not detach. The fix (safe: the original raises, and a detached tensor holds the same values)
detaches first, or converts with ``np2torch_lint.runtime.to_numpy``. Docs: ``docs/rules/NPT001.md``.
"""

from __future__ import annotations

import functools
from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, numpy_function, prepare_for_numpy
from ..analysis import Facts
from ..analysis.facts import WRITTEN_INTO_ARRAY, ConvertedArguments

CODE = "NPT001"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    title = "Convert with to_numpy()" if style is FixStyle.HELPERS else "Detach before converting to NumPy"
    for conversion in facts.tensor_to_numpy:
        # inside no_grad()/inference_mode() the call works (FACTS.md section 1); in an unknown mode, stay quiet
        if conversion.tensor.requires_grad and conversion.grad_enabled is True:
            if conversion.via == "numpy":
                message = ".numpy() on a tensor that may require grad raises RuntimeError: call .detach() first"
            elif conversion.via == WRITTEN_INTO_ARRAY:
                message = ("writing a tensor that may require grad into a NumPy array raises RuntimeError: "
                           ".detach() it first")
            elif conversion.in_sequence:
                message = (f"{numpy_function(conversion.via)}() of a list holding a tensor that may require grad "
                           "raises RuntimeError: .detach() each tensor first")
            else:
                message = (f"{numpy_function(conversion.via)}() of a tensor that may require grad raises "
                           "RuntimeError: pass it .detach()ed")
            fix = None
            if conversion.via == "numpy" or conversion.arguments:
                fix = Fix(Applicability.SAFE, title, functools.partial(_detach, arguments=conversion.arguments))
            yield Finding(CODE, conversion.node, message, fix, conversion.through)


def _detach(node: cst.CSTNode, edit: Edit, arguments: ConvertedArguments = ()) -> cst.CSTNode:
    return prepare_for_numpy(node, edit, "detach", arguments)
