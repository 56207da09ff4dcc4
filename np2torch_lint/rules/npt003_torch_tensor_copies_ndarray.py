"""NPT003: ``torch.tensor(ndarray)`` and legacy ``torch.Tensor(ndarray)``-style constructors copy the array.

``torch.tensor`` always copies; ``torch.from_numpy``/``torch.as_tensor`` share the array's memory (FACTS.md
section 3). The legacy constructors share when the dtype already matches and copy otherwise, so they are only
reported where the dtype is known to differ. Docs: ``docs/rules/NPT003.md``.
"""

from __future__ import annotations

from typing import Iterator

from ..diagnostics import Finding
from ..inference import LEGACY_TENSOR_TYPES, Facts, device_on_accelerator
from ..values import Kind

CODE = "NPT003"
NAME = "torch-tensor-copies-ndarray"
SUMMARY = "torch.tensor(ndarray) makes a full copy where from_numpy/as_tensor share memory"


def check(facts: Facts) -> Iterator[Finding]:
    for conversion in facts.numpy_to_tensor:
        source = conversion.source
        if source.kind is not Kind.NDARRAY or conversion.under_copy_test:
            continue
        if conversion.constructor == "torch.tensor":
            if "requires_grad" in conversion.keywords:
                continue  # as_tensor has no requires_grad=: a new leaf tensor is a copy on purpose
            if conversion.dtype is not None and (conversion.dtype == "?" or conversion.dtype != source.dtype):
                continue  # a dtype change copies whichever constructor is used
            if conversion.device is not None and device_on_accelerator(conversion.device) is not False:
                continue  # a copy to the device is needed anyway
            yield Finding(CODE, conversion.node, "torch.tensor() copies the whole array: use torch.as_tensor() "
                                                 "or torch.from_numpy() to share its memory")
        elif conversion.constructor in LEGACY_TENSOR_TYPES:
            made = LEGACY_TENSOR_TYPES[conversion.constructor]
            if source.dtype is None or source.dtype == made:
                continue  # same dtype: the legacy constructor shares memory
            yield Finding(CODE, conversion.node,
                          f"{conversion.constructor}() silently copies this {source.dtype} array into {made}: use "
                          f"torch.as_tensor(array, dtype=torch.{made}) to say so")
