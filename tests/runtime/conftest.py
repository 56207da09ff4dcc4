from __future__ import annotations

import pytest
import torch

from np2torch_lint.runtime import _devices, _staging

from fake_cuda import FakeCuda


@pytest.fixture(autouse=True)
def _skip_cuda_tests_without_a_gpu(request: pytest.FixtureRequest) -> None:
    # Scoped to tests/runtime: the marker is declared in pyproject.toml, the skip lives here.
    if request.node.get_closest_marker("cuda") and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch):
    """The runtime's CUDA backend replaced by a recording fake (see fake_cuda.py), with fresh staging pools."""
    fake = FakeCuda()
    monkeypatch.setattr(_devices, "backend", fake)
    _staging._pools_per_thread.__dict__.clear()  # buffers of another backend must not be reused
    yield fake
    _staging._pools_per_thread.__dict__.clear()
