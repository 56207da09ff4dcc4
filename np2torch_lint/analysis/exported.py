"""A module's summary for the other modules of the project, as plain data (JSON-able), and back.

What another module sees of a module is what its top-level names are, in the terms of ``values.Value``: a
function is what its body returns read with unknown (or annotated) parameters; a class is whether it is an
``nn.Module``, its library base, what its methods assign to ``self`` and what each method returns; a module-level
name is its value. Facts tied to one file (the conversion calls behind a float64, loop bookkeeping) are dropped;
a function that returns its parameter moved to a device says which parameters (``mv``), so that a call in a loop
over items is a per-item transfer (NPT005); one a module imports from another says where it is defined (``from``),
so that a caller can read its body there.
Values nest at most ``MAX_DEPTH`` deep; what is deeper is unknown.
"""

from __future__ import annotations

from pathlib import Path

from .definitions import ClassInfo, FunctionInfo, RecordType
from .module_parameters import holds_no_parameters, may_have_unnamed_members
from .values import UNKNOWN, Kind, ParameterMove, Value

MAX_DEPTH = 4
_KINDS = {kind.value: kind for kind in Kind}
_FLAGS = ("requires_grad", "on_accelerator", "has_params")


#: the key of the table of classes in a summary (not an identifier: no module-level name can take it)
CLASSES = "<classes>"


def encode_names(names: dict[str, Value]) -> dict[str, object]:
    """The summary of a module from the values its scope holds at the end."""
    encoder = _Encoder()
    encoded: dict[str, object] = {}
    for name, value in names.items():
        data = encoder.value(value)
        if data is not None:
            encoded[name] = data
    if encoder.classes:
        encoded[CLASSES] = encoder.classes
    return encoded


