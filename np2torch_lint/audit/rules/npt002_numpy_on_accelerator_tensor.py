"""NPT002 at run time: ``.numpy()`` (or a NumPy function, through ``__array__``) on a tensor on an accelerator.

It raises on its own; the audit adds the rule and the fix to the error as it passes, and counts it. A meta tensor
raises the same TypeError, but ``.cpu()`` cannot help it, so it is not this rule.
"""

from __future__ import annotations

from ..findings import AuditFinding, Observed, times

CODE = "NPT002"
NAME = "numpy-on-accelerator-tensor"
FIX = "call .cpu() first (or np2torch_lint.runtime.to_numpy(t))"


def raised_by(device_type: str, error: BaseException) -> bool:
    """Whether ``error``, raised by ``.numpy()`` of a tensor on ``device_type``, is torch refusing a device tensor."""
    return (isinstance(error, TypeError) and "device type tensor to numpy" in str(error)
            and device_type not in ("cpu", "meta"))


def describe(observed: Observed) -> AuditFinding:
    devices = " or ".join(sorted(observed.calls)) or "an accelerator"
    return AuditFinding(CODE, f".numpy() of a tensor on {devices} raised TypeError here ({times(observed.count)}): "
                              f"{FIX}", observed.site, observed.count, properties={"devices": sorted(observed.calls)})
