"""Library models as data: what a call or attribute of NumPy, torch and other libraries gives.

The knowledge lives in TOML tables beside this module (``models/numpy.toml``, ``models/torch.toml``, ...), one
row per callable or attribute, in the spirit of CodeQL's "models as data"; users add rows for their own code
in ``[tool.np2torch-lint.models]``. A row maps a qualified name to a *spec*::

    "numpy.zeros"        = "ndarray[float64-default, dtype-param=1]"
    "cv2.imread"         = "ndarray[uint8]"
    "numpy.ndarray.T"    = "same"                      # under [attributes]
    "gymnasium.make"     = "instance(gymnasium.Env)"
    "gymnasium.Env.step" = "tuple(ndarray, number, number[bool], number[bool], other)"

A spec is a kind, optionally with arguments in parentheses and attributes in brackets. ``docs/inference.md``
lists the kinds and attributes; this module only parses and checks them, and ``library.py`` applies them.
Methods are rows under their class (``torch.Tensor.float``, ``numpy.random.Generator.normal``); a row whose
last part is ``*`` matches any one name at that place (``torchvision.models.*``) when no exact row does.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .dtypes import DTYPE_NAMES

#: what a row may say a call gives; each is applied by ``library.LibraryMixin``.
KINDS = frozenset({
    # values
    "ndarray", "numpy-value", "number", "tensor", "parameter", "module", "instance", "tuple", "sequence",
    "device", "dataloader", "other", "none", "unknown",
    # ``x.device.type``: the device's name, "cpu" where the device is the host
    "device-name",
    # a wrapper's method or attribute: the same one of the object it wraps (``wraps=N``)
    "wrapped",
    # the receiver (or the first argument), changed as the attributes say
    "same",
    # calls whose effect is more than a value: handled by named code in the analysis
    "to-numpy", "move", "move-module", "requires-grad", "retype", "module-output", "parameters",
    "grad-mode", "sets-default-dtype",
    # ``functools.partial(f, ...)``: ``f`` called later with these arguments first
    "partial",
})
#: attributes that take no value.
FLAGS = frozenset({
    "float64-default", "reduces", "no-grad", "accelerator", "cpu", "created", "legacy", "promote", "no-params",
    "params-of-args", "autograd", "decides-dtype", "from-bounds", "args-give-tuple", "off", "on",
    "set", "inference", "clears-origins", "keeps-device", "floats", "widens-ints", "numpy-scalar", "in-place",
    "unknown-dtype",
    # ``instance``: the object lives where the tensors it is built from do (a distribution of CUDA logits)
    "device-of-args",
    # ``Q.__array__``: the array NumPy gets without a copy is read-only (PIL hands out its pixels as ``bytes``)
    "read-only",
    # NumPy converts every tensor it is given, or finds in a list or tuple it is given, with ``Tensor.__array__``
    # (``.numpy()``); or it hands a tensor itself to the tensor's own method, and converts only those in a list
    "converts-tensors", "dispatches-to-tensor",
})
#: attributes that take a value, and what the value may be.
_ARGUMENT = r"(?:\d+|self)"
PARAMS: dict[str, re.Pattern[str]] = {
    "dtype-param": re.compile(r"\d+|kw"),  # where the dtype argument is: position N, or only ``dtype=``
    "size-param": re.compile(r"\d+|\*"),  # without a size the call gives one Python number; * = any positional
    "like": re.compile(_ARGUMENT),  # kind and dtype of that argument (numpy sources only)
    "dtype-of": re.compile(_ARGUMENT),  # an ndarray whatever that argument is, with its dtype when known
    "float-of": re.compile(_ARGUMENT),  # floats keep their dtype, integers become float64
    "complex-of": re.compile(_ARGUMENT),  # complex of that array's precision (np.fft)
    "real-of": re.compile(_ARGUMENT),  # the real dtype of that array's precision (np.real, np.imag)
    "promote-items": re.compile(r"\d+"),  # NumPy's promotion over the items of that argument
    "from-data": re.compile(r"\d+"),  # ``np.array(data)``: a literal's, an array's or a sequence's dtype
    "fill": re.compile(r"\d+"),  # ``np.full(shape, fill)``: the fill value's dtype
    "converts": re.compile(r"\d+"),  # a NumPy -> torch conversion of that argument
    "dtype-of-arg": re.compile(r"\d+"),  # ``t.type_as(other)``: the dtype of that tensor argument
    "device-param": re.compile(r"\d+|kw"),  # where the device argument is
    "parameters": re.compile(r"[A-Za-z_][\w|]*"),  # a module's parameters, ``weight|bias``
    "buffers": re.compile(r"[A-Za-z_][\w|]*"),  # a module's buffers, ``running_mean|running_var``
    "wraps": re.compile(r"\d+"),  # ``instance``: a wrapper built around that argument (its ``wrapped`` rows)
    "keeps": re.compile(r"\d+"),  # ``instance``: that argument itself when it is a known object, as wrapped
    "changes": re.compile(r"\d+"),  # ``wrapped``: that item of the wrapped method's result is not kept
    "elements-of": re.compile(r"\d+"),  # a sequence of that argument's elements (empty without it)
    "items-like": re.compile(r"\*"),  # a tuple of one array per positional argument, each of its dtype
    "or-item": re.compile(r"\d+"),  # ``tuple``: or (older versions) that item alone; unpacking tells which
}
#: a row that applies only when an argument is a string literal: ``"envpool.make[env_type@1=gym]"`` (the keyword
#: ``env_type``, or the argument at position 1, is ``"gym"``).
_SELECTED_ROW = re.compile(
    r"(?P<qualname>[A-Za-z_][\w.]*)\[(?P<name>\w+)(?:@(?P<position>\d+))?=(?P<literal>[\w.-]+)\]")
_SPEC = re.compile(r"\s*(?P<kind>[a-z-]+)\s*(?:\((?P<inner>.*)\))?\s*(?:\[(?P<attrs>[^\]]*)\])?\s*$", re.S)


class ModelError(ValueError):
    """A row that cannot be read; the message names the row and what is wrong."""


@dataclass(frozen=True, slots=True)
class Model:
    """One row: what calling (or reading) a qualified name gives."""

    kind: str
    dtype: str | None = None
    flags: frozenset[str] = frozenset()
    params: Mapping[str, str] = field(default_factory=dict)
    #: ``tuple(...)``/``sequence(...)``: the items' models; ``instance(...)``: the class's qualified name.
    items: tuple[Model, ...] = ()
    of: str | None = None
    #: ``tuple(a, b, ...)``: only the first items are known, the length is not.
    open_ended: bool = False

    def param(self, name: str) -> str | None:
        return self.params.get(name)

    def names(self, name: str) -> frozenset[str]:
        value = self.params.get(name)
        return frozenset(value.split("|")) if value else frozenset()


def parse_spec(spec: str) -> Model:
    """``"ndarray[float64-default, dtype-param=1]"`` -> a ``Model``; raises ``ModelError`` when malformed."""
    match = _SPEC.match(spec)
    if match is None:
        raise ModelError(f"{spec!r} is not a spec like 'ndarray[uint8]' or 'instance(pkg.Class)'")
    kind, inner, attrs = match.group("kind"), match.group("inner"), match.group("attrs")
    if kind not in KINDS:
        raise ModelError(f"{spec!r}: unknown kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    items: tuple[Model, ...] = ()
    of = None
    open_ended = False
    if inner is not None:
        if kind == "instance":
            of = inner.strip()
            if not re.fullmatch(r"[A-Za-z_][\w.]*", of):
                raise ModelError(f"{spec!r}: instance(...) takes a qualified class name")
        elif kind in ("tuple", "sequence"):
            parts = _split_top_level(inner)
            if parts and parts[-1] == "...":
                open_ended, parts = True, parts[:-1]
            items = tuple(parse_spec(part) for part in parts)
        else:
            raise ModelError(f"{spec!r}: only tuple, sequence and instance take arguments in (...)")
    elif kind == "instance":
        raise ModelError(f"{spec!r}: instance needs its class, as in instance(pkg.Class)")
    dtype = None
    flags: set[str] = set()
    params: dict[str, str] = {}
    for attribute in (a.strip() for a in (attrs or "").split(",")):
        if not attribute:
            continue
        name, _, value = attribute.partition("=")
        name, value = name.strip(), value.strip()
        if not value and name in DTYPE_NAMES.values():
            dtype = name
        elif not value and name in FLAGS:
            flags.add(name)
        elif value and name in PARAMS:
            if not PARAMS[name].fullmatch(value):
                raise ModelError(f"{spec!r}: {name}={value} is not allowed")
            params[name] = value
        else:
            raise ModelError(f"{spec!r}: unknown attribute {attribute!r}")
    if "or-item" in params and (kind != "tuple" or open_ended or int(params["or-item"]) >= len(items)):
        raise ModelError(f"{spec!r}: or-item=N needs a tuple of known length with an item N")
    return Model(kind, dtype, frozenset(flags), params, items, of, open_ended)


def _split_top_level(text: str) -> list[str]:
    """Split ``a, b[x, y], tuple(c, d)`` at the commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