class _Encoder:
    """Values as data. Each class is written once, in the table of classes, and referred to by its position
    there (``"c"``): a class's methods often return instances of it (``to``, ``cuda``, ``train`` of every
    ``nn.Module``), which written out in place would grow as the number of methods to the power of the depth."""

    def __init__(self) -> None:
        self.classes: list[dict] = []
        self._positions: dict[int, int] = {}
        self._keep: list[ClassInfo] = []  # keeps each id() in _positions meaning one class

    def value(self, value: Value, depth: int = 0) -> dict | None:
        kind = value.kind
        if kind is Kind.UNKNOWN and value.choices is not None and depth <= MAX_DEPTH:
            # one of several objects or classes, chosen at run time (``runner_class`` of a factory's tuple)
            choices = [self.value(choice, depth + 1) for choice in value.choices]
            return None if None in choices else {"k": kind.value, "ch": choices}
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
            element = self.value(value.element, depth + 1)
            if element is not None:
                data["e"] = element
        if value.items is not None:
            data["i"] = [self.value(item, depth + 1) for item in value.items]
            if value.open_ended:
                data["open"] = True
            if value.keys is not None:
                data["ks"] = list(value.keys)
        definition = value.definition
        if isinstance(definition, FunctionInfo):
            data["fn"] = self.function(definition, depth)
        elif isinstance(definition, ClassInfo):
            data["c"] = self.class_position(definition)
        elif isinstance(definition, RecordType):
            data["rec"] = list(definition.fields)
        return data

    def function(self, info: FunctionInfo, depth: int) -> dict:
        """What a function returns for unknown arguments (``r``) and, when it has defaults, for a call that
        leaves every defaulted parameter to its default (``rd``); with its positional parameters (``p``) and the
        defaulted ones (``dp``), so that a caller can tell which applies."""
        if info.opaque:
            return {}
        data: dict[str, object] = {"role": info.role}
        returns = self.value(info.returns_for_another_module(), depth + 1)
        if returns is not None:
            data["r"] = returns
        if info.node is not None and info.defaults and info.defaults_returns is not None:
            # unknown with the defaults (``{}``, read back as unknown) says more than a known generic result: the
            # defaults skip what unknown arguments might do (``if device is not None: x = x.to(device)``)
            with_defaults = self.value(info.defaults_returns, depth + 1) or {}
            if with_defaults != (returns or {}):
                params = info.node.params
                data["rd"] = with_defaults
                data["p"] = [param.name.value for param in (*params.posonly_params, *params.params)]
                data["dp"] = sorted(info.defaults)
        elif info.node is None and info.defaults_returns is not None:  # passed on from another module's summary
            data.update({"rd": self.value(info.defaults_returns, depth + 1) or {}, "p": list(info.positional_names),
                         "dp": sorted(info.defaulted_names)})
        if info.node is None and info.origin is not None:
            # another module's, imported here (``from utils.torch import *``): a caller reads its body where it is
            data["from"] = [str(info.origin[0]), *info.origin[1]]
        move = info.generic_returns.moves_parameter if info.node is not None else info.moves_argument
        if move is not None and move.function is info and info.role in ("function", "staticmethod"):
            positional = info.moves_positional if info.node is None else tuple(
                param.name.value for param in (*info.node.params.posonly_params, *info.node.params.params))
            data["mv"] = {"item": move.item, "dev": move.device, "unk": move.item_kind_unknown,
                          "stack": move.needs_stack, "p": list(positional)}
        return data

    def class_position(self, info: ClassInfo) -> int:
        """A class's position in the table, written there on first use, with what its bases give folded in (own
        definitions first), so readers need no lineage."""
        position = self._positions.get(id(info))
        if position is not None:
            return position
        position = self._positions[id(info)] = len(self.classes)
        self._keep.append(info)
        self.classes.append({})  # taken before the class is written: it may refer to itself
        attributes: dict[str, object] = {}
        methods: dict[str, object] = {}
        names: dict[str, object] = {}
        for each in info.lineage():
            for name, value in each.attributes.items():
                if name not in attributes:
                    attributes[name] = self.value(value, 1)
            for name, method in each.methods.items():
                if name not in methods:
                    methods[name] = self.function(method, 1)
                    if each is not info and each.node is not None and methods[name]:
                        methods[name]["at"] = each.node.name.value  # a base's: its body is under the base's name
            for name, value in each.class_names.items():
                if name not in names:
                    names[name] = self.value(value, 1)
        self.classes[position] = {
            "nn": any(each.is_nn_module for each in info.lineage()), "base": info.library_bases(),
            "attrs": {k: v for k, v in attributes.items() if v is not None}, "methods": methods,
            "names": {k: v for k, v in names.items() if v is not None}}
        if info.record_fields is not None:
            self.classes[position].update({"rec": list(info.record_fields), "rtup": info.record_is_tuple})
        unknown = sorted(name for name, value in attributes.items() if value is None)
        if unknown:  # assigned, but to nothing a summary can say: ``getattr(self, f"x_{i}")`` may be one of them
            self.classes[position]["unknown"] = unknown
        if self.classes[position]["nn"] and not any(may_have_unnamed_members(each) for each in info.lineage()):
            # every member is named in ``attrs`` or ``unknown`` (a network's: ``getattr(self, f"encoder_{i}")``
            # picks among them; other classes are not walked for this)
            self.classes[position]["named"] = True
        if self.classes[position]["nn"] and holds_no_parameters(info):
            self.classes[position]["np"] = True
        if info.bases:  # for ``super()`` in its methods' bodies, read by callers (the members above are folded in)
            self.classes[position]["bases"] = [self.class_position(base) for base in info.bases]
        return position


def decode_names(data: dict, module: object | None = None) -> dict[str, Value]:
    """A module's names back from its summary; malformed data (a foreign or damaged cache) gives unknown. With
    ``module`` (what names the module: its path), each top-level function and class, and each method, knows where
    it is defined (``FunctionInfo.origin``), so that a caller may read its body."""
    table = data.get(CLASSES)
    decoder = _Decoder(table if isinstance(table, list) else [], module)
    names = {name: value for name, value in data.items() if name != CLASSES and isinstance(value, dict)}
    for name, value in names.items():  # classes first, by the names they are defined under
        if "c" in value and "k" in value and value["k"] == Kind.CLASS.value:
            decoder.value(value, name)
    return {name: decoder.value(value, name) for name, value in names.items()}


