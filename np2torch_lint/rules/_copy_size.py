"""What a copy costs, where the code says the array's shape: ``torch.tensor(np.zeros((10000, 1000)))`` copies 80 MB.

The analysis does not follow shapes, so the size is known only where the converted array is made by a NumPy
constructor inside the conversion itself, with every dimension a number in the code; anywhere else a message says
nothing of the size rather than guess it.
"""

from __future__ import annotations

import math

import libcst as cst

#: bytes per element of the dtypes NumPy and torch share
ITEM_SIZES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "complex128": 16, "complex64": 8,
              "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
              "bool": 1}

#: NumPy constructors whose first argument (or ``shape=``) is the shape
_SHAPE_FIRST = {"zeros", "ones", "empty", "full"}
#: ``np.random`` functions whose positional arguments are the dimensions
_DIMENSIONS = {"rand", "randn"}
#: ``np.random`` functions with ``size=``, and where it stands among the positional arguments
_SIZE_AT = {"random": 0, "random_sample": 0, "normal": 2, "uniform": 2, "randint": 2, "standard_normal": 0}


def copy_size(conversion: cst.Call, dtype: str | None, numpy_name: str | None) -> str | None:
    """``"80 MB"`` when the array ``conversion`` converts is made right there with a shape written out in numbers
    (``numpy_name`` is what the module calls NumPy, ``np``), and its dtype is known; else None."""
    item_size = ITEM_SIZES.get(dtype or "")
    positional = [arg for arg in conversion.args if arg.keyword is None]
    if item_size is None or numpy_name is None or not positional or not isinstance(positional[0].value, cst.Call):
        return None
    elements = _elements(positional[0].value, numpy_name)
    return None if elements is None else _in_bytes(elements * item_size)


def _elements(made: cst.Call, numpy_name: str) -> int | None:
    function = _numpy_function(made.func, numpy_name)
    if function is None:
        return None
    positional = [arg.value for arg in made.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in made.args if arg.keyword is not None}
    if any(arg.star for arg in made.args):
        return None
    if function in _SHAPE_FIRST:
        return _shape_elements(keywords.get("shape", positional[0] if positional else None))
    name = function.removeprefix("random.")
    if function.startswith("random.") and name in _DIMENSIONS:
        dimensions = [_integer(value) for value in positional]
        return math.prod(dimensions) if dimensions and None not in dimensions else None  # type: ignore[arg-type]
    if function.startswith("random.") and name in _SIZE_AT:
        at = _SIZE_AT[name]
        return _shape_elements(keywords.get("size", positional[at] if len(positional) > at else None))
    return None


def _numpy_function(func: cst.BaseExpression, numpy_name: str) -> str | None:
    """``np.zeros`` -> ``"zeros"``, ``np.random.rand`` -> ``"random.rand"``, for the module's own NumPy name."""
    parts = []
    while isinstance(func, cst.Attribute):
        parts.append(func.attr.value)
        func = func.value
    if not isinstance(func, cst.Name) or func.value != numpy_name or not parts:
        return None
    return ".".join(reversed(parts))


def _shape_elements(shape: cst.BaseExpression | None) -> int | None:
    if isinstance(shape, (cst.Tuple, cst.List)):
        dimensions = [_integer(element.value) for element in shape.elements]
        return math.prod(dimensions) if None not in dimensions else None  # type: ignore[arg-type]
    return _integer(shape) if shape is not None else None


def _integer(value: cst.BaseExpression) -> int | None:
    if isinstance(value, cst.Integer) and not value.lpar:
        return int(value.evaluated_value)
    return None


def _in_bytes(size: int) -> str:
    """Decimal units, two significant digits at most: 80 MB, 1.2 GB, 400 kB, 96 bytes."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}".replace(".0 ", " ") if value < 10 else f"{round(value)} {unit}"
    return f"{size} bytes"
