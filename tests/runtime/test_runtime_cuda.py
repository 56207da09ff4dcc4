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
from np2torch_lint.runtime import _staging
from np2torch_lint.runtime._staging import staging_pool_for

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


def test_stack_to_device_reuses_pinned_staging_buffers_once_their_copy_is_done():
    _staging._pools_per_thread.__dict__.clear()
    arrays = [np.full((8, 8, 3), i, dtype=np.float64) for i in range(10)]
    batch = stack_to_device(arrays, "cuda", dtype=torch.float32)
    assert batch.device.type == "cuda" and batch.dtype == torch.float32
    np.testing.assert_array_equal(batch.cpu().numpy(), np.stack(arrays).astype(np.float32))
    pool = staging_pool_for(torch.device("cuda", torch.cuda.current_device()))
    (staging,) = pool._stagings
    assert staging._buffer.is_pinned()
    first_buffer = staging._buffer.data_ptr()
    torch.cuda.synchronize()  # the copy is done: its buffer is free again
    stack_to_device(arrays[:5], "cuda", dtype=torch.float32)
    assert len(pool._stagings) == 1 and staging._buffer.data_ptr() == first_buffer


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


# ----------------------------------------------------------------------------- one test per ordering guard


def test_prefetcher_copies_a_gpu_leaf_after_the_kernel_that_writes_it():
    """Pins the producer wait: without it the side stream copies the zeros the spin holds back from being ones."""
    leaves = []
    for _ in range(3):
        leaf = torch.zeros(1 << 20, device="cuda")
        torch.cuda._sleep(SPIN_CYCLES // 4)  # the producer stream is busy...
        leaf.add_(1)  # ...so this write lands late
        leaves.append(leaf)
    for batch in DevicePrefetcher(leaves, "cuda", depth=2):
        assert (batch == 1).all().item()


def test_prefetcher_batches_read_and_dropped_at_once_keep_their_values():
    """Pins record_stream: a dropped batch's memory must not go to the next copy while a kernel still reads it."""
    batches = [np.full((1 << 18,), float(i), dtype=np.float32) for i in range(8)]
    sums = []
    for batch in DevicePrefetcher(batches, "cuda", depth=1):
        torch.cuda._sleep(SPIN_CYCLES // 20)  # the consumer lags: the sum below runs late
        sums.append(batch.sum())
        del batch  # freed now; without record_stream, the copy two batches on may reuse it before the sum
    assert [s.item() for s in sums] == [float(i * (1 << 18)) for i in range(8)]


def test_prefetcher_batch_of_256_mib_read_at_once_is_complete():
    """Pins wait_event: the consumer's first kernel must wait for the whole copy of a large batch."""
    big = np.ones(1 << 26, dtype=np.float32)  # 256 MiB: its copy takes milliseconds
    (batch,) = [(b == 1).all() for b in DevicePrefetcher([big], "cuda")]  # queued as soon as it is handed out
    assert batch.item()


def test_two_stack_to_device_calls_in_one_step_do_not_block_the_host():
    """Pins the staging ring: the second call must not wait for the first copy, queued behind the spin."""
    images = [np.full((64, 64, 3), 1, dtype=np.uint8)] * 32
    labels = [np.int64(7)] * 32
    torch.cuda._sleep(SPIN_CYCLES)
    x = stack_to_device(images, "cuda", dtype=torch.float32)
    y = stack_to_device(labels, "cuda")
    assert not torch.cuda.current_stream().query()  # still spinning: the host never waited for the copies
    assert (x == 1).all().item() and (y == 7).all().item()


def test_from_numpy_to_cuda_does_not_wait_for_queued_work():
    """A small pageable copy is staged by the driver at once; a blocking .to() waits for the whole stream."""
    torch.cuda._sleep(SPIN_CYCLES)
    t = from_numpy(np.arange(4.0), device="cuda")
    assert not torch.cuda.current_stream().query()  # a blocking copy would have waited for the spin
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_to_numpy_of_a_non_blocking_device_to_host_copy_sees_the_finished_values():
    """Pins the pinned-memory wait: ``to_numpy(x.to("cpu", non_blocking=True))``, the article's two-step bug."""
    x = torch.zeros(1 << 24, device="cuda")
    torch.cuda._sleep(SPIN_CYCLES)
    x.add_(1)
    landing = x.to("cpu", non_blocking=True)
    assert (to_numpy(landing) == 1).all()  # noqa: NPT007  (the read NPT007 flags is the one to_numpy makes safe)


def test_from_numpy_narrows_to_bfloat16_on_the_host():
    a = np.linspace(-4, 4, 1000)
    t = from_numpy(a, dtype=torch.bfloat16, device="cuda")
    assert t.dtype == torch.bfloat16
    torch.testing.assert_close(t.cpu(), torch.from_numpy(a).to(torch.bfloat16), rtol=0, atol=0)


_two_gpus = pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.device_count() < 2, reason="needs two GPUs")


@_two_gpus
def test_prefetcher_to_the_second_gpu_and_from_a_leaf_made_there():
    leaf = torch.zeros(1 << 20, device="cuda:1")
    with torch.cuda.device(1):
        torch.cuda._sleep(SPIN_CYCLES // 4)
    leaf.add_(2)  # on cuda:1's current stream, behind the spin
    for target in ("cuda:0", "cuda:1"):
        ((from_host, from_gpu1),) = list(DevicePrefetcher([(np.ones(4), leaf)], target))
        assert from_host.device == from_gpu1.device == torch.device(target)
        assert from_host.tolist() == [1.0] * 4 and (from_gpu1 == 2).all().item()


@_two_gpus
def test_stack_to_device_on_the_second_gpu():
    batch = stack_to_device([np.full(3, 5.0)] * 2, "cuda:1", dtype=torch.float32)
    assert batch.device == torch.device("cuda:1") and batch.tolist() == [[5.0] * 3] * 2
