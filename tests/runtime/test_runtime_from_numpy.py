from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import from_numpy


def _shares(tensor: torch.Tensor, array: np.ndarray) -> bool:
    return np.shares_memory(tensor.numpy(), array)


def test_plain_array_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = from_numpy(a)
    assert t.dtype == torch.float64
    assert _shares(t, a)


def test_copy_true_gives_an_independent_tensor():
    a = np.arange(3.0)
    t = from_numpy(a, copy=True)
    assert not _shares(t, a)
    t[0] = 9
    assert a[0] == 0


@pytest.mark.parametrize(
    "view",
    [lambda a: a.T, lambda a: a[:, ::2], lambda a: a[1:]],
    ids=["transposed", "every_other_column", "row_slice"],
)
def test_non_contiguous_views_share_and_keep_their_strides(view):
    a = np.arange(12.0).reshape(3, 4)
    v = view(a)
    t = from_numpy(v)
    assert _shares(t, v)
    assert t.stride() == tuple(s // v.itemsize for s in v.strides)
    np.testing.assert_array_equal(t.numpy(), v)


@pytest.mark.parametrize(
    "flip",
    [lambda a: a[::-1], np.flipud, lambda a: a[..., ::-1]],
    ids=["reversed", "flipud", "bgr_to_rgb"],
)
def test_negative_strides_are_copied_in_order(flip):
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    flipped = flip(image)
    t = from_numpy(flipped)
    np.testing.assert_array_equal(t.numpy(), flipped)
    assert not _shares(t, image)


def test_big_endian_is_byte_swapped_into_a_native_copy():
    a = np.arange(4, dtype=">f4")
    t = from_numpy(a)
    assert t.dtype == torch.float32
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])


def test_big_endian_with_dtype_is_one_cast():
    t = from_numpy(np.arange(4, dtype=">i8"), dtype=torch.float32)
    assert t.dtype == torch.float32
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])


def test_read_only_array_is_copied_not_shared():
    a = np.arange(3.0)
    a.setflags(write=False)
    t = from_numpy(a)
    assert not _shares(t, a)
    t.add_(1)
    np.testing.assert_array_equal(a, [0, 1, 2])


def test_broadcast_array_is_copied():
    a = np.broadcast_to(np.arange(3.0), (2, 3))
    t = from_numpy(a)
    np.testing.assert_array_equal(t.numpy(), a)
    t[0, 0] = 7
    assert a[1, 0] == 0


@pytest.mark.parametrize("mode", ["r", "r+", "c"])
def test_memmap_is_copied_so_tensor_writes_never_reach_the_file(tmp_path, mode):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    m = np.memmap(path, dtype=np.float32, mode=mode, shape=(4,))
    t = from_numpy(m)
    t.add_(10)
    del m
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32), [0, 1, 2, 3])


def test_plain_view_of_a_memmap_is_copied(tmp_path):
    m = np.memmap(tmp_path / "d.bin", dtype=np.float32, mode="w+", shape=(4,))
    view = np.asarray(m)[1:]
    assert not _shares(from_numpy(view), view)


def test_misaligned_strides_of_a_structured_field_are_copied():
    rec = np.zeros(3, dtype=[("x", "<f4"), ("y", "<i2")])
    rec["x"] = [1, 2, 3]
    np.testing.assert_array_equal(from_numpy(rec["x"]).numpy(), [1, 2, 3])


@pytest.mark.parametrize(("scalar", "dtype"), [
    (np.float64(1.5), torch.float64), (np.float32(2), torch.float32), (np.int64(3), torch.int64),
    (np.bool_(True), torch.bool),
])
def test_numpy_scalar_becomes_a_0d_tensor_of_its_dtype(scalar, dtype):
    t = from_numpy(scalar)
    assert t.shape == () and t.dtype == dtype
    assert t.item() == scalar.item()


def test_zero_d_array_shares():
    a = np.array(3.5)
    t = from_numpy(a)
    assert t.shape == () and _shares(t, a)


