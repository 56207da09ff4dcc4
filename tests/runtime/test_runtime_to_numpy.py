from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from np2torch_lint.runtime import to_numpy


def test_plain_cpu_tensor_shares_memory():
    t = torch.arange(4.0)
    a = to_numpy(t)
    assert np.shares_memory(a, t.numpy())
    a[0] = 42
    assert t[0].item() == 42


def test_copy_true_returns_an_independent_array():
    t = torch.arange(4.0)
    a = to_numpy(t, copy=True)
    assert not np.shares_memory(a, t.numpy())
    a[0] = 42
    assert t[0].item() == 0


@pytest.mark.parametrize("make", [
    lambda: torch.nn.Parameter(torch.ones(3)), lambda: torch.ones(3, requires_grad=True) * 2,
])
def test_tensor_requiring_grad_is_copied_never_aliased(make):
    t = make()
    a = to_numpy(t)
    assert not np.shares_memory(a, t.detach().numpy())
    a[0] = 5
    assert t.detach()[0].item() != 5
    assert t.requires_grad


def test_parameter_under_no_grad_is_still_copied():
    p = torch.nn.Parameter(torch.ones(3))
    with torch.no_grad():
        a = to_numpy(p)
    assert not np.shares_memory(a, p.detach().numpy())


def test_detached_parameter_is_the_explicit_way_to_alias():
    p = torch.nn.Parameter(torch.ones(3))
    a = to_numpy(p.detach())
    assert np.shares_memory(a, p.detach().numpy())


def test_grad_tensor_conversion_emits_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_numpy(torch.ones(3, requires_grad=True))


def test_conjugate_bit_is_resolved_into_a_copy():
    z = torch.tensor([1 + 2j, 3 - 4j])
    a = to_numpy(z.conj())
    np.testing.assert_array_equal(a, np.array([1 - 2j, 3 + 4j]))
    assert not np.shares_memory(a, z.numpy())


def test_negative_bit_is_resolved():
    t = torch.tensor([1.0, 2.0])
    a = to_numpy(t._neg_view())
    np.testing.assert_array_equal(a, [-1.0, -2.0])
    assert not np.shares_memory(a, t.numpy())


def test_conj_of_real_tensor_still_shares():
    t = torch.ones(3)
    assert np.shares_memory(to_numpy(t.conj()), t.numpy())


@pytest.mark.parametrize(
    ("dtype", "numpy_dtype"),
    [
        (torch.bfloat16, np.float32),
        (torch.float8_e4m3fn, np.float16),
        (torch.float8_e5m2, np.float16),
        (torch.float8_e4m3fnuz, np.float16),
        (torch.float8_e5m2fnuz, np.float16),
        (torch.float8_e8m0fnu, np.float32),
    ],
)
def test_float_dtypes_numpy_lacks_are_upcast_exactly(dtype, numpy_dtype):
    every_bit_pattern = torch.arange(256, dtype=torch.uint8)
    t = every_bit_pattern.view(dtype) if dtype.itemsize == 1 else torch.randn(64).to(dtype)
    a = to_numpy(t)
    assert a.dtype == numpy_dtype
    with np.errstate(invalid="ignore"):  # torch turns the float8_e8m0fnu NaN into a signaling NaN
        np.testing.assert_array_equal(a.astype(np.float64), t.double().numpy())  # NaNs compare equal here


def test_complex32_is_upcast_to_complex64():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ComplexHalf support is experimental"
        t = torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64).to(torch.complex32)
    a = to_numpy(t)
    assert a.dtype == np.complex64
    np.testing.assert_array_equal(a, [1 + 2j, -0.5j])


def test_bfloat16_parameter_is_upcast():
    p = torch.nn.Parameter(torch.tensor([1.5, -2.0], dtype=torch.bfloat16))
    np.testing.assert_array_equal(to_numpy(p), np.array([1.5, -2.0], dtype=np.float32))


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
@pytest.mark.parametrize("layout", ["coo", "csr", "csc"])
def test_sparse_tensors_are_densified(layout):
    dense = torch.tensor([[0.0, 2.0], [3.0, 0.0]])
    sparse = {"coo": dense.to_sparse, "csr": dense.to_sparse_csr, "csc": dense.to_sparse_csc}[layout]()
    np.testing.assert_array_equal(to_numpy(sparse), dense.numpy())


def test_inference_tensor_converts_and_shares():
    with torch.inference_mode():
        t = torch.arange(3.0)
    a = to_numpy(t)
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    assert np.shares_memory(a, t.numpy())
    assert not np.shares_memory(to_numpy(t, copy=True), t.numpy())


def test_quantized_tensor_is_dequantized():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation functions are deprecated in torch 2.13
        q = torch.quantize_per_tensor(torch.tensor([0.5, 1.0]), 0.5, 0, torch.quint8)
    a = to_numpy(q)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, [0.5, 1.0])


def test_zero_d_and_transposed_tensors_keep_shape_and_strides():
    assert to_numpy(torch.tensor(3.0)).shape == ()
    t = torch.arange(6.0).reshape(2, 3).T
    a = to_numpy(t)
    assert a.strides == (4, 12)
    assert np.shares_memory(a, t.numpy())


def test_ndarray_is_returned_unchanged_or_copied_on_request():
    a = np.arange(3)
    assert to_numpy(a) is a
    b = to_numpy(a, copy=True)
    assert b is not a and not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("value", "name"), [([1, 2], "list"), (3.0, "float"), (None, "NoneType")])
def test_other_types_raise_type_error_naming_the_type(value, name):
    with pytest.raises(TypeError, match=rf"got {name}$"):
        to_numpy(value)


def test_meta_tensor_raises_type_error():
    with pytest.raises(TypeError, match="meta tensor"):
        to_numpy(torch.empty(3, device="meta"))


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_nested_tensor_raises_type_error_with_the_way_out():
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    with pytest.raises(TypeError, match=r"unbind"):
        to_numpy(nested)


def test_dtype_numpy_cannot_hold_raises_naming_it():
    with pytest.raises(TypeError, match="torch.uint4"):
        to_numpy(torch.empty(2, dtype=torch.uint4))


# ----------------------------------------------------------------------------- copy= as np.asarray has it


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: torch.ones(2, requires_grad=True), r"requires grad.*to_numpy\(t.detach\(\)\)"),
        (lambda: torch.ones(2, dtype=torch.bfloat16), "numpy has no torch.bfloat16"),
        (lambda: torch.tensor([1 + 1j]).conj(), "conjugate or negative view"),
        (lambda: torch.eye(2).to_sparse(), "layout is torch.sparse_coo"),
        (lambda: torch.empty(2, device="meta"), "it is on meta"),
    ],
    ids=["grad", "bfloat16", "conj", "sparse", "meta"],
)
def test_copy_false_raises_saying_why_an_alias_is_impossible(make, reason):
    with pytest.raises(ValueError, match=rf"to_numpy\(copy=False\) cannot share the tensor's memory: .*{reason}"):
        to_numpy(make(), copy=False)


def test_copy_false_shares_a_plain_cpu_tensor_and_returns_an_ndarray_as_is():
    t = torch.arange(3.0)
    assert np.shares_memory(to_numpy(t, copy=False), t.numpy())
    a = np.ones(2)
    assert to_numpy(a, copy=False) is a


def test_copy_must_be_none_or_a_bool():
    with pytest.raises(TypeError, match="copy to be None, True or False"):
        to_numpy(torch.ones(1), copy=1)
