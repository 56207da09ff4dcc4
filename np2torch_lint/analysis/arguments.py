"""A call's arguments, evaluated: what handlers of calls read."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .values import Kind, Value


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

    def tensors(self) -> list[Value]:
        found = []
        for value in self.all_values():
            if value.kind is Kind.TENSOR:
                found.append(value)
            elif value.kind is Kind.SEQUENCE:
                found.extend(v for v in (value.items or ((value.element,) if value.element else ()))
                             if v.kind is Kind.TENSOR)
        return found
