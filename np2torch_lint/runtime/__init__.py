"""Correct NumPy <-> PyTorch conversion helpers, which np2torch-lint's fixes rewrite code to call.

Imports numpy and torch, never libcst or the linter. See docs/runtime.md.
"""

from __future__ import annotations

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ModuleNotFoundError as missing:  # the helpers need both: one line that says what to install
    if missing.name not in ("numpy", "torch"):
        raise
    raise ModuleNotFoundError(f"np2torch_lint.runtime needs NumPy and PyTorch, and {missing.name} is not installed: "
                              "pip install 'np2torch-lint[runtime]'", name=missing.name) from None

from ._batches import stack_to_device
from ._convert import PendingArray, from_numpy, to_numpy, to_numpy_async
from ._prefetch import DevicePrefetcher, NumpyBatchLoader
from ..audit.session import audit  # the runtime audit (docs/audit.md); installs nothing until entered

__all__ = [
    "DevicePrefetcher",
    "NumpyBatchLoader",
    "PendingArray",
    "audit",
    "from_numpy",
    "stack_to_device",
    "to_numpy",
    "to_numpy_async",
]
