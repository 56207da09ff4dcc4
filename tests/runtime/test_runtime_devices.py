"""Devices this process cannot use: one clear RuntimeError from every helper, before any work is done."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import DevicePrefetcher, NumpyBatchLoader, from_numpy, stack_to_device

needs_a_cpu_only_torch = pytest.mark.skipif(torch.backends.cuda.is_built(), reason="this torch is built with CUDA")

CALLS = {
    "from_numpy": lambda device: from_numpy(np.ones(2), device=device),
    "stack_to_device": lambda device: stack_to_device([np.ones(2)], device),
    "DevicePrefetcher": lambda device: DevicePrefetcher([np.ones(2)], device),
    "NumpyBatchLoader": lambda device: NumpyBatchLoader(np.zeros((1, 2, 2, 3), np.uint8), 1, device),
}


@needs_a_cpu_only_torch
@pytest.mark.parametrize("caller", CALLS)
@pytest.mark.parametrize("device", ["cuda", torch.device("cuda", 0)])
def test_cuda_on_a_cpu_only_torch_is_a_runtime_error_saying_what_to_install(caller, device):
    with pytest.raises(RuntimeError, match=rf"^{caller}\(\) was asked for device 'cuda(:0)?', but this torch "
                                           r"\(.*\) is built without CUDA: install a CUDA build of torch, "
                                           r"or pass device='cpu'$"):
        CALLS[caller](device)


def test_cuda_built_without_a_visible_gpu_says_so(monkeypatch):
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match=r"no CUDA device is visible to this process \(check the NVIDIA driver"):
        from_numpy(np.ones(2), device="cuda")


@pytest.mark.parametrize("caller", CALLS)
def test_a_gpu_index_beyond_the_visible_ones_names_the_range(fake_cuda, caller):
    with pytest.raises(RuntimeError, match=r"asked for device 'cuda:2', but this process sees 2 CUDA devices "
                                           r"\(cuda:0 to cuda:1\)"):
        CALLS[caller]("cuda:2")


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="MPS is available here")
def test_mps_where_it_is_not_available_says_so():
    with pytest.raises(RuntimeError, match=r"asked for device 'mps', but MPS is not available here"):
        stack_to_device([np.ones(2)], "mps")


def test_cpu_and_meta_need_no_check():
    assert from_numpy(np.ones(2), device="meta").is_meta
    assert stack_to_device([np.ones(2)], "cpu").shape == (1, 2)