def test_dtype_casts_into_new_memory():
    a = np.arange(4.0)
    t = from_numpy(a, dtype=torch.float32)
    assert t.dtype == torch.float32
    assert not _shares(t, a)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])


def test_same_dtype_still_shares():
    a = np.arange(4, dtype=np.float32)
    assert _shares(from_numpy(a, dtype=torch.float32, device="cpu"), a)


def test_float64_to_float16_is_rounded_once():
    # Halfway between two float16 values plus a little: correct rounding goes up; torch's
    # float64 -> float32 -> float16 path rounds twice and goes down.
    a = np.array([1 + 2**-11 + 2**-40])
    assert from_numpy(a, dtype=torch.float16).item() == float(a.astype(np.float16)[0]) > 1.0


def test_dtype_numpy_lacks_is_cast_by_torch():
    t = from_numpy(np.array([1.5, -2.0]), dtype=torch.bfloat16)
    assert t.dtype == torch.bfloat16
    assert t.tolist() == [1.5, -2.0]


def test_torch_only_dtype_from_a_flipped_array():
    t = from_numpy(np.arange(3.0)[::-1], dtype=torch.bfloat16)
    assert t.tolist() == [2.0, 1.0, 0.0]


def test_uint8_image_to_float32():
    img = np.array([[0, 255]], dtype=np.uint8)
    np.testing.assert_array_equal(from_numpy(img, dtype=torch.float32).numpy(), [[0.0, 255.0]])


def test_explicit_cpu_device_shares():
    a = np.arange(3.0)
    assert _shares(from_numpy(a, device=torch.device("cpu")), a)


def test_meta_device_moves_without_data():
    t = from_numpy(np.arange(3.0), device="meta", dtype=torch.float32)
    assert t.is_meta and t.dtype == torch.float32 and t.shape == (3,)


@pytest.mark.parametrize(
    ("array", "dtype_text", "advice"),
    [
        (np.array([1.0, None]), "object", "np.asarray"),
        (np.array(["a", "b"]), "<U1", "map the strings"),
        (np.array([b"a"]), "|S1", "decode"),
        (np.array(["2024-01-01"], dtype="datetime64[ns]"), "datetime64[ns]", "astype"),
        (np.array([1], dtype="timedelta64[s]"), "timedelta64[s]", "timedelta64"),
        (np.zeros(2, dtype=[("x", "<f4")]), "[('x', '<f4')]", "structured_to_unstructured"),
        (np.zeros(2, dtype=np.longdouble), str(np.dtype(np.longdouble)), "astype"),
    ],
    ids=["object", "str", "bytes", "datetime", "timedelta", "structured", "longdouble"],
)
def test_unsupported_dtypes_raise_type_error_naming_dtype_and_remedy(array, dtype_text, advice):
    with pytest.raises(TypeError) as caught:
        from_numpy(array)
    message = str(caught.value)
    assert f"dtype {dtype_text}:" in message
    assert advice in message


def test_masked_array_is_refused_instead_of_dropping_the_mask():
    with pytest.raises(TypeError, match=r"filled"):
        from_numpy(np.ma.masked_array([1.0, 2.0], mask=[True, False]))


@pytest.mark.parametrize(("value", "text"),
                         [([1.0], "got list"), (torch.ones(1), "already a tensor"), (1.0, "got float")])
def test_non_numpy_input_raises_type_error_naming_the_type(value, text):
    with pytest.raises(TypeError, match=text):
        from_numpy(value)


def test_numpy_dtype_as_dtype_argument_is_refused():
    with pytest.raises(TypeError, match="torch.dtype"):
        from_numpy(np.ones(2), dtype=np.float32)


def _run_fresh(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=True,
    )
    return result.stdout + result.stderr


def test_read_only_array_does_not_fire_torchs_once_per_process_warning():
    # The warning fires once per process, so only a fresh process can show its absence. The
    # control call at the end proves the warning was still armed.
    output = _run_fresh(
        """
        import warnings
        import numpy as np, torch
        from np2torch_lint.runtime import from_numpy
        a = np.arange(3.0); a.setflags(write=False)
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            from_numpy(a)
        with warnings.catch_warnings(record=True) as control:
            warnings.simplefilter("always")
            torch.from_numpy(a)
        print("ours", sum("not writable" in str(w.message) for w in ours))
        print("control", sum("not writable" in str(w.message) for w in control))
        """
    )
    assert "ours 0" in output
    assert "control 1" in output


