"""A module's summary for the other modules of the project, as plain data (JSON-able), and back.

What another module sees of a module is what its top-level names are, in the terms of ``values.Value``: a
function is what its body returns read with unknown (or annotated) parameters; a class is whether it is an
``nn.Module``, its library base, what its methods assign to ``self`` and what each method returns; a module-level
name is its value. Facts tied to one file (the conversion calls behind a float64, loop bookkeeping) are dropped.
Values nest at most ``MAX_DEPTH`` deep; what is deeper is unknown.
"""

from __future__ import annotations

from .definitions import ClassInfo, FunctionInfo
from .values import UNKNOWN, Kind, Value

MAX_DEPTH = 4
_KINDS = {kind.value: kind for kind in Kind}
_FLAGS = ("requires_grad", "on_accelerator", "has_params")


def encode_names(names: dict[str, Value]) -> dict[str, object]:
    """The summary of a module from the values its scope holds at the end."""
    encoded = {}
    for name, value in names.items():
        data = encode(value)
        if data is not None:
            encoded[name] = data
    return encoded


def encode(value: Value, depth: int = 0) -> dict | None:
    kind = value.kind
    if depth > MAX_DEPTH or kind is Kind.UNKNOWN or kind is Kind.LOCAL:
        return None
    data: dict[str, object] = {"k": kind.value}
    if value.qualname:
        data["q"] = value.qualname
    if value.literal is not None and kind in (Kind.STRING, Kind.NUMBER):
        data["l"] = value.literal
    if value.dtype:
        data["d"] = value.dtype
    if value.float64_by_default:
        data["f64"] = True
    for flag in _FLAGS:
        if getattr(value, flag) is not None:
            data[flag] = getattr(value, flag)
    if value.element is not None:
        element = encode(value.element, depth + 1)
        if element is not None:
            data["e"] = element
    if value.items is not None:
        data["i"] = [encode(item, depth + 1) for item in value.items]
        if value.open_ended:
            data["open"] = True
    definition = value.definition
    if isinstance(definition, FunctionInfo):
        data["fn"] = _encode_function(definition, depth)
    elif isinstance(definition, ClassInfo):
        data["cls"] = _encode_class(definition, depth)
    return data


def _encode_function(info: FunctionInfo, depth: int) -> dict:
    """What a function returns for unknown arguments (``r``) and, when it has defaults, for a call that leaves
    every defaulted parameter to its default (``rd``); with its positional parameters (``p``) and the defaulted
    ones (``dp``), so that a caller can tell which applies."""
    if info.opaque:
        return {}
    data: dict[str, object] = {"role": info.role}
    returns = encode(info.returns_for_another_module(), depth + 1)
    if returns is not None:
        data["r"] = returns
    if info.node is not None and info.defaults and info.defaults_returns is not None:
        with_defaults = encode(info.defaults_returns, depth + 1)
        if with_defaults is not None and with_defaults != returns:
            params = info.node.params
            data["rd"] = with_defaults
            data["p"] = [param.name.value for param in (*params.posonly_params, *params.params)]
            data["dp"] = sorted(info.defaults)
    elif info.node is None and info.defaults_returns is not None:  # passed on from another module's summary
        data.update({"rd": encode(info.defaults_returns, depth + 1), "p": list(info.positional_names),
                     "dp": sorted(info.defaulted_names)})
    return data


def _encode_class(info: ClassInfo, depth: int) -> dict:
    """A class with what its bases give folded in (own definitions first), so readers need no lineage."""
    attributes: dict[str, object] = {}
    methods: dict[str, object] = {}
    names: dict[str, object] = {}
    for each in info.lineage():
        for name, value in each.attributes.items():
            if name not in attributes:
                attributes[name] = encode(value, depth + 1)
        for name, method in each.methods.items():
            if name not in methods:
                methods[name] = _encode_function(method, depth + 1)
        for name, value in each.class_names.items():
            if name not in names:
                names[name] = encode(value, depth + 1)
    return {"nn": any(each.is_nn_module for each in info.lineage()), "base": info.library_bases(),
            "attrs": {k: v for k, v in attributes.items() if v is not None}, "methods": methods,
            "names": {k: v for k, v in names.items() if v is not None}}


def decode_names(data: dict) -> dict[str, Value]:
    return {name: decode(value) for name, value in data.items() if isinstance(value, dict)}


def decode(data: dict) -> Value:
    """A value back from its summary; malformed data (a foreign or damaged cache) gives unknown."""
    try:
        return _decode(data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return UNKNOWN


def _decode(data: dict) -> Value:
    kind = _KINDS[data["k"]]
    definition: object | None = None
    if "fn" in data:
        definition = _decode_function(data["fn"])
    elif "cls" in data:
        definition = _decode_class(data["cls"])
    items = data.get("i")
    return Value(
        kind,
        qualname=data.get("q"),
        literal=data.get("l"),
        dtype=data.get("d"),
        float64_by_default=bool(data.get("f64", False)),
        requires_grad=data.get("requires_grad"),
        on_accelerator=data.get("on_accelerator"),
        has_params=data.get("has_params"),
        element=_decode(data["e"]) if "e" in data else None,
        items=None if items is None else tuple(decode(item) if item else UNKNOWN for item in items),
        open_ended=bool(data.get("open", False)),
        definition=definition,
    )


def _decode_function(data: dict) -> FunctionInfo:
    returns = decode(data["r"]) if "r" in data else UNKNOWN
    info = FunctionInfo(None, None, role=str(data.get("role", "function")), opaque="role" not in data)
    info.generic_returns = returns
    if "rd" in data:
        info.defaults_returns = decode(data["rd"])
        info.positional_names = tuple(str(name) for name in data.get("p", ()))
        info.defaulted_names = frozenset(str(name) for name in data.get("dp", ()))
    return info


def _decode_class(data: dict) -> ClassInfo:
    info = ClassInfo(None, None, bool(data.get("nn")), [], data.get("base"))
    info.attributes = decode_names(data.get("attrs", {}))
    info.class_names = decode_names(data.get("names", {}))
    for name, method in data.get("methods", {}).items():
        function = _decode_function(method)
        function.owner = info
        info.methods[name] = function
    info.attributes_collected = True
    return info
