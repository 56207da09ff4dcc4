"""What NumPy's functions and methods give."""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .arguments import Args
from .dtypes import DTYPE_NAMES, is_float, is_integral, promote_numpy
from .facts import TensorToNumpy
from .values import OTHER, UNKNOWN, Kind, Value


class NumpyMixin:
    """What NumPy's functions and methods give."""

    def _call_numpy(self, node: cst.Call, qualname: str, args: Args) -> Value:
        first = args.first
        if qualname in api.NUMPY_FLOAT_CONSTRUCTORS:
            dtype_position, size_position = api.NUMPY_FLOAT_CONSTRUCTORS[qualname]
            gives_array = returns_array(args, size_position)
            explicit = self._dtype_argument(args, dtype_position)
            if explicit is not None:
                return Value(Kind.NDARRAY if gives_array else Kind.NUMPY_VALUE, dtype=explicit)
            if not gives_array:
                return Value(Kind.NUMBER, dtype="float")
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if qualname in api.TENSOR_READING_NUMPY_FUNCTIONS and first is not None and first.kind is Kind.TENSOR:
            self.facts.tensor_to_numpy.append(TensorToNumpy(node, qualname, first, self.grad_enabled))
            return Value(Kind.NDARRAY, dtype=first.dtype)
        if qualname in api.NUMPY_ARRAY_FROM_DATA:
            explicit = self._dtype_argument(args, 1)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            if first is None:
                return UNKNOWN
            data_node = node.args[0].value
            literal_dtype = literal_data_dtype(data_node)
            if literal_dtype is not None:
                return Value(Kind.NDARRAY, dtype=literal_dtype, float64_by_default=literal_dtype == "float64")
            if first.is_numpy:
                return first.but(kind=Kind.NDARRAY, items=None, element=None)
            if first.kind is Kind.SEQUENCE and first.element is not None and first.element.is_numpy:
                return first.element.but(kind=Kind.NDARRAY, items=None)
            return Value(Kind.NDARRAY)
        if qualname == "numpy.full":
            explicit = self._dtype_argument(args, 2)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            fill = args.positional[1] if len(args.positional) > 1 else args.keywords.get("fill_value")
            return array_of_scalar(fill)
        if qualname == "numpy.arange":
            explicit = self._dtype_argument(args, 3)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            bounds = args.positional[:3]
            if any(v.kind is Kind.NUMBER and v.dtype == "float" for v in bounds):
                return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
            if bounds and all(v.kind is Kind.NUMBER and v.dtype == "int" for v in bounds):
                return Value(Kind.NDARRAY, dtype="int64")
            return Value(Kind.NDARRAY)
        if qualname in api.NUMPY_INT_CONSTRUCTORS:
            explicit = self._dtype_argument(args, None)
            return Value(Kind.NDARRAY if args.positional or args.keywords else Kind.NUMBER,
                         dtype=explicit or "int64")
        if qualname in api.NUMPY_LIKE:
            explicit = self._dtype_argument(args, 1 if qualname != "numpy.full_like" else 2)
            if first is not None and first.is_numpy:
                return first.but(kind=Kind.NDARRAY, dtype=explicit or first.dtype,
                                 float64_by_default=first.float64_by_default and explicit is None)
            return Value(Kind.NDARRAY, dtype=explicit)
        if qualname in ("numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator"):
            return Value(Kind.NUMPY_GENERATOR)
        if qualname in api.NUMPY_JOINING and first is not None:
            elements = list(first.items) if first.items is not None else [first.element or UNKNOWN]
            return numpy_promoted(elements, Kind.NDARRAY)
        name = qualname.rsplit(".", 1)[1]
        if qualname == "numpy." + name and first is not None and first.is_numpy:
            explicit = self._dtype_argument(args, None)
            if explicit is not None:
                return Value(Kind.NDARRAY, dtype=explicit)
            if name in api.NUMPY_TO_FLOAT:
                return to_float_result(first, reduction=name in api.NUMPY_REDUCTIONS and "axis" not in args.keywords)
            if name in api.NUMPY_SAME_DTYPE:
                is_reduction = name in api.NUMPY_REDUCTIONS and "axis" not in args.keywords
                return first.but(kind=Kind.NUMPY_VALUE if is_reduction else Kind.NDARRAY, items=None)
            if name in api.NUMPY_BINARY:
                return numpy_promoted([v for v in args.positional if v.is_numpy or v.kind is Kind.NUMBER],
                                      Kind.NDARRAY)
        if qualname in ("numpy.float64", "numpy.double"):
            return Value(Kind.NUMPY_VALUE, dtype="float64")
        dtype = DTYPE_NAMES.get(qualname.rsplit(".", 1)[1]) if qualname.count(".") == 1 else None
        if dtype is not None:  # np.float32(x): a NumPy scalar of that dtype
            return Value(Kind.NUMPY_VALUE, dtype=dtype)
        return UNKNOWN

    def _numpy_method(self, node: cst.Call, receiver: Value, method: str, args: Args) -> Value:
        if method == "astype":
            dtype = self._dtype_argument(args, 0)
            return receiver.but(dtype=dtype, float64_by_default=False, kind=Kind.NDARRAY
                                if receiver.kind is Kind.NDARRAY else receiver.kind)
        if method in ("tolist", "item", "tobytes"):
            return OTHER
        is_reduction = method in api.NUMPY_REDUCTIONS and not args.positional and "axis" not in args.keywords
        explicit = self._dtype_argument(args, None)
        if explicit is not None:
            return receiver.but(dtype=explicit, float64_by_default=False)
        if method in api.NUMPY_TO_FLOAT:
            return to_float_result(receiver, reduction=is_reduction)
        if method in api.NUMPY_SAME_DTYPE:
            return receiver.but(kind=Kind.NUMPY_VALUE if is_reduction else receiver.kind, items=None)
        return UNKNOWN

    def _generator_method(self, receiver: Value, method: str, args: Args) -> Value:
        if method in api.NUMPY_GENERATOR_FLOAT_METHODS:
            explicit = self._dtype_argument(args, None)
            gives_array = returns_array(args, api.NUMPY_GENERATOR_FLOAT_METHODS[method])
            if explicit is not None:
                return Value(Kind.NDARRAY if gives_array else Kind.NUMPY_VALUE, dtype=explicit)
            if not gives_array:
                return Value(Kind.NUMBER, dtype="float")
            return Value(Kind.NDARRAY, dtype="float64", float64_by_default=True)
        if method in ("integers", "randint", "choice", "permutation"):
            return Value(Kind.NDARRAY, dtype=self._dtype_argument(args, None) or "int64")
        return UNKNOWN

    # torch


