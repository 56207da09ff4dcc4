"""The rules. Each module is one rule: its code, its one-line summary and ``check(facts)``.

A rule reads the facts the single analysis pass recorded (``inference.Facts``) and yields findings; it never
walks the tree itself, so adding a rule adds no traversal.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    npt001_numpy_on_grad_tensor,
    npt002_numpy_on_accelerator_tensor,
    npt003_torch_tensor_copies_ndarray,
    npt004_float64_default_into_torch,
    npt005_per_item_device_transfer,
    npt006_tensor_from_list_of_arrays,
    npt007_non_blocking_copy_read_before_sync,
    npt008_negative_stride_array_into_torch,
)

ALL_RULES: tuple[ModuleType, ...] = (
    npt001_numpy_on_grad_tensor,
    npt002_numpy_on_accelerator_tensor,
    npt003_torch_tensor_copies_ndarray,
    npt004_float64_default_into_torch,
    npt005_per_item_device_transfer,
    npt006_tensor_from_list_of_arrays,
    npt007_non_blocking_copy_read_before_sync,
    npt008_negative_stride_array_into_torch,
)
RULES_BY_CODE: dict[str, ModuleType] = {rule.CODE: rule for rule in ALL_RULES}
