"""NPT002: ``.numpy()`` (or ``np.asarray``/``np.array``) on a tensor that may live on an accelerator.

NumPy arrays live in host memory: ``cuda_tensor.numpy()`` raises ``TypeError: can't convert cuda:0 device type
tensor to numpy``. Docs: ``docs/rules/NPT002.md``.
"""

from __future__ import annotations

from typing import Iterator

from ..diagnostics import Finding
from ..inference import Facts

CODE = "NPT002"
NAME = "numpy-on-accelerator-tensor"
SUMMARY = "tensor that may be on an accelerator converted to NumPy without .cpu()"


def check(facts: Facts) -> Iterator[Finding]:
    for conversion in facts.tensor_to_numpy:
        if conversion.tensor.on_accelerator:
            if conversion.via == "numpy":
                message = ".numpy() on a tensor that may be on an accelerator raises TypeError: call .cpu() first"
            else:
                function = "np." + conversion.via.rsplit(".", 1)[1]
                message = (f"{function}() of a tensor that may be on an accelerator raises TypeError: "
                           "move it with .cpu() first")
            yield Finding(CODE, conversion.node, message)
