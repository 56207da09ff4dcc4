"""Dtype names as NumPy, torch and strings spell them, and NumPy 2's promotion between them."""

from __future__ import annotations

#: spellings of a dtype in NumPy, torch and strings, to one canonical name.
DTYPE_NAMES: dict[str, str] = {}
for _canonical, _spellings in {
    "float64": ("float64", "double", "f8", "<f8", "float_", "d"),
    "float32": ("float32", "float", "single", "f4", "<f4", "f"),
    "float16": ("float16", "half", "f2", "<f2", "e"),
    "bfloat16": ("bfloat16",),
    "complex64": ("complex64", "cfloat", "csingle", "c8"),
    "complex128": ("complex128", "cdouble", "c16", "complex_"),
    "int64": ("int64", "long", "i8", "<i8", "int_", "intp"),
    "int32": ("int32", "int", "i4", "<i4", "intc"),
    "int16": ("int16", "short", "i2"),
    "int8": ("int8", "i1", "byte"),
    "uint8": ("uint8", "u1", "ubyte"),
    "uint16": ("uint16", "u2"),
    "uint32": ("uint32", "u4"),
    "uint64": ("uint64", "u8"),
    "bool": ("bool", "bool_", "?"),
}.items():
    for _spelling in _spellings:
        DTYPE_NAMES[_spelling] = _canonical

# ``torch.float`` is float32 and ``torch.int`` int32 as in the table; NumPy has no such attributes in 2.x, and its
# ``np.byte`` is int8, which the table also says. Python's builtins differ: ``float`` means float64 to NumPy.
BUILTIN_DTYPES = {"float": "float64", "int": "int64", "bool": "bool", "complex": "complex128"}

_FLOAT_BITS = {"float16": 16, "float32": 32, "float64": 64}
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UINT_BITS = {"bool": 1, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def is_float(dtype: str | None) -> bool:
    return dtype in _FLOAT_BITS or dtype == "bfloat16"


def is_integral(dtype: str | None) -> bool:
    return dtype in _INT_BITS or dtype in _UINT_BITS


def promote_numpy(a: str | None, b: str | None) -> str | None:
    """NumPy 2's result dtype for two array dtypes (``np.result_type``), for the dtypes NumPy and torch share."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    if "complex128" in (a, b) or "complex64" in (a, b):
        other = b if a.startswith("complex") else a
        if a.startswith("complex") and b.startswith("complex"):
            return "complex128"
        return "complex128" if other in ("float64", "int32", "int64", "uint32", "uint64") else (
            a if a.startswith("complex") else b
        )
    if a in _FLOAT_BITS and b in _FLOAT_BITS:
        return a if _FLOAT_BITS[a] > _FLOAT_BITS[b] else b
    if a in _FLOAT_BITS or b in _FLOAT_BITS:
        floating, integral = (a, b) if a in _FLOAT_BITS else (b, a)
        # the smallest float that holds every value of the integer type, and at least the float given
        needed = 64 if integral in ("int32", "int64", "uint32", "uint64") else 32 if integral in (
            "int16", "uint16") else 16
        bits = max(needed, _FLOAT_BITS[floating])
        return {16: "float16", 32: "float32", 64: "float64"}[bits]
    if a in _UINT_BITS and b in _UINT_BITS:
        return a if _UINT_BITS[a] > _UINT_BITS[b] else b
    if a in _INT_BITS and b in _INT_BITS:
        return a if _INT_BITS[a] > _INT_BITS[b] else b
    signed, unsigned = (a, b) if a in _INT_BITS else (b, a)
    if signed not in _INT_BITS or unsigned not in _UINT_BITS:
        return None
    if _UINT_BITS[unsigned] == 64:
        return "float64"
    bits = max(_INT_BITS[signed], _UINT_BITS[unsigned] * 2 if unsigned != "bool" else 8)
    return {8: "int8", 16: "int16", 32: "int32", 64: "int64"}[bits]
