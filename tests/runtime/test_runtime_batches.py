from __future__ import annotations

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import stack_to_device
from np2torch_lint.runtime._staging import _PinnedStaging, _StagingPool
from np2torch_lint.runtime._convert import _transfer_dtype


def test_stacks_and_casts_into_one_new_batch():
    arrays = [np.full((2, 3), i, dtype=np.float64) for i in range(4)]
    batch = stack_to_device(arrays, "cpu", dtype=torch.float32)
    assert batch.shape == (4, 2, 3) and batch.dtype == torch.float32
    np.testing.assert_array_equal(batch.numpy(), np.stack(arrays))
    assert not any(np.shares_memory(batch.numpy(), a) for a in arrays)


def test_without_dtype_keeps_the_common_numpy_dtype():
    batch = stack_to_device([np.zeros(2, np.uint8), np.zeros(2, np.float32)], torch.device("cpu"))
    assert batch.dtype == torch.float32


def test_accepts_any_iterable_and_awkward_arrays():
    rgb = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    flipped = rgb[..., ::-1]
    big_endian = rgb.astype(">u2")
    read_only = rgb.copy()
    read_only.setflags(write=False)
    batch = stack_to_device(iter([flipped, big_endian, read_only]), "cpu", dtype=torch.float32)
    np.testing.assert_array_equal(batch.numpy(), np.stack([flipped, rgb, rgb]).astype(np.float32))


def test_dtype_numpy_lacks_is_cast_by_torch():
    batch = stack_to_device([np.array([1.5]), np.array([2.0])], "cpu", dtype=torch.bfloat16)
    assert batch.dtype == torch.bfloat16 and batch.tolist() == [[1.5], [2.0]]


def test_more_arrays_than_result_type_accepts():
    batch = stack_to_device([np.ones(1)] * 100, "cpu")
    assert batch.shape == (100, 1)


def test_shape_mismatch_names_the_first_array_that_differs():
    arrays = [np.zeros((2, 2))] * 3 + [np.zeros((2, 3)), np.zeros((1,))]
    with pytest.raises(ValueError, match=r"array 3 has shape \(2, 3\), array 0 has shape \(2, 2\)"):
        stack_to_device(arrays, "cpu")


def test_empty_input_raises_value_error():
    with pytest.raises(ValueError, match="at least one array"):
        stack_to_device([], "cpu")


def test_unsupported_dtype_raises_type_error():
    with pytest.raises(TypeError, match="dtype object"):
        stack_to_device([np.array([1.0], dtype=object)], "cpu")


def test_every_array_is_checked_not_only_the_first_of_each_dtype():
    good = np.zeros(2)
    with pytest.raises(TypeError, match="dtype <U1"):
        stack_to_device([good, good, np.array(["a", "b"])], "cpu")
    with pytest.raises(TypeError, match="MaskedArray"):
        stack_to_device([good, np.ma.masked_array(good)], "cpu")


def test_meta_device_gets_a_batch_of_the_target_dtype():
    batch = stack_to_device([np.ones(3), np.ones(3)], "meta", dtype=torch.float16)
    assert batch.is_meta and batch.shape == (2, 3) and batch.dtype == torch.float16


@pytest.mark.parametrize(
    ("source", "target", "moves", "transfer"),
    [
        (torch.float64, torch.float32, True, torch.float32),  # narrowing: cast first, move half
        (torch.uint8, torch.float32, True, torch.uint8),  # widening: move bytes, cast on device
        (torch.uint8, torch.float32, False, torch.float32),  # on the host: cast while copying
        (torch.float32, None, True, torch.float32),
        (torch.int32, torch.float32, True, torch.float32),  # same size: cast on the host
    ],
)
def test_transfer_dtype_casts_on_the_side_of_the_bus_that_moves_fewer_bytes(source, target, moves, transfer):
    assert _transfer_dtype(source, target, moves_to_device=moves) == transfer


class RecordingEvent:
    """A copy's event that finishes only when the host waits for it, or when told to."""

    def __init__(self, done: bool = False) -> None:
        self.synchronized = 0
        self.done = done

    def query(self) -> bool:
        return self.done

    def synchronize(self) -> None:
        self.synchronized += 1
        self.done = True


def test_staging_buffer_is_reused_for_copies_that_fit(fake_cuda):
    staging = _PinnedStaging()
    first = staging.view((4, 4), torch.float32)
    second = staging.view((2, 3), torch.float64)
    assert second.data_ptr() == first.data_ptr()
    assert second.shape == (2, 3) and second.dtype == torch.float64


def test_staging_buffer_grows_when_a_copy_does_not_fit(fake_cuda):
    staging = _PinnedStaging()
    small = staging.view((2,), torch.float32)
    large = staging.view((1000,), torch.float32)
    assert large.numel() == 1000 and large.data_ptr() != small.data_ptr()


def test_staging_buffer_waits_for_the_last_copy_before_handing_memory_out_again(fake_cuda):
    staging = _PinnedStaging()
    staging.view((3,), torch.float32)
    copy_done = RecordingEvent()
    staging.guard(copy_done)
    assert copy_done.synchronized == 0  # guarding does not wait
    staging.view((3,), torch.float32)
    assert copy_done.synchronized == 1
    staging.view((3,), torch.float32)
    assert copy_done.synchronized == 1  # waited once; the copy is known to be done


def test_staging_views_fill_through_numpy(fake_cuda):
    view = _PinnedStaging().view((2, 2), torch.int16)
    np.copyto(view.numpy(), np.array([[1, 2], [3, 4]]), casting="unsafe")
    assert view.tolist() == [[1, 2], [3, 4]]


def test_staging_view_can_be_channels_last(fake_cuda):
    view = _PinnedStaging().view((2, 3, 4, 5), torch.float32, channels_last=True)
    assert view.shape == (2, 3, 4, 5) and view.is_contiguous(memory_format=torch.channels_last)


def _in_flight(staging: _PinnedStaging) -> RecordingEvent:
    event = RecordingEvent()
    staging.guard(event)
    return event


def test_pool_gives_a_new_buffer_while_the_others_are_in_flight(fake_cuda):
    pool = _StagingPool(most=3)
    first = pool.take(16)
    _in_flight(first)
    second = pool.take(16)
    assert second is not first


def test_pool_reuses_a_buffer_whose_copy_is_done_and_prefers_the_smallest_that_fits(fake_cuda):
    pool = _StagingPool()
    big, small = pool.take(1000), pool.take(10)
    big.view((1000,), torch.uint8)
    small.view((10,), torch.uint8)
    assert pool.take(8) is small
    assert pool.take(500) is big


def test_pool_waits_for_the_oldest_copy_only_when_every_buffer_is_in_flight(fake_cuda):
    pool = _StagingPool(most=2)
    oldest = pool.take(4)
    oldest_copy = _in_flight(oldest)
    _in_flight(pool.take(4))
    again = pool.take(4)
    assert again is oldest and oldest_copy.synchronized == 0  # view() waits, take() does not
    again.view((4,), torch.uint8)
    assert oldest_copy.synchronized == 1
