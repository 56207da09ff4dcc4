"""What numpy and torch can hold, and how data is cast on the host: the tables every helper reads."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np
import torch

# numpy dtype <-> torch dtype for everything torch.from_numpy accepts (native byte order).
# getattr: torch.uint16/32/64 only exist in newer releases.
_TORCH_DTYPE_OF_NUMPY: dict[np.dtype, torch.dtype] = {
    np.dtype(name): getattr(torch, name)
    for name in (
        "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
    if hasattr(torch, name)
}
_NUMPY_DTYPE_OF_TORCH: dict[torch.dtype, np.dtype] = {t: n for n, t in _TORCH_DTYPE_OF_NUMPY.items()}

# Torch dtypes numpy lacks, mapped to the smallest numpy dtype that holds every value exactly.
# The float8 formats with a 4- or 5-bit exponent fit float16 (checked over all 256 bit patterns);
# float8_e8m0fnu has an 8-bit exponent and needs float32, as bfloat16 does.
_UPCAST_FOR_NUMPY: dict[torch.dtype, torch.dtype] = {
    getattr(torch, name): wider
    for name, wider in (
        ("bfloat16", torch.float32),
        ("complex32", torch.complex64),
        ("float8_e4m3fn", torch.float16),
        ("float8_e5m2", torch.float16),
        ("float8_e4m3fnuz", torch.float16),
        ("float8_e5m2fnuz", torch.float16),
        ("float8_e8m0fnu", torch.float32),
    )
    if hasattr(torch, name)
}

# An unsigned integer dtype of each item size: host memory for a torch-only dtype is allocated by numpy
# (which gets huge pages for large arrays) under this dtype and viewed as the torch dtype.
_NUMPY_DTYPE_OF_ITEMSIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                            8: np.dtype(np.uint64)}

_UNSUPPORTED_KIND_ADVICE = {
    "O": "torch has no object tensors; if it holds numbers, convert it first, e.g. "
    "np.asarray(a, dtype=np.float32), or np.stack(a) for an array of arrays",
    "U": "torch has no string tensors; map the strings to numbers first (for example class indices)",
    "S": "torch has no bytes tensors; decode or map them to numbers first",
    "M": "torch has no datetime tensors; convert to numbers first, e.g. a.astype(np.int64) "
    "(counts of the unit) or (a - a.min()) / np.timedelta64(1, 's') (float seconds)",
    "m": "torch has no timedelta tensors; convert to numbers first, e.g. a / np.timedelta64(1, 's')",
    "V": "torch has no structured tensors; select a field (a['x']) or use "
    "numpy.lib.recfunctions.structured_to_unstructured(a)",
}


def _type_name(obj: object) -> str:
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _unsupported_dtype_advice(dtype: np.dtype) -> str | None:
    """Why torch cannot hold `dtype` and what to do, or None when it can."""
    advice = _UNSUPPORTED_KIND_ADVICE.get(dtype.kind)
    if advice is None and dtype.newbyteorder("=") not in _TORCH_DTYPE_OF_NUMPY:
        # longdouble / clongdouble, and uint16-64 on a torch too old to have them
        advice = "torch has no such dtype; convert it first, e.g. a.astype(np.float64)"
    return advice


def _check_dtype_supported(dtype: np.dtype, caller: str) -> None:
    """Raise TypeError, naming the dtype and the way out, for dtypes torch cannot hold."""
    advice = _unsupported_dtype_advice(dtype)
    if advice is not None:
        raise TypeError(f"{caller}() cannot convert an array of dtype {dtype}: {advice}")


# dtype -> the dtype of the same name that torch.from_numpy knows, for every dtype torch can hold, filled as met
_CANONICAL_DTYPE: dict[np.dtype, np.dtype] = {}


def _canonical_dtype(dtype: np.dtype, caller: str) -> np.dtype:
    """`dtype` as torch.from_numpy knows it; TypeError (naming it and the way out) when torch cannot hold it.

    np.ulonglong is uint64 to numpy (the dtypes compare equal) but has another type number, which
    torch.from_numpy rejects with a TypeError; the view under the canonical dtype costs nothing.
    """
    canonical = _CANONICAL_DTYPE.get(dtype)
    if canonical is None:
        _check_dtype_supported(dtype, caller)
        canonical = _CANONICAL_DTYPE.setdefault(dtype, np.dtype(dtype.str))  # '<u8' -> the type numpy names uint64
    return canonical


def _as_ndarray(a: Any, caller: str) -> np.ndarray:
    """`a` as an ndarray torch can hold, viewed (never copied) under the dtype torch knows.

    TypeError for other types and unsupported dtypes.
    """
    if type(a) is np.ndarray:  # the common case first: no subclass, no masked array
        array = a
    elif isinstance(a, np.ma.MaskedArray):
        raise TypeError(
            f"{caller}() got a numpy.ma.MaskedArray, whose mask torch would silently drop; "
            "fill the masked values first with a.filled(value), or pass a.data to drop the mask"
        )
    elif isinstance(a, np.ndarray):
        array = a
    elif isinstance(a, np.generic):
        array = np.asarray(a)  # a fresh writable 0-d array
    else:
        hint = " (it is already a tensor: use t.to(device, dtype))" if isinstance(a, torch.Tensor) else ""
        raise TypeError(f"{caller}() expects a numpy.ndarray or numpy scalar, got {_type_name(a)}{hint}")
    canonical = _canonical_dtype(array.dtype, caller)
    return array if array.dtype.num == canonical.num else array.view(canonical)


def _check_dtype_argument(dtype: Any, caller: str) -> None:
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"{caller}() needs dtype to be a torch.dtype such as torch.float32, got {dtype!r}")


def _check_copy_argument(copy: Any, caller: str) -> None:
    if copy is not None and not isinstance(copy, bool):
        raise TypeError(f"{caller}() needs copy to be None, True or False, got {copy!r}")


def _is_file_backed(array: np.ndarray) -> bool:
    obj: Any = array
    while obj is not None:
        if isinstance(obj, (np.memmap, mmap.mmap)):
            return True
        obj = getattr(obj, "base", None)
    return False


def _why_torch_cannot_view(array: np.ndarray) -> str | None:
    """Why torch.from_numpy(array) would raise or hand out a writable tensor over read-only memory, or None."""
    flags, itemsize = array.flags, array.itemsize
    # (contiguity settles nothing: numpy calls an array with a flipped length-1 axis contiguous)
    strides_fit = all(stride >= 0 and stride % itemsize == 0 for stride in array.strides)
    if flags.writeable and flags.aligned and array.dtype.isnative and strides_fit:
        return None
    if not flags.writeable:
        return "it is read-only, and a tensor is always writable"
    if not array.dtype.isnative:
        return f"its dtype {array.dtype} is not in the machine's byte order"
    if any(stride < 0 for stride in array.strides):
        return "it has negative strides (a flipped view such as a[::-1])"
    return "it is not aligned to its item size (a field of a structured array)"


def _transfer_dtype(source: torch.dtype, target: torch.dtype | None, *, moves_to_device: bool) -> torch.dtype:
    """The dtype data has while it is copied: cast before a transfer that shrinks, after one that widens.

    Casting float64 -> float32 (or bfloat16) on the host halves (quarters) the bytes moved; widening
    uint8 -> float32 on the device moves a quarter of them. On the host the cast happens while copying.
    """
    if target is None or (moves_to_device and target.itemsize > source.itemsize):
        return source
    return target


def _torch_dtype_of(array: np.ndarray) -> torch.dtype:
    dtype = array.dtype
    return _TORCH_DTYPE_OF_NUMPY.get(dtype) or _TORCH_DTYPE_OF_NUMPY[dtype.newbyteorder("=")]


def _empty_host_like(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """New host memory of `array`'s shape and memory order (a transposed or NHWC layout stays as it is).

    numpy allocates it: its large allocations get transparent huge pages, torch's do not, and first
    touch of fresh torch memory is what makes ``torch.from_numpy(a).float()`` slow on large arrays.
    """
    numpy_dtype = _NUMPY_DTYPE_OF_TORCH.get(dtype) or _NUMPY_DTYPE_OF_ITEMSIZE[dtype.itemsize]
    if array.flags.c_contiguous:
        host = torch.from_numpy(np.empty(array.shape, dtype=numpy_dtype))
    else:
        host = torch.from_numpy(np.empty_like(array, dtype=numpy_dtype, order="K", subok=False))
    return host if host.dtype == dtype else host.view(dtype)


# numpy asks the kernel for transparent huge pages from this size on (numpy/_core/src/multiarray/alloc.c)
_NUMPY_HUGE_PAGES_FROM = 1 << 22

# The tensor methods that cast to one dtype: the same cast as .to(dtype), whose argument parsing costs
# more than a small array's cast.
_CAST_METHOD = {torch.float32: torch.Tensor.float, torch.float64: torch.Tensor.double,
                torch.bfloat16: torch.Tensor.bfloat16, torch.int64: torch.Tensor.long, torch.int32: torch.Tensor.int,
                torch.int16: torch.Tensor.short, torch.int8: torch.Tensor.char, torch.uint8: torch.Tensor.byte,
                torch.bool: torch.Tensor.bool}


def _torch_view(array: np.ndarray) -> torch.Tensor | None:
    """``torch.from_numpy(array)`` where torch can view the array safely, else None.

    Read-only arrays get None without asking torch: it would view them, hand out a writable tensor and
    spend its once-per-process warning. Negative or misaligned strides and a foreign byte order make
    torch raise, which costs nothing on the common path.
    """
    flags = array.flags
    if not (flags.writeable and flags.aligned):
        return None
    try:
        return torch.from_numpy(array)
    except (ValueError, TypeError):
        return None


def _host_copy(array: np.ndarray, dtype: torch.dtype, view: torch.Tensor | None) -> torch.Tensor:
    """New host memory holding `array` (and `view`, torch's view of it, if any) cast to `dtype`, in one pass.

    Laid out as `array` is. Small results come from torch's own cast (the ``.float()`` idiom, least
    overhead); from 4 MiB on numpy allocates, since first touch of fresh torch memory, which gets no
    huge pages, is what makes large casts slow.
    """
    if view is not None and dtype != torch.float16 and array.size * dtype.itemsize < _NUMPY_HUGE_PAGES_FROM:
        if view.dtype == dtype:
            return view.clone()
        cast = _CAST_METHOD.get(dtype)
        return view.to(dtype) if cast is None else cast(view)
    host = _empty_host_like(array, dtype)
    _fill(host, array, viewable=view is not None)
    return host


def _fill(destination: torch.Tensor, array: np.ndarray, *, viewable: bool | None = None) -> None:
    """Copy `array` into the host tensor `destination` in one pass, casting to its dtype.

    Who casts: numpy into float16 (it rounds float64 -> float16 once, torch twice through float32) and
    from arrays torch cannot view (flipped, big-endian, read-only: numpy reads any strides); torch
    into every other dtype (its vectorized casts beat numpy's on small arrays) and into the dtypes
    numpy lacks (bfloat16, float8).
    """
    numpy_dtype = _NUMPY_DTYPE_OF_TORCH.get(destination.dtype)
    if viewable is None:
        viewable = _why_torch_cannot_view(array) is None
    if numpy_dtype is not None and (not viewable or destination.dtype == torch.float16
                                    or numpy_dtype == array.dtype.newbyteorder("=")):
        np.copyto(destination.numpy(), array, casting="unsafe")
        return
    if not viewable:  # a torch-only dtype from an array torch cannot read: numpy lays it out first
        array = array.astype(array.dtype.newbyteorder("="), order="K")
    destination.copy_(torch.from_numpy(array))
