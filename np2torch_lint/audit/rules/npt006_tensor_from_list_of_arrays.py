"""NPT006 at run time: ``torch.tensor`` (or ``as_tensor``, ``asarray``, a legacy constructor) of a list of ndarrays,
which torch converts number by number; the audit times each call."""

from __future__ import annotations

import numpy as np

from ..findings import AuditFinding, Observed, duration, size, times

CODE = "NPT006"
NAME = "tensor-from-list-of-arrays"


def arrays_in(data: object) -> list[np.ndarray] | None:
    """The arrays of a non-empty list or tuple that holds only ndarrays, or lists of them (None: it does not)."""
    if type(data) not in (list, tuple) or not data:  # type: ignore[arg-type]
        return None
    first = data[0]  # type: ignore[index]
    if isinstance(first, np.ndarray):
        return list(data) if all(isinstance(item, np.ndarray) for item in data) else None  # type: ignore
    arrays: list[np.ndarray] = []
    for item in data:  # type: ignore[attr-defined]
        inner = arrays_in(item)
        if inner is None:
            return None
        arrays.extend(inner)
    return arrays


def describe(observed: Observed) -> AuditFinding:
    call, _ = observed.calls.most_common(1)[0]
    mean = observed.seconds / max(observed.count, 1)
    message = (f"{call}() of a list of ndarrays (up to {observed.largest}) converted them element by element here "
               f"({times(observed.count)}, {duration(observed.seconds)} in all, {duration(mean)} each, "
               f"{size(observed.nbytes)}): stack them with np.stack() first")
    return AuditFinding(CODE, message, observed.site, observed.count, observed.nbytes, observed.seconds,
                        properties={"arrays": observed.largest, "calls": dict(observed.calls)})
