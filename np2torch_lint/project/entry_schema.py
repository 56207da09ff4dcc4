"""The shape of data read back from disk (the cache's entries), as data: ``check(schema, value)`` walks both and
raises ``SchemaError`` naming the first place that does not fit.

A schema is a Python type (``str``, ``bool``, ``dict``: exactly that type; an ``int`` is never a ``bool``) or one
of the classes below. Walking follows the schema, never the data, so data nested without end cannot take the
checker deeper than the schema goes.
"""

from __future__ import annotations

# Plain classes, not dataclasses: every run that reads the cache imports this module, and a dataclass's generated
# methods cost more to make than the rest of the module (start-up time). A schema is never compared or printed.


class SchemaError(ValueError):
    """Data that does not fit its schema; the message says where (``result.diagnostics[3].line``) and why."""


class Exactly:
    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value


class Choice:
    __slots__ = ("values",)

    def __init__(self, values: tuple[object, ...]) -> None:
        self.values = values


class Optional:
    """None, or what ``schema`` says."""

    __slots__ = ("schema",)

    def __init__(self, schema: object) -> None:
        self.schema = schema


class ListOf:
    """A list of items, each what ``item`` says; of ``length`` items when given (``[line, column]``: 2)."""

    __slots__ = ("item", "length")

    def __init__(self, item: object, length: int | None = None) -> None:
        self.item, self.length = item, length


class MapOf:
    __slots__ = ("key", "value")

    def __init__(self, key: object, value: object) -> None:
        self.key, self.value = key, value


class Record:
    """An object with every ``required`` key, maybe some ``optional`` ones, and no others."""

    __slots__ = ("required", "optional")

    def __init__(self, required: dict[str, object], optional: dict[str, object] | None = None) -> None:
        self.required, self.optional = required, optional or {}


#: a 1-based line or column
Position = "position"


def check(schema: object, value: object, where: str = "entry") -> None:
    """Raise ``SchemaError`` unless ``value`` fits ``schema``."""
    if schema is Position:
        if type(value) is not int or value < 1:
            raise SchemaError(f"{where}: expected a line or column (a positive integer), got {_kind(value)}")
    elif isinstance(schema, type):
        if type(value) is not schema:
            raise SchemaError(f"{where}: expected {schema.__name__}, got {_kind(value)}")
    elif isinstance(schema, Exactly):
        if type(value) is not type(schema.value) or value != schema.value:
            raise SchemaError(f"{where}: expected {schema.value!r}, got {_kind(value)}")
    elif isinstance(schema, Choice):
        if not any(type(value) is type(choice) and value == choice for choice in schema.values):
            raise SchemaError(f"{where}: expected one of {', '.join(map(repr, schema.values))}, got {_kind(value)}")
    elif isinstance(schema, Optional):
        if value is not None:
            check(schema.schema, value, where)
    elif isinstance(schema, ListOf):
        if type(value) is not list or schema.length not in (None, len(value)):
            wanted = "a list" if schema.length is None else f"a list of {schema.length}"
            raise SchemaError(f"{where}: expected {wanted}, got {_kind(value)}")
        for index, item in enumerate(value):
            check(schema.item, item, f"{where}[{index}]")
    elif isinstance(schema, MapOf):
        if type(value) is not dict:
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        for key, item in value.items():
            check(schema.key, key, f"{where} key {key!r}")
            check(schema.value, item, f"{where}[{key!r}]")
    elif isinstance(schema, Record):
        if type(value) is not dict:
            raise SchemaError(f"{where}: expected an object, got {_kind(value)}")
        for key in schema.required:
            if key not in value:
                raise SchemaError(f"{where}: no {key!r}")
        for key, item in value.items():
            expected = schema.required.get(key, schema.optional.get(key, _UNKNOWN))
            if expected is _UNKNOWN:
                raise SchemaError(f"{where}: unknown key {key!r}")
            check(expected, item, f"{where}.{key}")
    else:  # pragma: no cover - a mistake in a schema, not in the data
        raise TypeError(f"not a schema: {schema!r}")


_UNKNOWN = object()


def _kind(value: object) -> str:
    """What a JSON value is, briefly (a wrong value may be huge: it is never printed whole)."""
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)[:20]
    if isinstance(value, str):
        return f"a string ({value[:20]!r}{'...' if len(value) > 20 else ''})"
    return {list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
