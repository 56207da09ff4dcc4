"""NPT003: ``torch.tensor(ndarray)`` copies the array where sharing would give the same tensor.

``torch.tensor`` always copies; ``torch.from_numpy``/``torch.as_tensor`` share the array's memory (FACTS.md
section 3). Reported where sharing gives the same tensor: the same dtype and the CPU. A legacy constructor's cast
(``torch.FloatTensor(float64_array)``) is NPT009's, a float64 copy cast again later NPT010's. Off by default: most
such copies on real code are of a few numbers, or made once (``rules/__init__.py``). Docs: ``docs/rules/NPT003.md``.

Fix: ``torch.tensor(a)`` -> ``torch.as_tensor(a)`` (inline) or ``from_numpy(a)`` (helpers) is unsafe, since the
tensor then shares memory with the array; its ``dtype=`` and ``device=`` stay as they are.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, sharing_conversion
from ..analysis import Facts, NumpyToTensor, device_on_accelerator
from ..analysis.values import Kind
from . import npt004_float64_default_into_torch as npt004
from . import npt010_torch_tensor_copies_then_casts as npt010
from ._copy_size import copy_size

CODE = "NPT003"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        source = conversion.source
        if (source.kind is not Kind.NDARRAY or conversion.under_copy_test or source.negative_strides
                or conversion.constructor != "torch.tensor"):
            continue  # with a negative stride every constructor raises: NPT008's finding
        if source.read_only:
            continue  # sharing a read-only array would hand out a writable tensor over it (NPT008)
        if "requires_grad" in conversion.keywords:
            continue  # as_tensor has no requires_grad=: a new leaf tensor is a copy on purpose
        if conversion.dtype is not None and (conversion.dtype == "?" or conversion.dtype != source.dtype):
            continue  # a dtype change copies whichever constructor is used
        if conversion.device is not None and device_on_accelerator(conversion.device) is not False:
            continue  # a copy to the device is needed anyway
        if npt004.reports(facts, conversion.node):
            continue  # NumPy's default float64 with no dtype decision: NPT004's fix (float32) copies anyway
        if npt010.reports(facts, conversion):
            continue  # a float64 copy cast again later: NPT010's finding
        size = copy_size(conversion.node, source.dtype, facts.module_names.get("numpy"))
        copies = f"copies the whole array ({size})" if size else "copies the whole array"
        yield Finding(CODE, conversion.node, f"torch.tensor() {copies}: torch.as_tensor() or torch.from_numpy() "
                                             "would share its memory, if neither is written afterwards",
                      sharing_fix(conversion, style), conversion.through)


def sharing_fix(conversion: NumpyToTensor, style: FixStyle) -> Fix | None:
    node = conversion.node
    positional = [arg for arg in node.args if arg.keyword is None]
    if len(positional) != 1 or positional[0].star or not conversion.keywords <= {"dtype", "device"}:
        return None  # pin_memory= and the like have no as_tensor equivalent
    title = "Share memory with from_numpy()" if style is FixStyle.HELPERS else "Share memory with torch.as_tensor()"
    return Fix(Applicability.UNSAFE, title, _share)


def _share(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return sharing_conversion(node, edit) if isinstance(node, cst.Call) else node
