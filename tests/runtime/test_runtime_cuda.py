"""CUDA behaviour: skipped without a GPU (see conftest.py), run where one exists."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import (
    DevicePrefetcher,
    NumpyBatchLoader,
    from_numpy,
    stack_to_device,
    to_numpy,
    to_numpy_async,
)
from np2torch_lint.runtime._batches import _staging_for

pytestmark = pytest.mark.cuda

# About 0.5-1 s of GPU spinning: long enough that work queued behind it is still pending when
# the host looks, so a missing wait shows up as wrong data rather than passing by luck.
SPIN_CYCLES = 1_000_000_000


def test_to_numpy_of_a_cuda_grad_bfloat16_tensor():
    t = torch.tensor([1.5, -2.0], device="cuda", dtype=torch.bfloat16, requires_grad=True)
    a = to_numpy(t)
    assert a.dtype == np.float32 and a.tolist() == [1.5, -2.0]


def test_to_numpy_waits_for_queued_work():
    x = torch.zeros(1 << 24, device="cuda")
    torch.cuda._sleep(SPIN_CYCLES)
    x.add_(1)
    assert (to_numpy(x) == 1).all()


def test_to_numpy_async_never_hands_out_an_incomplete_copy():
    x = torch.zeros(1 << 26, device="cuda")  # 256 MiB
    torch.cuda._sleep(SPIN_CYCLES)
    x.add_(3)
    pending = to_numpy_async(x)
    assert not pending.done()  # the copy is queued behind the spin: the call did not block
    x.add_(1)  # later in-place work must not reach the snapshot
    result = pending.result()
    assert result.shape == (1 << 26,) and (result == 3).all()


def test_reads_as_npt007_fixes_leave_them_see_the_finished_copy():
    """NPT007 rewrites ``x.to("cpu", non_blocking=True).numpy()`` to ``to_numpy(x)`` and drops ``non_blocking=True``
    from other copies; ``to_numpy_async(x)`` with ``.result()`` at the read is the asynchronous way to fix it by
    hand. With the device still busy writing ``x``, every one of them reads the finished values."""
    x = torch.zeros(1 << 24, device="cuda")
    pinned = torch.empty(x.shape, pin_memory=True)

    def copied_into_pinned_memory() -> np.ndarray:
        pinned.copy_(x)
        return pinned.numpy()

    def asynchronously() -> np.ndarray:  # the last read: it leaves x zeroed
        pending = to_numpy_async(x)
        x.mul_(0)  # queued after the copy: the snapshot must not see it
        return pending.result()

    reads = [lambda: to_numpy(x), lambda: x.to("cpu").numpy(), copied_into_pinned_memory, asynchronously]
    for count, read in enumerate(reads, start=1):
        torch.cuda._sleep(SPIN_CYCLES)
        x.add_(1)
        assert (read() == count).all(), read


def test_to_numpy_async_of_conjugate_and_sparse_cuda_tensors():
    z = torch.tensor([1 + 2j], device="cuda")
    assert to_numpy_async(z.conj()).result().tolist() == [1 - 2j]
    s = torch.eye(3, device="cuda").to_sparse()
    np.testing.assert_array_equal(to_numpy_async(s).result(), np.eye(3, dtype=np.float32))


@pytest.mark.parametrize(("source", "target"),
                         [(np.float64, torch.float32), (np.uint8, torch.float32), (np.float32, torch.bfloat16)])
def test_from_numpy_to_cuda_with_a_cast(source, target):
    a = (np.arange(24).reshape(2, 3, 4) % 200).astype(source)[:, ::-1]
    t = from_numpy(a, dtype=target, device="cuda")
    assert t.device.type == "cuda" and t.dtype == target
    torch.testing.assert_close(t.cpu(), torch.from_numpy(a.copy()).to(target))


def test_stack_to_device_uses_a_reused_pinned_staging_buffer():
    arrays = [np.full((8, 8, 3), i, dtype=np.float64) for i in range(10)]
    batch = stack_to_device(arrays, "cuda", dtype=torch.float32)
    assert batch.device.type == "cuda" and batch.dtype == torch.float32
    np.testing.assert_array_equal(batch.cpu().numpy(), np.stack(arrays).astype(np.float32))
    staging = _staging_for(torch.device("cuda"))
    assert staging._buffer.is_pinned()
    first_buffer = staging._buffer.data_ptr()
    stack_to_device(arrays[:5], "cuda", dtype=torch.float32)
    assert staging._buffer.data_ptr() == first_buffer


def test_stack_to_device_does_not_overwrite_staging_under_an_inflight_copy():
    shape = (64, 256, 256, 3)
    first = [np.full(shape[1:], 1, dtype=np.uint8)] * shape[0]
    second = [np.full(shape[1:], 2, dtype=np.uint8)] * shape[0]
    torch.cuda._sleep(SPIN_CYCLES)  # holds the first copy in the queue
    batch_one = stack_to_device(first, "cuda")
    batch_two = stack_to_device(second, "cuda")  # must wait before refilling the buffer
    assert (batch_one == 1).all().item()
    assert (batch_two == 2).all().item()


def test_stack_to_device_widens_on_the_device():
    batch = stack_to_device([np.array([[255]], dtype=np.uint8)] * 2, "cuda", dtype=torch.float32)
    assert batch.dtype == torch.float32 and batch.flatten().tolist() == [255.0, 255.0]


def _random_batches(count=12):
    rng = np.random.default_rng(0)
    return [(rng.random((16, 3, 32, 32)), rng.integers(0, 10, size=16)) for _ in range(count)]


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_prefetcher_matches_a_synchronous_loop(depth):
    batches = _random_batches()
    expected = [(torch.from_numpy(x).float().cuda(), torch.from_numpy(y).cuda()) for x, y in batches]
    got = []
    for x, y in DevicePrefetcher(batches, "cuda", depth=depth, dtype=torch.float32, channels_last=True):
        torch.cuda._sleep(SPIN_CYCLES // 20)  # slow consumer: copies run ahead of it
        x.mul_(2)  # in-place consumer work on the yielded tensor
        got.append((x, y))
    assert len(got) == len(expected)
    for (x, y), (ex, ey) in zip(got, expected):
        assert x.is_contiguous(memory_format=torch.channels_last)
        assert y.dtype == torch.int64
        torch.testing.assert_close(x, ex * 2, rtol=0, atol=0)
        torch.testing.assert_close(y, ey, rtol=0, atol=0)


def test_prefetcher_consumer_on_a_non_default_stream():
    batches = _random_batches(6)
    consumer = torch.cuda.Stream()
    sums = []
    with torch.cuda.stream(consumer):
        for x, _ in DevicePrefetcher(batches, "cuda", dtype=torch.float32):
            sums.append(x.sum())
    torch.cuda.synchronize()
    expected = [torch.from_numpy(x).float().sum() for x, _ in batches]
    torch.testing.assert_close(torch.stack(sums).cpu(), torch.stack(expected))


def test_prefetcher_takes_pinned_and_cuda_tensors_and_stops_early():
    items = [torch.ones(4).pin_memory(), torch.full((4,), 2.0, device="cuda"), torch.full((4,), 3.0)]
    out = list(DevicePrefetcher(items, "cuda", dtype=torch.float16))
    assert [t.tolist() for t in out] == [[1.0] * 4, [2.0] * 4, [3.0] * 4]
    assert all(t.dtype == torch.float16 and t.device.type == "cuda" for t in out)
    for _ in DevicePrefetcher(_random_batches(), "cuda", depth=3):
        break  # closing mid-stream must leave no copy reading freed buffers


def test_numpy_batch_loader_on_cuda_matches_the_cpu_loader():
    images = np.random.default_rng(1).integers(0, 256, size=(10, 8, 8, 3), dtype=np.uint8)
    on_gpu = list(NumpyBatchLoader(images, 4, "cuda", scale=1 / 255, shuffle=True, seed=3))
    on_cpu = list(NumpyBatchLoader(images, 4, "cpu", scale=1 / 255, shuffle=True, seed=3))
    assert len(on_gpu) == len(on_cpu) == 3
    for g, c in zip(on_gpu, on_cpu):
        assert g.is_contiguous(memory_format=torch.channels_last)
        torch.testing.assert_close(g.cpu(), c)
