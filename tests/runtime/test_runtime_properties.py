"""Property tests: round trips and casts over dtypes, shapes, strides, byte orders and flags."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from np2torch_lint.runtime import from_numpy, stack_to_device, to_numpy

# Every numpy dtype torch 2.13 holds, in both byte orders where byte order means anything.
NATIVE_DTYPES = [
    np.dtype(name)
    for name in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
]
DTYPES = NATIVE_DTYPES + [d.newbyteorder(">") for d in NATIVE_DTYPES if d.itemsize > 1]


@st.composite
def strided_arrays(draw, dtypes=st.sampled_from(DTYPES)):
    """An array, then a view of it: any step (negative included), maybe transposed, maybe read-only."""
    dtype = draw(dtypes)
    base = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)))
    steps = draw(st.lists(st.sampled_from([-2, -1, 1, 2]), min_size=base.ndim, max_size=base.ndim))
    view = base[tuple(slice(None, None, step) for step in steps)]
    view = view.transpose(draw(st.permutations(range(view.ndim))))
    if draw(st.booleans()):
        view.setflags(write=False)
    return view


@settings(max_examples=100, deadline=None)
@given(strided_arrays())
def test_from_numpy_then_to_numpy_returns_an_equal_array(array):
    result = to_numpy(from_numpy(array))
    assert result.dtype == array.dtype.newbyteorder("=")
    assert result.shape == array.shape
    np.testing.assert_array_equal(result, array)


@settings(max_examples=100, deadline=None)
@given(strided_arrays())
def test_from_numpy_shares_exactly_when_torch_can_alias_safely(array):
    tensor = from_numpy(array)
    safe_to_alias = (
        array.flags.writeable and array.dtype.isnative and all(stride >= 0 for stride in array.strides)
    )
    if array.size:  # np.shares_memory is False for empty arrays
        assert np.shares_memory(tensor.numpy(), array) == safe_to_alias


@settings(max_examples=100, deadline=None)
@given(strided_arrays())
def test_copy_true_never_shares(array):
    assert not np.shares_memory(from_numpy(array, copy=True).numpy(), array)
    assert not np.shares_memory(to_numpy(from_numpy(array), copy=True), array)


REAL_DTYPES = [d for d in DTYPES if d.kind in "biuf"]
TARGETS = [torch.float16, torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8]


@settings(max_examples=100, deadline=None)
@given(
    strided_arrays(st.sampled_from(REAL_DTYPES)).filter(lambda a: a.dtype.kind != "f"),
    st.sampled_from(TARGETS),
)
def test_cast_of_integer_arrays_matches_numpy_astype(array, target):
    # Integer and bool sources: every cast is defined (no NaN or out-of-range float -> int).
    # Large integers overflow float16 to inf; numpy warns about it, in both calls alike.
    with np.errstate(over="ignore"):
        expected = array.astype(to_numpy(torch.empty(0, dtype=target)).dtype)
        result = from_numpy(array, dtype=target)
    np.testing.assert_array_equal(result.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(strided_arrays(st.sampled_from([d for d in REAL_DTYPES if d.kind == "f"])))
def test_float_to_float32_cast_matches_numpy_astype(array):
    with np.errstate(over="ignore"):  # float64 values beyond float32's range become inf in both
        expected = array.astype(np.float32)
        result = from_numpy(array, dtype=torch.float32)
    assert result.dtype == torch.float32
    np.testing.assert_array_equal(result.numpy(), expected)


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(NATIVE_DTYPES[:-2]),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    st.integers(min_value=1, max_value=5),
    st.sampled_from([None, torch.float32, torch.float64]),
    st.data(),
)
def test_stack_to_device_matches_np_stack(dtype, shape, count, target, data):
    arrays = [data.draw(hnp.arrays(dtype, shape)) for _ in range(count)]
    expected = np.stack(arrays)
    with np.errstate(over="ignore"):  # values beyond float32's range become inf in both
        batch = stack_to_device(arrays, "cpu", dtype=target)
        if target is not None:
            expected = expected.astype(to_numpy(torch.empty(0, dtype=target)).dtype)
    np.testing.assert_array_equal(batch.numpy(), expected)
