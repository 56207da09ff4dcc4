"""NPT010: ``torch.tensor(a)`` of NumPy's default float64, whose dtype is chosen afterwards: two copies for one.

``torch.tensor(image / 255.).float()`` copies the float64 array into a float64 tensor, and ``.float()`` copies that
into float32; ``torch.from_numpy(image / 255.).float()`` makes only the second copy, and shares nothing with the
array, since the cast copies. The later choice is what the analysis records as a dtype decision for that tensor
(``.float()``, ``.half()``, ``.to(dtype)``, ``.type(...)``, a copy into a slice of a tensor or array). Only NumPy's
default float64 is followed that far (NPT004 reports it where no decision comes). Docs: ``docs/rules/NPT010.md``.

Fix: the same as NPT003's, ``torch.tensor(a)`` -> ``from_numpy(a)`` (helpers) or ``torch.as_tensor(a)`` (inline),
the later cast kept; unsafe, since a write to the tensor before the cast would reach the array.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..analysis import Facts, NumpyToTensor, device_on_accelerator
from ..analysis.values import Kind
from ..diagnostics import Finding
from ..fixes import FixStyle
from . import npt003_torch_tensor_copies_ndarray as npt003
from ._copy_size import copy_size

CODE = "NPT010"


def reports(facts: Facts, conversion: NumpyToTensor) -> bool:
    """Whether this rule reports ``conversion`` (NPT003 then leaves it alone)."""
    source, node = conversion.source, conversion.node
    return (conversion.constructor == "torch.tensor" and source.kind is Kind.NDARRAY
            and not (conversion.under_copy_test or source.negative_strides or source.read_only)
            and conversion.dtype is None and "requires_grad" not in conversion.keywords
            and (conversion.device is None or device_on_accelerator(conversion.device) is False)
            and node in facts.float64_conversions and node in facts.dtype_decided)


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        if reports(facts, conversion):
            fix = npt003.sharing_fix(conversion, style)
            yield Finding(CODE, conversion.node, _message(conversion.node, facts), fix,
                          conversion.through or facts.float64_through.get(conversion.node))


def _message(node: cst.Call, facts: Facts) -> str:
    size = copy_size(node, "float64", facts.module_names.get("numpy"))
    array = f"this float64 array ({size})" if size else "this float64 array"
    return (f"torch.tensor() copies {array}, and the dtype chosen for it afterwards copies it again: "
            "torch.from_numpy() before the cast shares it instead, so only the cast copies")
