"""NumPy's dtype rules: promotion (NEP 50), literals, float results; what the models of NumPy's functions use."""

from __future__ import annotations

import libcst as cst

from .arguments import Args
from .dtypes import is_float, is_integral, promote_numpy
from .values import Kind, Value


def returns_array(args: Args, size_position: int | None) -> bool | None:
    """Whether a NumPy random call gets a size, and so returns an array rather than one Python number.

    ``size_position`` -1 means any positional argument is a size (``np.random.rand(2, 3)``), so a starred one
    (``rand(*shape)``) is one too. Elsewhere a starred argument may or may not reach the size (``uniform(*bounds)``
    is one float when ``bounds`` has two items): None, unknown.
    """
    if size_position is None or "size" in args.keywords:
        return True
    starred = any(key.startswith("*") for key in args.keywords)
    if size_position == -1:
        return True if starred else bool(args.positional)
    if len(args.positional) > size_position:
        return True
    return None if starred else False


def literal_data_dtype(node: cst.BaseExpression) -> str | None:
    """The dtype NumPy gives a literal list such as ``[[1.0, 2], [3, 4]]``: float64, int64 or bool."""
    kinds: set[str] = set()

    def collect(item: cst.BaseExpression) -> bool:
        if isinstance(item, (cst.List, cst.Tuple)):
            return all(collect(e.value) for e in item.elements if not isinstance(e, cst.StarredElement)) and not \
                any(isinstance(e, cst.StarredElement) for e in item.elements)
        if isinstance(item, cst.UnaryOperation) and isinstance(item.operator, (cst.Minus, cst.Plus)):
            item = item.expression
        if isinstance(item, cst.Float):
            kinds.add("float")
        elif isinstance(item, cst.Integer):
            kinds.add("int")
        elif isinstance(item, cst.Name) and item.value in ("True", "False"):
            kinds.add("bool")
        else:
            return False
        return True

    if not isinstance(node, (cst.List, cst.Tuple)) or not collect(node) or not kinds:
        return None
    if "float" in kinds:
        return "float64"
    return "int64" if "int" in kinds else "bool"


def array_of_scalar(fill: Value | None) -> Value:
    if fill is None:
        return Value(Kind.NDARRAY)
    if fill.kind is Kind.NUMBER:
        if fill.dtype == "float":
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if fill.dtype in ("int", "bool"):
            return Value(Kind.NDARRAY, dtype="int64" if fill.dtype == "int" else "bool")
    if fill.is_numpy:
        return fill.but(kind=Kind.NDARRAY)
    return Value(Kind.NDARRAY)


def numpy_promoted(operands: list[Value], kind: Kind) -> Value:
    """The NumPy 2 result of combining arrays and Python scalars (NEP 50: Python scalars are weak)."""
    arrays = [v for v in operands if v.is_numpy]
    if not arrays or any(not (v.is_numpy or v.kind is Kind.NUMBER) for v in operands):
        return Value(kind)
    dtype: str | None = arrays[0].dtype
    for value in arrays[1:]:
        dtype = promote_numpy(dtype, value.dtype)
    # float64 that no operand chose (f32 + int64 array) is promotion's default, not a decision
    by_default = any(v.float64_by_default for v in arrays) or not any(v.dtype == "float64" for v in arrays)
    numbers = {v.dtype for v in operands if v.kind is Kind.NUMBER}
    if is_integral(dtype) and "float" in numbers:
        dtype, by_default = "float64", True
    elif is_integral(dtype) and None in numbers:
        dtype = None  # ``ints * scale`` with ``scale`` an int or a float: int64 or float64
    elif dtype == "bool" and "int" in numbers:
        dtype = "int64"  # NumPy 2: ``bools + 1`` is int64
    return Value(kind, dtype=dtype, float64_by_default=by_default and dtype == "float64")