def returns_array(args: Args, size_position: int | None) -> bool:
    """Whether a NumPy random call gets a size, and so returns an array rather than one Python float."""
    if size_position is None:
        return True
    if size_position == -1:
        return bool(args.positional)
    return "size" in args.keywords or len(args.positional) > size_position


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
    if is_integral(dtype) and any(v.kind is Kind.NUMBER and v.dtype == "float" for v in operands):
        dtype, by_default = "float64", True
    return Value(kind, dtype=dtype, float64_by_default=by_default and dtype == "float64")


def numpy_arithmetic(left: Value, right: Value, operator: cst.CSTNode) -> Value:
    kind = Kind.NDARRAY if Kind.NDARRAY in (left.kind, right.kind) else Kind.NUMPY_VALUE
    result = numpy_promoted([left, right], kind)
    if isinstance(operator, cst.Divide) and (is_integral(result.dtype) or result.dtype == "bool"):
        result = result.but(dtype="float64", float64_by_default=True)  # true division of integers
    loop_item = left.loop_item if left.loop_item is not None else right.loop_item
    return result.but(loop_item=loop_item) if loop_item is not None else result


def to_float_result(value: Value, *, reduction: bool) -> Value:
    kind = Kind.NUMPY_VALUE if reduction else Kind.NDARRAY
    if is_integral(value.dtype):
        return value.but(kind=kind, dtype="float64", float64_by_default=True, items=None)
    if is_float(value.dtype):
        return value.but(kind=kind, items=None)
    return Value(kind)


def numpy_source_dtype(source: Value) -> str | None:
    if source.is_numpy:
        return source.dtype
    if source.kind is Kind.SEQUENCE and source.items:
        dtype: str | None = None
        for item in source.items:
            if item.is_numpy:
                dtype = item.dtype if dtype is None else promote_numpy(dtype, item.dtype)
            elif item.kind is not Kind.NUMBER:
                return None
        return dtype
    return None


def float64_by_default(source: Value) -> bool:
    if source.is_numpy:
        return source.float64_by_default
    if source.kind is Kind.SEQUENCE and source.items:
        numpy_items = [v for v in source.items if v.is_numpy]
        return bool(numpy_items) and any(v.float64_by_default for v in numpy_items)
    return False