@dataclass(frozen=True, slots=True)
class Selector:
    """A row that applies when the keyword ``name`` (or the argument at ``position``) is the string ``literal``."""

    name: str
    position: int | None
    literal: str
    model: Model


@dataclass(frozen=True)
class Models:
    """The rows in force: ``calls`` (functions, classes, methods) and ``attributes``, by qualified name."""

    calls: Mapping[str, Model]
    attributes: Mapping[str, Model]

    def call(self, qualname: str) -> Model | None:
        return _lookup(self.calls, qualname)

    @functools.cached_property
    def selectors(self) -> dict[str, tuple[Selector, ...]]:
        """The rows chosen by a string argument (``"envpool.make[env_type@1=gym]"``), by the callable's name."""
        found: dict[str, tuple[Selector, ...]] = {}
        for key, model in self.calls.items():
            match = _SELECTED_ROW.fullmatch(key) if key.endswith("]") else None
            if match is not None:
                position = match.group("position")
                selector = Selector(match.group("name"), None if position is None else int(position),
                                    match.group("literal"), model)
                found[match.group("qualname")] = (*found.get(match.group("qualname"), ()), selector)
        return found

    def attribute(self, qualname: str) -> Model | None:
        return _lookup(self.attributes, qualname)

    @functools.cached_property
    def module_moves(self) -> frozenset[str]:
        """The methods that move an ``nn.Module`` in place (``to``, ``cuda``, ...: rows of kind ``move-module``)."""
        prefix = "torch.nn.Module."
        return frozenset(key[len(prefix):] for key, model in self.calls.items()
                         if key.startswith(prefix) and model.kind == "move-module")

    def with_rows(self, rows: Mapping[str, str], where: str) -> Models:
        """These models plus user rows (``[tool.np2torch-lint.models]``), which win over built-in ones."""
        calls = dict(self.calls)
        for qualname, spec in rows.items():
            _check_name(qualname, f"{where} {qualname!r}")
            calls[qualname] = _parsed(spec, f"{where} {qualname!r}")
        return Models(calls, self.attributes)