def numpy_arithmetic(left: Value, right: Value, operator: cst.CSTNode) -> Value:
    kind = Kind.NDARRAY if Kind.NDARRAY in (left.kind, right.kind) else Kind.NUMPY_VALUE
    result = numpy_promoted([left, right], kind)
    if isinstance(operator, cst.Divide) and (is_integral(result.dtype) or result.dtype == "bool"):
        result = result.but(dtype="float64", float64_by_default=True)  # true division of integers
    loop_item = left.loop_item if left.loop_item is not None else right.loop_item
    parameter = left.parameter if left.parameter is not None else right.parameter
    return result.but(loop_item=loop_item, parameter=parameter) if loop_item is not None or parameter else result


def to_float_result(value: Value, *, reduction: bool) -> Value:
    kind = Kind.NUMPY_VALUE if reduction else Kind.NDARRAY
    if is_integral(value.dtype):
        return value.but(kind=kind, dtype="float64", float64_by_default=True, items=None)
    if is_float(value.dtype):
        return value.but(kind=kind, items=None)
    return Value(kind)


#: NumPy 2's FFTs keep single precision; integers, booleans and float64 give complex128
_COMPLEX_OF = {"float16": "complex64", "float32": "complex64", "complex64": "complex64", "float64": "complex128",
               "complex128": "complex128"}
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def to_complex_result(value: Value) -> Value:
    """``np.fft.fft(a)``: a complex array of ``a``'s precision."""
    dtype = "complex128" if is_integral(value.dtype) or value.dtype == "bool" else _COMPLEX_OF.get(value.dtype or "")
    if dtype is None:
        return Value(Kind.NDARRAY)
    return value.but(kind=Kind.NDARRAY, dtype=dtype, items=None, float64_by_default=False,
                     float64_origins=frozenset())


def to_real_part(value: Value) -> Value:
    """``np.real(a)``, ``np.imag(a)`` of a complex array: the real dtype of its precision; a real
    array keeps its dtype."""
    kind = Kind.NUMPY_VALUE if value.kind is Kind.NUMPY_VALUE else Kind.NDARRAY
    if value.dtype is None:
        return Value(kind)
    return value.but(kind=kind, dtype=_REAL_OF.get(value.dtype, value.dtype), items=None)


def numpy_source_dtype(source: Value, depth: int = 0) -> str | None:
    """The dtype torch gives data holding NumPy values: an array's, or the promotion of a list's NumPy items (lists
    of lists a few levels deep, as ``rows.append(row)`` builds them; Python numbers among them are weak)."""
    if source.is_numpy:
        return source.dtype
    if source.kind is not Kind.SEQUENCE or depth > 3:
        return None
    parts = source.items if source.items else ((source.element,) if source.element is not None else ())
    dtype: str | None = None
    for item in parts:
        if _python_numbers(item, depth + 1):
            continue
        found = numpy_source_dtype(item, depth + 1)
        if found is None:
            return None
        dtype = found if dtype is None else promote_numpy(dtype, found)
    return dtype


def _python_numbers(value: Value, depth: int) -> bool:
    """A Python number, or a list of them (``[1, 1, 1]`` beside ``[0, 1 / phi, phi]``): weak in the promotion."""
    if value.kind is Kind.NUMBER:
        return True
    if value.kind is not Kind.SEQUENCE or depth > 3:
        return False
    parts = value.items if value.items else ((value.element,) if value.element is not None else ())
    return bool(parts) and all(_python_numbers(item, depth + 1) for item in parts)


def float64_by_default(source: Value, depth: int = 0) -> bool:
    """Whether that float64 comes from NumPy's default (for a list: some NumPy item's does)."""
    if source.is_numpy:
        return source.float64_by_default
    if source.kind is not Kind.SEQUENCE or depth > 3:
        return False
    parts = source.items if source.items else ((source.element,) if source.element is not None else ())
    return any(float64_by_default(item, depth + 1) for item in parts)