class _Decoder:
    def __init__(self, table: list, module: object | None = None) -> None:
        self.table = table
        self.module = module
        self.classes: dict[int, ClassInfo] = {}

    def value(self, data: dict, name: str | None = None) -> Value:
        """A value back from data; ``name``: the module-level name it is bound to, if it is one."""
        try:
            return self._value(data, name)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return UNKNOWN

    def _value(self, data: dict, name: str | None = None) -> Value:
        kind = _KINDS[data["k"]]
        if "ch" in data:
            return Value(kind, choices=tuple(self._value(choice) for choice in data["ch"]))
        definition: object | None = None
        if "fn" in data:
            definition = self.function(data["fn"], (name,) if name else None)
        elif "c" in data:
            definition = self.class_at(data["c"], name)
        elif "rec" in data:
            definition = RecordType(tuple(str(field) for field in data["rec"]))
        items = data.get("i")
        keys = data.get("ks")
        return Value(
            kind,
            qualname=data.get("q"),
            literal=data.get("l"),
            dtype=data.get("d"),
            float64_by_default=bool(data.get("f64", False)),
            requires_grad=data.get("requires_grad"),
            on_accelerator=data.get("on_accelerator"),
            has_params=data.get("has_params"),
            element=self._value(data["e"]) if "e" in data else None,
            items=None if items is None else tuple(self.value(item) if item else UNKNOWN for item in items),
            open_ended=bool(data.get("open", False)),
            keys=tuple(str(key) for key in keys) if isinstance(keys, list) and items is not None and len(keys) == len(
                items) else None,
            definition=definition,
        )

    def function(self, data: dict, where: tuple[str, ...] | None = None) -> FunctionInfo:
        """A function from data; ``where``: its name (and its class's) in the module, when it is defined there."""
        info = FunctionInfo(None, None, role=str(data.get("role", "function")), opaque="role" not in data)
        if where is not None and self.module is not None:
            info.origin = (self.module, where)
        defined_at = data.get("from")
        if isinstance(defined_at, list) and len(defined_at) >= 2 and all(isinstance(part, str) for part in defined_at):
            info.origin = (Path(defined_at[0]), tuple(defined_at[1:]))  # imported by that module, defined here
        info.generic_returns = self.value(data["r"]) if "r" in data else UNKNOWN
        if "rd" in data:
            info.defaults_returns = self.value(data["rd"])
            info.positional_names = tuple(str(name) for name in data.get("p", ()))
            info.defaulted_names = frozenset(str(name) for name in data.get("dp", ()))
        move = data.get("mv")
        if isinstance(move, dict):
            device = move.get("dev")
            info.moves_argument = ParameterMove(info, str(move["item"]), None if device is None else str(device),
                                                bool(move.get("unk")), bool(move.get("stack")))
            info.moves_positional = tuple(str(name) for name in move.get("p", ()))
        return info

    def class_at(self, position: object, name: str | None = None) -> ClassInfo:
        """The class at a position of the table; ``name``: a module-level name it is bound to (the first one read
        names the class where it is defined: its methods' bodies are looked up under it)."""
        if not isinstance(position, int) or isinstance(position, bool) or position < 0:
            raise ValueError(f"not a position in the table of classes: {position!r}")
        if position in self.classes:
            return self.classes[position]
        data = self.table[position]
        info = ClassInfo(None, None, bool(data.get("nn")), [], data.get("base"))
        self.classes[position] = info  # before its members are read: they may refer to it
        info.attributes = {name: self.value(value) for name, value in data.get("attrs", {}).items()
                           if isinstance(value, dict)}
        unknown = data.get("unknown")
        if isinstance(unknown, list):
            info.unknown_attributes = tuple(str(name) for name in unknown)
        info.class_names = {name: self.value(value) for name, value in data.get("names", {}).items()
                            if isinstance(value, dict)}
        for method_name, method in data.get("methods", {}).items():
            defined_in = method.get("at", name) if isinstance(method, dict) else name
            function = self.function(method, (str(defined_in), method_name) if name else None)
            function.owner = info
            info.methods[method_name] = function
        bases = data.get("bases")
        if isinstance(bases, list):
            info.bases = [self.class_at(base) for base in bases]
            for function in info.methods.values():  # a method folded in from a base belongs to that base
                defining = [base for base in info.lineage()[1:] if any(
                    method.origin == function.origin for method in base.methods.values())]
                if function.origin is not None and defining:
                    function.owner = defining[-1]  # (where its ``super()`` starts)
        if isinstance(data.get("rec"), list):
            info.record_fields = tuple(str(field) for field in data["rec"])
            info.record_is_tuple = bool(data.get("rtup"))
        info.parameter_free = data.get("np") is True
        info.unnamed_members = data.get("named") is not True
        info.attributes_collected = True
        return info
