"""NPT001 at run time: ``.numpy()`` (or a NumPy function, through ``__array__``) on a tensor that requires grad.

It raises on its own; the audit adds the rule and the fix to the error as it passes, and counts it.
"""

from __future__ import annotations

import torch

from ..findings import AuditFinding, Observed, times

CODE = "NPT001"
NAME = "numpy-on-grad-tensor"
FIX = "call .detach() first (or np2torch_lint.runtime.to_numpy(t), which copies)"


def raised_by(tensor: torch.Tensor, error: BaseException) -> bool:
    """Whether ``error``, raised by ``tensor.numpy()``, is torch refusing a tensor that requires grad."""
    return isinstance(error, RuntimeError) and "requires grad" in str(error) and tensor.requires_grad


def describe(observed: Observed) -> AuditFinding:
    return AuditFinding(CODE, f".numpy() of a tensor that requires grad raised RuntimeError here "
                              f"({times(observed.count)}): {FIX}", observed.site, observed.count)
