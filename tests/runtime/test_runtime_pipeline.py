from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import DevicePrefetcher, NumpyBatchLoader, PendingArray, to_numpy_async

# ----------------------------------------------------------------------------- to_numpy_async


def test_async_on_cpu_is_ready_at_once_and_is_a_snapshot():
    t = torch.arange(3.0)
    pending = to_numpy_async(t)
    assert pending.done()
    t.add_(10)  # an in-place update after the call must not show in the result
    np.testing.assert_array_equal(pending.result(), [0.0, 1.0, 2.0])
    assert not np.shares_memory(pending.result(), t.numpy())


def test_async_result_is_the_same_array_each_call():
    pending = to_numpy_async(torch.ones(2))
    assert pending.result() is pending.result()


def test_async_handles_what_to_numpy_handles():
    p = torch.nn.Parameter(torch.tensor([1.5], dtype=torch.bfloat16))
    result = to_numpy_async(p).result()
    assert result.dtype == np.float32 and result.tolist() == [1.5]


def test_async_of_an_ndarray_is_a_copy():
    a = np.arange(3)
    result = to_numpy_async(a).result()
    np.testing.assert_array_equal(result, a)
    assert not np.shares_memory(result, a)


def test_async_rejects_other_types():
    with pytest.raises(TypeError, match="got list"):
        to_numpy_async([1, 2])


class FakeCopyEvent:
    """Stands in for torch.cuda.Event: counts waits, reports completion only after a wait."""

    def __init__(self) -> None:
        self.synchronized = 0

    def query(self) -> bool:
        return self.synchronized > 0

    def synchronize(self) -> None:
        self.synchronized += 1


def test_pending_result_waits_on_the_copy_event_before_reading():
    event = FakeCopyEvent()
    pending = PendingArray(torch.ones(2), event)
    assert not pending.done()
    pending.result()
    assert event.synchronized == 1
    pending.result()
    assert event.synchronized == 1


# ----------------------------------------------------------------------------- DevicePrefetcher


def test_prefetcher_on_cpu_yields_what_a_synchronous_loop_yields():
    batches = [np.random.default_rng(i).random((2, 3)) for i in range(5)]
    got = list(DevicePrefetcher(batches, "cpu", dtype=torch.float32))
    assert len(got) == 5
    for tensor, array in zip(got, batches):
        assert tensor.dtype == torch.float32
        np.testing.assert_array_equal(tensor.numpy(), array.astype(np.float32))


def test_prefetcher_tensors_never_alias_the_source():
    source = np.zeros((2, 2), dtype=np.float32)
    (tensor,) = DevicePrefetcher([source], "cpu")
    tensor.add_(1)
    assert source.sum() == 0


def test_prefetcher_casts_floating_leaves_only_and_walks_structures():
    Sample = namedtuple("Sample", ["x", "y"])
    item = (
        np.ones((2, 2)),
        np.array([1, 2]),
        {"mask": np.array([True]), "name": "a.png", "grad": torch.ones(1, dtype=torch.float64, requires_grad=True)},
        Sample(np.float64(1.0), [np.int64(3)]),
        np.array(["a", "b"]),
    )
    (out,) = DevicePrefetcher([item], "cpu", dtype=torch.float16)
    x, labels, extra, sample, names = out
    assert x.dtype == torch.float16
    assert labels.dtype == torch.int64
    assert extra["mask"].dtype == torch.bool and extra["name"] == "a.png"
    assert extra["grad"].dtype == torch.float16 and not extra["grad"].requires_grad
    assert isinstance(sample, Sample) and sample.x.dtype == torch.float16 and sample.y[0].dtype == torch.int64
    assert names is item[4]  # not tensor data: passed through


def test_prefetcher_channels_last_applies_to_4d_leaves():
    nchw = np.zeros((2, 3, 4, 5), dtype=np.float32)
    (batch, flat) = next(iter(DevicePrefetcher([(nchw, np.zeros(3))], "cpu", channels_last=True)))
    assert batch.is_contiguous(memory_format=torch.channels_last) and not batch.is_contiguous()
    assert flat.shape == (3,)