def _lookup(rows: Mapping[str, Model], qualname: str) -> Model | None:
    model = rows.get(qualname)
    if model is None and "." in qualname:
        model = rows.get(qualname.rsplit(".", 1)[0] + ".*")
    return model


def _check_name(qualname: str, where: str) -> None:
    if "[" in qualname and _SELECTED_ROW.fullmatch(qualname) is None:
        raise ModelError(f"{where}: a row chosen by an argument is written 'pkg.make[name@1=literal]'")


def _parsed(spec: object, where: str) -> Model:
    if not isinstance(spec, str):
        raise ModelError(f"{where}: a model must be a string like 'ndarray[uint8]', not {spec!r}")
    try:
        return parse_spec(spec)
    except ModelError as error:
        raise ModelError(f"{where}: {error}") from None


def load_table(text: str, where: str) -> tuple[dict[str, Model], dict[str, Model]]:
    table = tomllib.loads(text)
    unknown = set(table) - {"calls", "attributes"}
    if unknown:
        raise ModelError(f"{where}: unknown table {sorted(unknown)[0]!r} (use [calls] and [attributes])")
    calls = {}
    for name, spec in table.get("calls", {}).items():
        _check_name(name, f"{where} [calls] {name!r}")
        calls[name] = _parsed(spec, f"{where} [calls] {name!r}")
    attributes = {name: _parsed(spec, f"{where} [attributes] {name!r}")
                  for name, spec in table.get("attributes", {}).items()}
    return calls, attributes


_builtin: Models | None = None


def builtin_models() -> Models:
    """The rows shipped in ``models/*.toml``, read once per process."""
    global _builtin
    if _builtin is None:
        calls: dict[str, Model] = {}
        attributes: dict[str, Model] = {}
        folder = resources.files(__package__) / "models"
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                more_calls, more_attributes = load_table(entry.read_text(encoding="utf-8"), entry.name)
                calls.update(more_calls)
                attributes.update(more_attributes)
        _builtin = Models(calls, attributes)
    return _builtin
