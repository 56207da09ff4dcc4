"""What the audit watches, one module per rule (the same codes as the linter's rules).

Each module has the rule's ``CODE`` and ``NAME``, the tests its hooks apply while the code runs, and
``describe(observed)``: the finding one site's observations make, or None when they are not one (too few).
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
)

ALL_RULES: tuple[ModuleType, ...] = (
    npt001_numpy_on_grad_tensor,
    npt002_numpy_on_accelerator_tensor,
    npt003_torch_tensor_copies_ndarray,
    npt004_float64_default_into_torch,
    npt005_per_item_device_transfer,
    npt006_tensor_from_list_of_arrays,
    npt007_non_blocking_copy_read_before_sync,
)
RULES_BY_CODE: dict[str, ModuleType] = {rule.CODE: rule for rule in ALL_RULES}
