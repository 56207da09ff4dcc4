"""Names and their values: one ``Scope`` per module, function, class body or comprehension.

A branch's ``copy()`` reads the names bound before it through ``inherited`` instead of copying them, so an
``if`` costs what its branches bind, not the size of the scope (a module of thousands of ``if`` blocks was
quadratic).
"""

from __future__ import annotations

from .values import UNKNOWN, Value, join_all


#: The key prefix under which a scope keeps what an ``assert`` said of a flag (``assert not config.deep_fusion``):
#: no Python name holds a colon.
ASSERTED = "assert:"


class Scope:
    """Names bound in one function or module body; reads fall back to the enclosing scope.

    A branch's ``copy()`` does not copy the names bound before the branch: it reads them through ``inherited``
    (those dicts, newest first, are not written while the copy lives), so a module of thousands of ``if`` blocks
    costs each block only its own names, and ``join_from`` looks only at what the branches bound.
    """

    __slots__ = ("names", "inherited", "parent")

    def __init__(self, parent: Scope | None = None, names: dict[str, Value] | None = None,
                 inherited: tuple[dict[str, Value], ...] = ()) -> None:
        self.parent = parent
        self.names: dict[str, Value] = {} if names is None else names
        self.inherited = inherited

    def get(self, name: str) -> Value | None:
        """The value bound to ``name`` in this scope (not the enclosing ones), or None."""
        value = self.names.get(name)
        if value is None:
            for layer in self.inherited:
                value = layer.get(name)
                if value is not None:
                    break
        return value

    def lookup(self, name: str) -> Value | None:
        scope: Scope | None = self
        while scope is not None:
            value = scope.get(name)
            if value is not None:
                return value
            scope = scope.parent
        return None

    def copy(self) -> Scope:
        # an empty layer is skipped: an ``elif`` chain of thousands of branches then reads through one layer
        layers = (self.names, *self.inherited) if self.names else self.inherited
        if len(layers) > _MAX_LAYERS:  # deep nesting that binds at every level: flatten all but the outermost
            merged: dict[str, Value] = {}
            for layer in reversed(layers[:-1]):
                merged.update(layer)
            layers = (merged, layers[-1])
        return Scope(self.parent, {}, layers)

    def rebound_in(self, *branches: Scope) -> set[str]:
        """The names ``branches`` (copies of this scope, or copies of copies) bound since they were copied."""
        own_layers = {id(self.names), *map(id, self.inherited)}
        keys: set[str] = set()
        for branch in branches:
            keys.update(branch.names)
            for layer in branch.inherited:
                if id(layer) not in own_layers:
                    keys.update(layer)
        return keys

    def join_from(self, *branches: Scope) -> None:
        """Make this scope the join of ``branches`` (copies of it, or of copies of it, that ran different code):
        the names any of them bound, in itself or in a copy between it and this scope (an ``elif``'s test)."""
        names = self.names
        for key in self.rebound_in(*branches):
            values = [b.get(key) for b in branches]
            first = values[0]
            if first is not None and all(value is first for value in values):
                names[key] = first  # the usual case: no branch rebound it
                continue
            if key.startswith(ASSERTED) and None in values:
                names[key] = UNKNOWN  # asserted on some paths only: not known where they meet
                continue
            # a branch where the name is unbound cannot reach a later use of it: only the others count
            found = [value if value is not None else b.lookup(key) for value, b in zip(values, branches)]
            names[key] = join_all([value for value in found if value is not None]) or UNKNOWN


_MAX_LAYERS = 16
