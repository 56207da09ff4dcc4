"""What an annotation says a value is: ``np.ndarray``, ``npt.NDArray[np.float32]``, ``torch.Tensor``,
``nn.Parameter``, an nn layer class, a class of this file; through ``Optional[...]``, ``Union[..., None]``,
``X | None`` and string annotations.

An annotation is evidence of the kind (and of what a layer's parameters are), not of grad or device: a
``torch.Tensor`` parameter may or may not require grad, so only facts the annotation states are set.
"""

from __future__ import annotations

import libcst as cst

from . import known_apis as api
from .definitions import ClassInfo, RecordType
from .dtypes import DTYPE_NAMES
from .values import NONE, UNKNOWN, Kind, Value, join

_NDARRAY_TYPES = {"numpy.ndarray", "numpy.typing.NDArray"}
# ``Variable`` has been ``Tensor`` since torch 0.4: ``isinstance(t, Variable)`` holds for every tensor
_TENSOR_TYPES = {"torch.Tensor", *api.NO_TENSOR_IS_EXACTLY}
_PARAMETER_TYPES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
_MODULE_TYPES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_OPTIONAL = {"typing.Optional"}
_UNION = {"typing.Union"}


class AnnotationsMixin:
    """Reads annotations; used for parameters, returns and annotated assignments."""

    def _value_of_annotation(self, annotation: cst.BaseExpression, depth: int = 0) -> Value:
        if depth > 8:
            return UNKNOWN
        if isinstance(annotation, cst.SimpleString):  # ``"torch.Tensor"``: a forward reference
            text = annotation.evaluated_value
            try:
                parsed = cst.parse_expression(text) if isinstance(text, str) and len(text) < 200 else None
            except cst.ParserSyntaxError:
                parsed = None
            return UNKNOWN if parsed is None else self._value_of_annotation(parsed, depth + 1)
        if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
            return _union([self._value_of_annotation(annotation.left, depth + 1),
                           self._value_of_annotation(annotation.right, depth + 1)])
        if isinstance(annotation, cst.Name) and annotation.value == "None":
            return NONE
        if isinstance(annotation, cst.Subscript):
            return self._subscripted_annotation(annotation, depth)
        return self._annotated_type(self.eval_quietly(annotation))

    def _subscripted_annotation(self, annotation: cst.Subscript, depth: int) -> Value:
        base = self.eval_quietly(annotation.value)
        arguments = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
        qualname = base.qualname if base.kind is Kind.REF else None
        if qualname in _OPTIONAL and arguments:
            return self._value_of_annotation(arguments[0], depth + 1)
        if qualname in _UNION:
            return _union([self._value_of_annotation(argument, depth + 1) for argument in arguments])
        if qualname in _NDARRAY_TYPES:
            # NDArray[np.float32]; ndarray[Any, np.dtype[np.float32]]
            dtype_node = arguments[-1] if arguments else None
            if isinstance(dtype_node, cst.Subscript):
                inner = [e.slice.value for e in dtype_node.slice if isinstance(e.slice, cst.Index)]
                dtype_node = inner[0] if inner else None
            dtype_value = self.eval_quietly(dtype_node) if dtype_node is not None else UNKNOWN
            dtype = None
            if dtype_value.kind is Kind.REF and dtype_value.qualname and dtype_value.qualname.startswith("numpy."):
                dtype = DTYPE_NAMES.get(dtype_value.qualname.rsplit(".", 1)[1])
            return Value(Kind.NDARRAY, dtype=dtype)
        return self._annotated_type(base)

    def _annotated_type(self, value: Value) -> Value:
        """An instance of the class an annotation names."""
        if value.kind is Kind.CLASS and isinstance(value.definition, ClassInfo):
            return value.definition.instance().but(on_accelerator=None)
        if value.kind is Kind.CLASS and isinstance(value.definition, RecordType):  # a named tuple: what, not known
            return Value(Kind.SEQUENCE, items=(UNKNOWN,) * len(value.definition.fields), keys=value.definition.fields)
        if value.kind is not Kind.REF or not value.qualname:
            return UNKNOWN
        qualname = value.qualname
        if qualname in _NDARRAY_TYPES:
            return Value(Kind.NDARRAY)
        if qualname in _TENSOR_TYPES:
            return Value(Kind.TENSOR)
        if qualname in _PARAMETER_TYPES:
            return Value(Kind.TENSOR, requires_grad=True)
        if qualname in _MODULE_TYPES:
            return Value(Kind.NN_MODULE)
        model = self.models.call(qualname)
        if model is not None and model.kind == "module" and qualname.rsplit(".", 1)[1][:1].isupper():
            return Value(Kind.NN_MODULE, qualname=qualname, has_params=False if "no-params" in model.flags else True)
        if model is not None and model.kind == "tensor" and "legacy" in model.flags:
            return Value(Kind.TENSOR)  # ``x: torch.FloatTensor`` is used loosely for any tensor: no dtype claimed
        if qualname == "torch.device":
            return Value(Kind.DEVICE)
        return UNKNOWN


def _union(members: list[Value]) -> Value:
    """``Optional[T]``/``T | None``: what T is (None joins away); members of different kinds: unknown."""
    result: Value | None = None
    for member in members:
        if member.kind is Kind.UNKNOWN:
            return UNKNOWN
        result = member if result is None else join(result, member)
    return result or UNKNOWN
