"""The batches DevicePrefetcher walks: every container comes back with its type, every tensor moved."""

from __future__ import annotations

import dataclasses
import types
from collections import OrderedDict, UserDict, defaultdict, deque, namedtuple

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import DevicePrefetcher


def _moved(batch, **options):
    (out,) = DevicePrefetcher([batch], "cpu", **options)
    return out


def _is_moved(tensor, source):
    """A new tensor of the same values: the prefetcher always hands out memory of its own."""
    return isinstance(tensor, torch.Tensor) and not np.shares_memory(tensor.numpy(), np.asarray(source))


@dataclasses.dataclass
class Sample:
    image: np.ndarray
    label: int
    extra: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class FrozenSample:
    image: np.ndarray
    scale: float = 1.0


@dataclasses.dataclass
class WithDerived:
    image: np.ndarray
    pixels: int = dataclasses.field(init=False)

    def __post_init__(self):
        self.pixels = self.image.shape[0]


def test_dataclasses_are_rebuilt_with_their_leaves_moved():
    source = np.ones(3)
    out = _moved(Sample(source, 7, {"mask": np.array([True])}))
    assert isinstance(out, Sample) and out.label == 7
    assert _is_moved(out.image, source) and out.extra["mask"].dtype == torch.bool


def test_frozen_dataclasses_and_post_init_fields_work():
    out = _moved(FrozenSample(np.ones(2), 0.5))
    assert isinstance(out, FrozenSample) and isinstance(out.image, torch.Tensor) and out.scale == 0.5
    derived = _moved(WithDerived(np.ones(4)))
    assert isinstance(derived.image, torch.Tensor) and derived.pixels == 4


class BatchEncoding(UserDict):
    """Shaped like Hugging Face's: a UserDict with attributes of its own and a .to() that moves torch tensors only."""

    def __init__(self, data=None, encodings=None):
        super().__init__(data)
        self._encodings = encodings

    def to(self, device):
        self.data = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in self.data.items()}
        return self


def test_userdict_batches_keep_their_type_attributes_and_numpy_leaves_are_moved_too():
    source = BatchEncoding({"input_ids": np.arange(4), "attention_mask": torch.ones(4)}, encodings=["enc"])
    out = _moved(source)
    assert type(out) is BatchEncoding and out._encodings == ["enc"]
    assert isinstance(out["input_ids"], torch.Tensor) and out["input_ids"].dtype == torch.int64
    assert isinstance(source["input_ids"], np.ndarray)  # the source batch is left as it was


def test_ordered_and_default_dicts_keep_their_type_order_and_factory():
    ordered = _moved(OrderedDict([("b", np.ones(1)), ("a", np.zeros(1))]))
    assert type(ordered) is OrderedDict and list(ordered) == ["b", "a"]
    counts = _moved(defaultdict(list, {"x": np.ones(1)}))
    assert type(counts) is defaultdict and counts.default_factory is list
    assert isinstance(counts["x"], torch.Tensor) and counts["missing"] == []


def test_read_only_mappings_are_rebuilt_from_a_dict():
    out = _moved(types.MappingProxyType({"x": np.ones(1)}))
    assert isinstance(out, types.MappingProxyType) and isinstance(out["x"], torch.Tensor)


def test_sequences_keep_their_types():
    Pair = namedtuple("Pair", ["x", "y"])

    class Batch(list):
        pass

    out = _moved((Pair(np.ones(1), 2), deque([np.ones(1)], maxlen=3), Batch([np.ones(1)])))
    pair, queue, batch = out
    assert isinstance(pair, Pair) and isinstance(pair.x, torch.Tensor) and pair.y == 2
    assert isinstance(queue, deque) and queue.maxlen == 3 and isinstance(queue[0], torch.Tensor)
    assert type(batch) is Batch and isinstance(batch[0], torch.Tensor)


class Packed:
    """An object with its own .to(), like PackedSequence or TensorDict: it knows what stays on the host."""

    def __init__(self, data, lengths):
        self.data, self.lengths = data, lengths

    def to(self, device):
        return Packed(self.data.to(device), self.lengths)


class MovesInPlace:
    def __init__(self):
        self.moved_to = None

    def to(self, device):  # forgets to return self, as Lightning also allows
        self.moved_to = device


def test_objects_with_their_own_to_are_moved_by_it():
    lengths = torch.tensor([3, 1])
    out = _moved({"packed": Packed(torch.ones(4), lengths), "inplace": MovesInPlace()})
    assert isinstance(out["packed"], Packed) and out["packed"].lengths is lengths
    assert out["inplace"].moved_to == torch.device("cpu")


def test_skip_keys_leave_values_on_the_host_at_any_depth():
    ids, raw = np.arange(3), np.ones(2)
    out = _moved({"x": np.ones(2), "meta": {"ids": ids}, "sample": Sample(raw, 0)}, skip_keys=["ids", "image"])
    assert isinstance(out["x"], torch.Tensor)
    assert out["meta"]["ids"] is ids and out["sample"].image is raw
    assert _moved({"raw": raw}, skip_keys="raw")["raw"] is raw  # one key as a string


def test_object_arrays_are_an_error_naming_where_they_sit():
    with pytest.raises(TypeError, match=r"batch\['meta'\]\[1\], an array of dtype object.*skip_keys"):
        _moved({"x": np.ones(1), "meta": [np.ones(1), np.array([{"a": 1}], dtype=object)]})
    with pytest.raises(TypeError, match=r"batch\.image, an array of dtype datetime64"):
        _moved(Sample(np.array(["2024-01-01"], dtype="datetime64[D]"), 0))


def test_skipped_object_arrays_pass_through():
    meta = np.array([None, "a"], dtype=object)
    assert _moved({"meta": meta, "x": np.ones(1)}, skip_keys=["meta"])["meta"] is meta


def test_text_and_unknown_objects_pass_through_unchanged():
    names, path, marker = np.array(["a.png", "b.png"]), "a.png", object()
    out = _moved((names, path, marker, None, 3, 2.5))
    assert out[0] is names and out[1] is path and out[2] is marker and out[3:] == (None, 3, 2.5)


def test_containers_without_tensor_data_come_back_as_they_are():
    item = {"names": ["a", "b"], "sizes": (1, 2)}
    assert _moved(item) is item


def test_nested_structures_are_walked_all_the_way_down():
    out = _moved({"a": [{"b": (np.float32(1.5), [np.ones((2, 2), dtype=np.float64)])}]}, dtype=torch.float16)
    scalar, (matrix,) = out["a"][0]["b"]
    assert scalar.dtype == torch.float16 and scalar.shape == () and matrix.dtype == torch.float16


def test_ulonglong_arrays_convert_like_uint64():
    (out,) = DevicePrefetcher([np.arange(3, dtype=np.ulonglong)], "cpu")
    assert out.dtype == torch.uint64 and out.tolist() == [0, 1, 2]
