from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _skip_cuda_tests_without_a_gpu(request: pytest.FixtureRequest) -> None:
    # Scoped to tests/audit: the marker is declared in pyproject.toml, the skip lives here.
    if request.node.get_closest_marker("cuda") and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
