"""Names and their values: one ``Scope`` per module, function, class body or comprehension."""

from __future__ import annotations

from .values import UNKNOWN, Value, join_all


class Scope:
    """Names bound in one function or module body; reads fall back to the enclosing scope."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: Scope | None = None, names: dict[str, Value] | None = None) -> None:
        self.parent = parent
        self.names: dict[str, Value] = {} if names is None else names

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            value = scope.names.get(name)
            if value is not None:
                return value
            scope = scope.parent
        return None

    def copy(self) -> Scope:
        return Scope(self.parent, dict(self.names))

    def join_from(self, *branches: Scope) -> None:
        """Make this scope the join of ``branches`` (copies of it that ran different code)."""
        keys = set().union(*(b.names.keys() for b in branches))
        names = self.names
        for key in keys:
            values = [b.names.get(key) for b in branches]
            first = values[0]
            if first is not None and all(value is first for value in values):
                names[key] = first  # the usual case: no branch rebound it
                continue
            # a branch where the name is unbound cannot reach a later use of it: only the others count
            found = [value if value is not None else b.lookup(key) for value, b in zip(values, branches)]
            names[key] = join_all([value for value in found if value is not None]) or UNKNOWN
