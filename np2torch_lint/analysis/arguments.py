"""A call's arguments, evaluated: what handlers of calls read."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .values import Kind, Value

#: the keys under which ``Args.keywords`` holds ``*args`` and ``**kwargs`` (no keyword can be spelled so)
STARRED = "**"
DOUBLE_STARRED = "***"


@dataclass(slots=True)
class Args:
    positional: list[Value]
    keywords: dict[str, Value]
    positional_nodes: list[cst.BaseExpression]
    keyword_nodes: dict[str, cst.BaseExpression] = field(default_factory=dict)

    @property
    def first(self) -> Value | None:
        return self.positional[0] if self.positional else None

    def all_values(self) -> list[Value]:
        return [*self.positional, *(v for k, v in self.keywords.items() if not k.startswith("*"))]

    def spread(self) -> Args:
        """``f(*xs, **kw)`` with what is known of ``xs`` and ``kw``: a list or tuple of known length adds its items
        as positional arguments, a dict of string keys its items as keywords; anything else stays starred. (The
        nodes stay the call's own: the spread values have none.)"""
        star, double = self.keywords.get(STARRED), self.keywords.get(DOUBLE_STARRED)
        positional, keywords = self.positional, self.keywords
        if star is not None and star.kind is Kind.SEQUENCE and star.items is not None and not star.open_ended:
            positional = [*positional, *star.items]
            keywords = {key: value for key, value in keywords.items() if key != STARRED}
        if (double is not None and double.kind is Kind.MAPPING and double.keys is not None
                and double.items is not None):
            keywords = {**{key: value for key, value in keywords.items() if key != DOUBLE_STARRED},
                        **dict(zip(double.keys, double.items))}
        if positional is self.positional and keywords is self.keywords:
            return self
        return Args(list(positional), keywords, self.positional_nodes, self.keyword_nodes)

    def tensors(self) -> list[Value]:
        found = []
        for value in self.all_values():
            if value.kind is Kind.TENSOR:
                found.append(value)
            elif value.kind is Kind.SEQUENCE:
                found.extend(v for v in (value.items or ((value.element,) if value.element else ()))
                             if v.kind is Kind.TENSOR)
        return found
