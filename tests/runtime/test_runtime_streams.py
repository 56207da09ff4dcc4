"""The ordering of every CUDA path, checked on the CPU against the recording fake of fake_cuda.py.

The fake raises OrderingError where a GPU could read memory before it is written, reuse memory still in
use on another stream, or have its staging buffer refilled under a copy; these tests also read its log
for which stream waits on which, and when the host blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fake_cuda import OrderingError

from np2torch_lint.runtime import DevicePrefetcher, from_numpy, stack_to_device, to_numpy, to_numpy_async


def _device_leaves(batch):
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        return [t for value in batch.values() for t in _device_leaves(value)]
    if isinstance(batch, (list, tuple)):
        return [t for value in batch for t in _device_leaves(value)]
    return []


def _consume(fake, prefetcher, device=None):
    """Iterate as a training loop does: a kernel on the current stream reads each batch as it comes."""
    batches = []
    for batch in prefetcher:
        fake.kernel(reads=_device_leaves(batch), device=device)
        batches.append(batch)
    return batches


# ----------------------------------------------------------------------------- DevicePrefetcher


def test_prefetcher_copies_a_gpu_leaf_only_after_the_producer_stream_wrote_it(fake_cuda):
    produced = [fake_cuda.tensor(torch.full((4,), float(i))) for i in range(3)]  # kernels on default:0
    batches = _consume(fake_cuda, DevicePrefetcher(produced, "cuda"))
    assert [b.tolist() for b in batches] == [[0.0] * 4, [1.0] * 4, [2.0] * 4]
    waits = fake_cuda.entries("wait_stream")
    assert waits and all(waiter.startswith("side") and producer == "default:0" for waiter, producer in waits)


def test_prefetcher_waits_for_the_producer_stream_the_batch_was_fetched_on(fake_cuda):
    producer = fake_cuda.new_stream("cuda")

    def augmented():  # GPU augmentation on the stream the training loop runs on
        for i in range(3):
            yield fake_cuda.tensor(torch.full((2,), float(i)))

    with fake_cuda.use_stream(producer):
        batches = _consume(fake_cuda, DevicePrefetcher(augmented(), "cuda", depth=2))
    assert len(batches) == 3
    assert {producer_name for _, producer_name in fake_cuda.entries("wait_stream")} == {producer.name}


def test_prefetcher_never_makes_its_copy_stream_wait_on_itself(fake_cuda):
    items = [(fake_cuda.tensor([1.0, 2.0]), np.ones(2))] * 3
    _consume(fake_cuda, DevicePrefetcher(items, "cuda"))
    assert all(waiter != waited for waiter, waited in fake_cuda.entries("wait_stream"))


def test_prefetcher_records_a_gpu_leaf_on_its_copy_stream(fake_cuda):
    leaf = fake_cuda.tensor([1.0])
    _consume(fake_cuda, DevicePrefetcher([leaf], "cuda"))
    (recorded,) = [stream for label, stream in fake_cuda.entries("record_stream") if stream.startswith("side")]
    assert recorded


def test_consumer_waits_for_each_batch_copy_event_before_reading_it(fake_cuda):
    batches = [np.full((3, 2), i, dtype=np.float32) for i in range(5)]
    got = _consume(fake_cuda, DevicePrefetcher(batches, "cuda", depth=2))  # a read before the wait raises
    np.testing.assert_array_equal(torch.stack(got).numpy(), np.stack(batches))
    assert [waiter for waiter, _ in fake_cuda.entries("wait_event")] == ["default:0"] * 5


def test_consumer_waits_on_its_batch_event_not_on_the_whole_copy_stream(fake_cuda):
    _consume(fake_cuda, DevicePrefetcher([np.ones(2)] * 4, "cuda", depth=3))
    recorded = [event for event, stream in fake_cuda.entries("record") if stream.startswith("side")]
    waited = [event for _, event in fake_cuda.entries("wait_event")]
    assert waited == recorded  # batch k's own event, in order: not the later batches queued behind it
    assert not [w for w in fake_cuda.entries("wait_stream") if w[0] == "default:0"]


def test_each_yielded_tensor_is_recorded_on_the_consumer_stream(fake_cuda):
    items = [{"x": np.ones((2, 2)), "y": np.arange(2)} for _ in range(3)]
    batches = _consume(fake_cuda, DevicePrefetcher(items, "cuda"))  # an unrecorded read raises
    recorded = fake_cuda.entries("record_stream")
    assert sum(stream == "default:0" for _, stream in recorded) == 2 * len(batches)


def test_consumer_on_its_own_stream_waits_and_records_there(fake_cuda):
    consumer = fake_cuda.new_stream("cuda")
    with fake_cuda.use_stream(consumer):
        _consume(fake_cuda, DevicePrefetcher([np.ones(3)] * 3, "cuda"))
    assert {waiter for waiter, _ in fake_cuda.entries("wait_event")} == {consumer.name}
    assert {stream for _, stream in fake_cuda.entries("record_stream")} == {consumer.name}


def test_staging_buffers_are_refilled_only_after_their_copy_is_known_done(fake_cuda):
    batches = [np.full(8, i, dtype=np.float32) for i in range(6)]
    got = _consume(fake_cuda, DevicePrefetcher(batches, "cuda", depth=1))  # a refill under a copy raises
    assert [int(b[0]) for b in got] == list(range(6))
    assert fake_cuda.host_waits()  # two buffer sets for six batches: the host waited to reuse them


def test_iteration_stopped_early_frees_no_staging_buffer_a_copy_still_reads(fake_cuda):
    iterator = iter(DevicePrefetcher([np.ones(4)] * 5, "cuda", depth=3))
    next(iterator)
    assert fake_cuda.staging_buffers_in_flight()
    iterator.close()  # a `break` out of the loop, once the generator is collected: its buffers are freed
    assert fake_cuda.freed_in_flight == []


def test_exhausted_iteration_frees_no_staging_buffer_a_copy_still_reads(fake_cuda):
    _consume(fake_cuda, DevicePrefetcher([np.ones(4)] * 3, "cuda"))
    assert fake_cuda.freed_in_flight == []


def test_pinned_cpu_tensors_are_copied_straight_from_without_staging(fake_cuda):
    items = [fake_cuda.pinned(torch.full((4,), 2.0)) for _ in range(2)]
    got = _consume(fake_cuda, DevicePrefetcher(items, "cuda"))
    assert [b.tolist() for b in got] == [[2.0] * 4] * 2
    assert fake_cuda.entries("pinned") == []


def test_prefetcher_narrows_on_the_host_to_bfloat16_before_the_transfer(fake_cuda):
    (batch,) = _consume(fake_cuda, DevicePrefetcher([np.linspace(0, 1, 8)], "cuda", dtype=torch.bfloat16))
    assert batch.dtype == torch.bfloat16
    assert [(source, target) for source, target, _ in fake_cuda.entries("copy")] == [(torch.bfloat16,) * 2]
    torch.testing.assert_close(batch, torch.linspace(0, 1, 8, dtype=torch.float64).to(torch.bfloat16))


def test_prefetcher_widens_uint8_on_the_device_after_the_transfer(fake_cuda):
    (batch,) = _consume(fake_cuda, DevicePrefetcher([(np.full(4, 255, dtype=np.uint8),)], "cuda", dtype=torch.float16))
    # integer leaves keep their dtype: uint8 crosses as uint8 and stays uint8
    assert batch[0].dtype == torch.uint8
    (batch,) = _consume(fake_cuda, DevicePrefetcher([torch.full((4,), 255, dtype=torch.uint8).float()], "cuda"))
    assert batch.dtype == torch.float32


def test_prefetcher_lays_out_channels_last_while_staging(fake_cuda):
    nchw = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    (batch,) = _consume(fake_cuda, DevicePrefetcher([nchw], "cuda", channels_last=True))
    assert batch.is_contiguous(memory_format=torch.channels_last)
    np.testing.assert_array_equal(batch.numpy(), nchw)
    (copied,) = fake_cuda.entries("copy")
    assert copied[:2] == (torch.float32, torch.float32)  # one straight copy, no second pass on the device


def test_objects_with_their_own_to_are_moved_on_the_consumer_stream_at_hand_out(fake_cuda):
    moved_on = []

    class Packed:
        def __init__(self, data):
            self.data = data

        def to(self, device):
            moved_on.append(fake_cuda.current_stream(device).name)
            return Packed(fake_cuda.tensor(self.data))

    consumer = fake_cuda.new_stream("cuda")
    with fake_cuda.use_stream(consumer):
        (batch,) = list(DevicePrefetcher([{"packed": Packed(torch.ones(2)), "x": np.ones(2)}], "cuda"))
    assert isinstance(batch["packed"], Packed) and moved_on == [consumer.name]


def test_prefetcher_to_a_second_gpu_uses_its_streams(fake_cuda):
    leaf_on_gpu1 = fake_cuda.tensor([5.0], device="cuda:1")
    batches = _consume(fake_cuda, DevicePrefetcher([(np.ones(2), leaf_on_gpu1)], "cuda:1"), "cuda:1")
    assert batches[0][1].tolist() == [5.0]
    assert {waiter for waiter, _ in fake_cuda.entries("wait_event")} == {"default:1"}


def test_leaf_on_another_gpu_is_copied_in_order_with_its_producer(fake_cuda):
    leaf_on_gpu1 = fake_cuda.tensor([7.0], device="cuda:1")
    (batch,) = _consume(fake_cuda, DevicePrefetcher([leaf_on_gpu1], "cuda:0"))
    assert batch.tolist() == [7.0]


# ----------------------------------------------------------------------------- stack_to_device


def test_two_stack_to_device_calls_in_one_step_never_block_the_host(fake_cuda):
    images = [np.ones((4, 4, 3))] * 8
    labels = [np.int64(3)] * 8
    for _ in range(3):  # three steps of a training loop
        x = stack_to_device(images, "cuda", dtype=torch.float32)
        y = stack_to_device(labels, "cuda")
        fake_cuda.kernel(reads=[x, y])
        fake_cuda.current_stream("cuda").synchronize()  # loss.item() at the end of the step
    assert fake_cuda.host_waits() == ["stream default:0"] * 3  # the loop's own waits, none of the runtime's
    assert len(fake_cuda.entries("pinned")) == 2


def test_stack_to_device_waits_for_the_oldest_copy_only_when_every_buffer_is_in_flight(fake_cuda):
    arrays = [np.full(16, 1.0)] * 4
    for call in range(6):
        batch = stack_to_device(arrays, "cuda")  # a refill under an in-flight copy raises
        fake_cuda.kernel(reads=[batch])
        assert len(fake_cuda.host_waits()) == max(0, call - 3)
    assert len(fake_cuda.entries("pinned")) == 4


def test_stack_to_device_queues_its_copy_and_event_on_the_current_stream(fake_cuda):
    stream = fake_cuda.new_stream("cuda")
    with fake_cuda.use_stream(stream):
        batch = stack_to_device([np.ones(2)] * 2, "cuda")
        fake_cuda.kernel(reads=[batch])  # the batch is used on the stream current at the call
    assert fake_cuda.entries("record") == [(fake_cuda.entries("record")[0][0], stream.name)]


def test_stack_to_device_narrows_to_bfloat16_on_the_host(fake_cuda):
    arrays = [np.linspace(0, 1, 16)] * 3
    batch = stack_to_device(arrays, "cuda", dtype=torch.bfloat16)
    assert [(s, t) for s, t, _ in fake_cuda.entries("copy")] == [(torch.bfloat16, torch.bfloat16)]
    torch.testing.assert_close(batch, torch.from_numpy(np.stack(arrays)).to(torch.bfloat16))


def test_stack_to_device_widens_on_the_device(fake_cuda):
    batch = stack_to_device([np.full((2,), 255, dtype=np.uint8)] * 2, "cuda", dtype=torch.float32)
    assert [(s, t) for s, t, _ in fake_cuda.entries("copy")] == [(torch.uint8, torch.uint8)]
    assert batch.dtype == torch.float32 and batch.flatten().tolist() == [255.0] * 4


def test_stack_to_device_keeps_one_pool_per_device(fake_cuda):
    stack_to_device([np.ones(2)], "cuda:0")
    stack_to_device([np.ones(2)], "cuda:1")
    stack_to_device([np.ones(2)], "cuda:1")
    assert fake_cuda.host_waits() == [] and len(fake_cuda.entries("pinned")) == 3


# ----------------------------------------------------------------------------- from_numpy / to_numpy


def test_from_numpy_to_cuda_does_not_block_from_pageable_memory(fake_cuda):
    t = from_numpy(np.arange(4.0), device="cuda")
    assert fake_cuda.entries("to_device") == [(torch.float64, "cuda", True)]
    assert fake_cuda.host_waits() == []
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_from_numpy_to_cuda_blocks_when_the_array_is_pinned_memory(fake_cuda):
    pinned = fake_cuda.pinned(torch.arange(4.0))
    from_numpy(pinned.numpy(), device="cuda")  # non-blocking, the copy would read `a` after the return
    assert fake_cuda.entries("to_device") == [(torch.float32, "cuda", False)]
    assert fake_cuda.host_waits()


def test_from_numpy_narrows_to_bfloat16_on_the_host_before_the_transfer(fake_cuda):
    t = from_numpy(np.linspace(0, 1, 5), dtype=torch.bfloat16, device="cuda")
    assert fake_cuda.entries("to_device") == [(torch.bfloat16, "cuda", True)]
    assert t.dtype == torch.bfloat16


def test_from_numpy_to_mps_sends_bfloat16_not_float64(fake_cuda, monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    t = from_numpy(np.linspace(0, 1, 5), dtype=torch.bfloat16, device="mps")  # MPS has no float64
    assert fake_cuda.entries("to_device") == [(torch.bfloat16, "mps", False)]
    assert t.dtype == torch.bfloat16


def test_to_numpy_of_a_pinned_tensor_waits_for_the_copy_still_writing_it(fake_cuda):
    on_device = fake_cuda.tensor([1.0, 2.0])
    landing = fake_cuda.pinned(torch.zeros(2))
    fake_cuda.copy(landing, on_device)  # x.to("cpu", non_blocking=True): in flight
    array = to_numpy(landing)
    assert fake_cuda.host_knows_done(*fake_cuda.last_write(landing))
    assert np.shares_memory(array, landing.numpy())  # still the alias, now complete


def test_to_numpy_of_pageable_memory_never_synchronizes(fake_cuda):
    to_numpy(torch.ones(2))
    assert fake_cuda.host_waits() == []


def test_to_numpy_async_result_waits_for_its_copy_event_only(fake_cuda):
    on_device = fake_cuda.tensor([3.0, 4.0])
    pending = to_numpy_async(on_device)
    assert not pending.done() and fake_cuda.host_waits() == []
    result = pending.result()
    assert result.tolist() == [3.0, 4.0]
    (waited,) = fake_cuda.host_waits()
    assert waited.startswith("event")


def test_to_numpy_async_converts_a_bfloat16_device_tensor(fake_cuda):
    pending = to_numpy_async(fake_cuda.tensor(torch.tensor([1.5], dtype=torch.bfloat16)))
    assert pending.result().dtype == np.float32 and pending.result().tolist() == [1.5]


# ----------------------------------------------------------------------------- the fake itself


def test_the_fake_catches_a_read_with_no_wait(fake_cuda):
    side = fake_cuda.new_stream("cuda")
    written = fake_cuda.tensor([1.0])
    with fake_cuda.use_stream(side), pytest.raises(OrderingError, match="missing wait"):
        fake_cuda.kernel(reads=[written])


def test_the_fake_catches_a_use_on_another_stream_without_record_stream(fake_cuda):
    side = fake_cuda.new_stream("cuda")
    written = fake_cuda.tensor([1.0])
    side.wait_stream(fake_cuda.current_stream("cuda"))
    with fake_cuda.use_stream(side), pytest.raises(OrderingError, match="record_stream"):
        fake_cuda.kernel(reads=[written])