def test_runtime_never_imports_libcst():
    output = _run_fresh(
        """
        import sys
        import np2torch_lint.runtime
        print("libcst" in sys.modules, "np2torch_lint.cli" in sys.modules)
        """
    )
    assert output.strip().endswith("False False")


# ----------------------------------------------------------------------------- copy= as torch.asarray has it


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: np.arange(3.0)[::-1], "negative strides"),
        (lambda: np.arange(3, dtype=">f4"), "byte order"),
        (lambda: np.broadcast_to(np.arange(3.0), (2, 3)), "read-only"),
    ],
    ids=["flipped", "big_endian", "read_only"],
)
def test_copy_false_raises_where_torch_cannot_alias(make, reason):
    with pytest.raises(ValueError, match=rf"copy=False\) cannot share the array's memory: .*{reason}"):
        from_numpy(make(), copy=False)


def test_copy_false_raises_for_a_dtype_change_or_a_device():
    with pytest.raises(ValueError, match=r"it is float64 and the tensor is to be torch.float32"):
        from_numpy(np.arange(3.0), dtype=torch.float32, copy=False)
    with pytest.raises(ValueError, match=r"the tensor goes to meta"):
        from_numpy(np.arange(3.0), device="meta", copy=False)


def test_copy_false_shares_a_plain_array_and_a_memmap(tmp_path):
    a = np.arange(3.0)
    assert _shares(from_numpy(a, copy=False, dtype=torch.float64, device="cpu"), a)
    m = np.memmap(tmp_path / "d.bin", dtype=np.float32, mode="w+", shape=(3,))
    from_numpy(m, copy=False).add_(1)  # asked for: the tensor is the file
    m.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "d.bin", dtype=np.float32), [1, 1, 1])


def test_copy_none_is_the_default_and_copies_only_when_needed():
    a = np.arange(3.0)
    assert _shares(from_numpy(a, copy=None), a)
    np.testing.assert_array_equal(from_numpy(a[::-1], copy=None).numpy(), [2.0, 1.0, 0.0])


def test_copy_must_be_none_or_a_bool():
    with pytest.raises(TypeError, match="copy to be None, True or False"):
        from_numpy(np.ones(1), copy="yes")


# ----------------------------------------------------------------------------- casts: who casts, and that it matches


def test_float64_to_float32_is_cast_by_torch_and_matches_numpy():
    a = np.random.default_rng(0).standard_normal((64, 64)) * 1e30  # some overflow to inf in both
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(from_numpy(a, dtype=torch.float32).numpy(), a.astype(np.float32))


def test_cast_keeps_the_memory_order_of_a_transposed_array():
    a = np.arange(12.0).reshape(3, 4).T
    t = from_numpy(a, dtype=torch.float32)
    assert t.stride() == (1, 4)  # order "K": laid out as the array is
    np.testing.assert_array_equal(t.numpy(), a)


def test_bfloat16_cast_on_the_host_keeps_the_memory_order():
    a = np.arange(12.0).reshape(3, 4).T
    t = from_numpy(a, dtype=torch.bfloat16)
    assert t.dtype == torch.bfloat16 and t.stride() == (1, 4)
    assert t.tolist() == a.tolist()


# ----------------------------------------------------------------------------- numpy's other names for a dtype


@pytest.mark.parametrize("scalar_type", [np.ulonglong, np.longlong, np.uintc, np.intc])
def test_every_numpy_spelling_of_an_integer_dtype_converts_and_shares(scalar_type):
    a = np.arange(4, dtype=scalar_type)
    t = from_numpy(a)
    assert t.tolist() == [0, 1, 2, 3] and _shares(t, a)
    assert from_numpy(a, copy=False).dtype == t.dtype
