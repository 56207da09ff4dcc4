"""What the analysis knows about one expression: the abstract value.

A value is small and immutable. Unknown facts are ``None``: the rules only speak when a fact is known, so an
unknown value never produces a finding (see ``docs/inference.md``).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import libcst as cst


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    NONE = "None"
    NUMBER = "number"  # a Python int/float/bool literal or result; ``dtype`` says which ("int", "float", "bool")
    STRING = "string"  # ``literal`` holds the text when it is a plain literal
    REF = "ref"  # an imported module, function, class or constant: ``qualname`` says which
    LOCAL = "local"  # a function or class defined in this file; it shadows any import of the same name
    NDARRAY = "ndarray"
    NUMPY_VALUE = "numpy value"  # an ndarray or a NumPy scalar (``a[0]``, ``a.mean()``): same dtype, unknown rank
    TENSOR = "tensor"
    NN_MODULE = "nn.Module"
    NN_MODULE_CLASS = "nn.Module subclass"
    DEVICE = "device"
    DATALOADER = "DataLoader"
    NUMPY_GENERATOR = "numpy random generator"
    SEQUENCE = "sequence"  # a list, tuple, generator or other iterable: ``element`` is what iterating gives
    OTHER = "other"  # known not to be an array or tensor


@dataclass(frozen=True, slots=True)
class Value:
    kind: Kind
    qualname: str | None = None
    literal: str | None = None
    #: canonical dtype name ("float64", "float32", "int64", ...), or None when unknown.
    dtype: str | None = None
    #: a float64 that NumPy chose by default (``np.zeros(3)``), not one the code spelled out.
    float64_by_default: bool = False
    requires_grad: bool | None = None
    on_accelerator: bool | None = None
    #: for an nn.Module: whether calling it gives outputs that require grad (it has trainable parameters).
    has_params: bool | None = None
    #: what iterating gives (SEQUENCE), and the items of a literal display or tuple, when known.
    element: Value | None = None
    items: tuple[Value, ...] | None = None
    #: the conversion calls that made this tensor a float64 from a NumPy default, with no dtype decision since.
    float64_origins: frozenset[cst.Call] = frozenset()
    #: the loop (its id) whose item this value is, or is made from.
    loop_item: int | None = None
    #: the per-item ``.to(device)``/``.cuda()`` call that moved this value, when it was moved inside a loop.
    transfer: cst.Call | None = None

    def but(self, **changes: object) -> Value:
        return dataclasses.replace(self, **changes)

    @property
    def is_numpy(self) -> bool:
        return self.kind is Kind.NDARRAY or self.kind is Kind.NUMPY_VALUE


UNKNOWN = Value(Kind.UNKNOWN)
NONE = Value(Kind.NONE)
OTHER = Value(Kind.OTHER)
LOCAL = Value(Kind.LOCAL)


def ref(qualname: str) -> Value:
    return Value(Kind.REF, qualname=qualname)


def _either(a: bool | None, b: bool | None) -> bool | None:
    """Join two "may be" facts: true if either path makes it true, false only if both say false."""
    if a or b:
        return True
    if a is False and b is False:
        return False
    return None


def join(a: Value, b: Value) -> Value:
    """The value a name has after two control-flow paths meet."""
    if a is b or a == b:
        return a
    if a.kind is Kind.NONE:  # ``x = None`` then ``if ...: x = tensor``: a tensor or nothing
        return b
    if b.kind is Kind.NONE:
        return a
    if a.kind is not b.kind or a.kind is Kind.UNKNOWN or a.qualname != b.qualname:
        return UNKNOWN
    element = a.element if b.element is None else b.element if a.element is None else join(a.element, b.element)
    return Value(
        a.kind,
        qualname=a.qualname,
        literal=a.literal if a.literal == b.literal else None,
        dtype=a.dtype if a.dtype == b.dtype else None,
        float64_by_default=a.float64_by_default and b.float64_by_default,
        requires_grad=_either(a.requires_grad, b.requires_grad),
        on_accelerator=_either(a.on_accelerator, b.on_accelerator),
        has_params=_either(a.has_params, b.has_params),
        element=element,
        items=a.items if a.items == b.items else None,
        float64_origins=a.float64_origins | b.float64_origins,
        loop_item=a.loop_item if a.loop_item == b.loop_item else None,
        transfer=a.transfer if a.transfer is b.transfer else None,
    )


def join_all(values: list[Value]) -> Value | None:
    result: Value | None = None
    for value in values:
        result = value if result is None else join(result, value)
    return result


# --- dtypes -------------------------------------------------------------------------------------------------

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