def test_prefetcher_is_reiterable_and_sized():
    prefetcher = DevicePrefetcher([np.ones(1), np.ones(1)], "cpu")
    assert len(prefetcher) == 2
    assert len(list(prefetcher)) == len(list(prefetcher)) == 2


def test_prefetcher_rejects_depth_below_one():
    with pytest.raises(ValueError, match="depth >= 1"):
        DevicePrefetcher([], "cpu", depth=0)


# ----------------------------------------------------------------------------- NumpyBatchLoader


def _images(n=5, h=4, w=6, c=3, dtype=np.uint8):
    return np.arange(n * h * w * c).reshape(n, h, w, c).astype(dtype)


def test_loader_yields_nchw_float_batches_matching_a_hand_written_loop():
    images = _images()
    loader = NumpyBatchLoader(images, 2, "cpu", scale=1 / 255)
    batches = list(loader)
    assert [b.shape for b in batches] == [(2, 3, 4, 6), (2, 3, 4, 6), (1, 3, 4, 6)]
    expected = torch.from_numpy(images).float().mul(1 / 255).permute(0, 3, 1, 2)
    torch.testing.assert_close(torch.cat(batches), expected, rtol=0, atol=0)
    assert all(b.dtype == torch.float32 for b in batches)


def test_loader_batches_are_channels_last_views_not_contiguous_copies():
    (batch,) = NumpyBatchLoader(_images(n=2), 2, "cpu")
    assert batch.is_contiguous(memory_format=torch.channels_last)
    assert not batch.is_contiguous()


def test_loader_can_give_plain_nchw_memory():
    (batch,) = NumpyBatchLoader(_images(n=2), 2, "cpu", channels_last=False)
    assert batch.is_contiguous()


def test_loader_never_writes_into_the_images():
    images = _images(dtype=np.float32)
    before = images.copy()
    for batch in NumpyBatchLoader(images, 2, "cpu", scale=0.5):
        batch.add_(1)
    np.testing.assert_array_equal(images, before)


def test_loader_casts_float64_images_to_the_requested_dtype():
    images = _images(dtype=np.float64) / 255
    (batch,) = NumpyBatchLoader(images, 5, "cpu", dtype=torch.float16)
    assert batch.dtype == torch.float16
    torch.testing.assert_close(batch, torch.from_numpy(images).half().permute(0, 3, 1, 2))


def test_loader_drop_last_and_len():
    assert len(NumpyBatchLoader(_images(n=5), 2, "cpu")) == 3
    loader = NumpyBatchLoader(_images(n=5), 2, "cpu", drop_last=True)
    assert len(loader) == 2 and [b.shape[0] for b in loader] == [2, 2]


def test_loader_shuffle_covers_every_image_once_and_repeats_with_a_seed():
    images = _images(n=7, h=1, w=1, c=1)

    def epochs(seed):
        loader = NumpyBatchLoader(images, 3, "cpu", shuffle=True, seed=seed)
        return [torch.cat(list(loader)).flatten().tolist() for _ in range(2)]

    first, second = epochs(seed=1)
    assert sorted(first) == images.flatten().tolist()
    assert first != second  # a new order each epoch
    assert epochs(seed=1) == [first, second]


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"images_nhwc": np.zeros((2, 2, 2))}, ValueError, r"\(N, H, W, C\)"),
        ({"images_nhwc": [[[[0]]]]}, TypeError, "numpy.ndarray"),
        ({"batch_size": 0}, ValueError, "batch_size >= 1"),
        ({"images_nhwc": np.zeros((1, 1, 1, 1), dtype=object)}, TypeError, "dtype object"),
    ],
)
def test_loader_rejects_bad_arguments(kwargs, error, text):
    arguments = {"images_nhwc": _images(n=1), "batch_size": 1, "device": "cpu", **kwargs}
    with pytest.raises(error, match=text):
        NumpyBatchLoader(**arguments)
