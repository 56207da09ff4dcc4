"""NPT005 at run time: many host-to-device copies from one line whose results are kept together.

A training loop moves one batch per step from the same line too; what marks the per-item pattern is that the
moved items are collected: when a copy is made, earlier results of the same line with the same shape, dtype and
device are still alive (in a list, about to be stacked). ``KeptTogether`` counts them with weak references. A site
is reported once ``KEPT_TOGETHER`` such copies were alive at once; fewer (``x, y = x.to(d), y.to(d)``) is not the
pattern, and items of different shapes could not be stacked anyway.
"""

from __future__ import annotations

import weakref

import torch

from ..findings import AuditFinding, Observed, size
from ..sites import Site

CODE = "NPT005"
NAME = "per-item-device-transfer"
KEPT_TOGETHER = 4


class _Alive:
    """The results of one (site, shape, dtype, device) still alive, by identity (tensors compare elementwise)."""

    __slots__ = ("refs",)

    def __init__(self) -> None:
        self.refs: dict[int, weakref.ref] = {}

    def add(self, result: torch.Tensor) -> bool:
        key = id(result)
        known = self.refs.get(key)
        if known is not None and known() is result:
            return False
        refs = self.refs

        def died(ref: weakref.ref, key: int = key) -> None:
            if refs.get(key) is ref:
                del refs[key]

        refs[key] = weakref.ref(result, died)
        return True


class KeptTogether:
    def __init__(self) -> None:
        self._alive: dict[tuple, _Alive] = {}

    def moved(self, site: Site, result: torch.Tensor) -> int:
        """Count a copy's result; returns how many results of its kind (this one included) are alive now, or 0
        for a result already counted (torch's own Python code moving it again inside the same call: meta
        tensors' kernels call ``.to``)."""
        key = (site, tuple(result.shape), result.dtype, result.device)
        alive = self._alive.get(key)
        if alive is None:
            alive = self._alive[key] = _Alive()
        return len(alive.refs) if alive.add(result) else 0


def describe(observed: Observed) -> AuditFinding | None:
    if observed.largest < KEPT_TOGETHER:
        return None
    per_group = observed.count / max(observed.groups, 1)
    average = observed.nbytes / max(observed.count, 1)
    message = (f"{observed.count} host-to-device copies from this line, {size(average)} each, up to "
               f"{observed.largest} kept together ({per_group:.0f} per batch on average): stack the items on the "
               f"host and move each batch once (one copy of about {size(average * per_group)})")
    return AuditFinding(CODE, message, observed.site, observed.count, observed.nbytes,
                        properties={"kept_together": observed.largest, "batches": observed.groups,
                                    "mean_bytes": round(average)})
