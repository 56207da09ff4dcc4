"""Walking the batches users pass: mappings, sequences, namedtuples, dataclasses, objects with .to().

The rules follow what PyTorch users know from Lightning's ``move_data_to_device`` and accelerate's
``send_to_device``, so that a batch comes back with the type it went in with.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import UserDict, deque
from collections.abc import Callable, Collection, Mapping
from enum import Enum
from typing import Any

import numpy as np
import torch

from ._dtypes import _type_name, _unsupported_dtype_advice


class Leaf(Enum):
    """What the walker hands to its callback."""

    DATA = "data"  # a tensor, or a numeric ndarray / numpy scalar
    MOVABLE = "movable"  # an object with its own .to() (PackedSequence, TensorDict, a batch class)


class _Field(str):
    """A step of a path into a batch that is an attribute (a dataclass or namedtuple field), not a key."""


def _format_path(path: tuple[Any, ...]) -> str:
    """Where a leaf sits, as Python would reach it: ``batch['meta'].ids[0]``."""
    return "batch" + "".join(f".{step}" if isinstance(step, _Field) else f"[{step!r}]" for step in path)


def _has_own_to(item: Any) -> bool:
    return not isinstance(item, type) and callable(getattr(item, "to", None))


class BatchWalker:
    """Maps a callback over the data leaves of a batch, rebuilding each container only where a leaf changed.

    - tensors and numeric ndarrays / numpy scalars are leaves (``Leaf.DATA``);
    - text arrays (str, bytes) and every other object without tensors in reach pass through as they are;
    - arrays of other dtypes (object, datetime, structured) raise TypeError naming where they are;
    - ``dict`` and ``UserDict`` (Hugging Face's ``BatchEncoding``), with subclasses such as ``OrderedDict``
      and ``defaultdict``, are copied with ``copy.copy`` and refilled, keeping type, order, attributes
      and ``default_factory``; other mappings are rebuilt with ``type(m)(dict)``;
    - objects with their own ``.to()`` (``PackedSequence``, ``TensorDict``, a custom batch class) are
      leaves too (``Leaf.MOVABLE``): their method knows what must stay on the host;
    - namedtuples, tuples, lists and deques keep their type; dataclass instances are rebuilt with
      ``dataclasses.replace`` (so frozen ones work, and ``__post_init__`` runs again);
    - values under a mapping key, dataclass field or namedtuple field named in ``skip_keys`` are
      left exactly as they are, at any depth.
    """

    def __init__(self, caller: str, skip_keys: Collection[Any] = ()) -> None:
        self._caller = caller
        self._skip_keys = frozenset(skip_keys)

    def map(self, item: Any, convert: Callable[[Any, Leaf], Any]) -> Any:
        return self._map(item, convert, ())

    def _map(self, item: Any, convert: Callable[[Any, Leaf], Any], path: tuple[Any, ...]) -> Any:
        if isinstance(item, torch.Tensor):
            return convert(item, Leaf.DATA)
        if isinstance(item, (np.ndarray, np.generic)):
            return self._array(item, convert, path)
        if isinstance(item, (str, bytes, bytearray, memoryview, type)) or item is None:
            return item
        if isinstance(item, (dict, UserDict)):
            return self._mapping(item, convert, path, refill=True)
        if _has_own_to(item):
            return convert(item, Leaf.MOVABLE)
        if isinstance(item, Mapping):
            return self._mapping(item, convert, path, refill=False)
        if isinstance(item, tuple):
            return self._tuple(item, convert, path)
        if isinstance(item, (list, deque)):
            values = [self._map(value, convert, (*path, index)) for index, value in enumerate(item)]
            if all(new is old for new, old in zip(values, item)):
                return item
            if isinstance(item, deque):
                return type(item)(values, maxlen=item.maxlen)
            rebuilt = copy.copy(item)  # a list subclass keeps its type and attributes
            rebuilt[:] = values
            return rebuilt
        if dataclasses.is_dataclass(item):
            return self._dataclass(item, convert, path)
        return item

    def _array(self, array: np.ndarray | np.generic, convert: Callable[[Any, Leaf], Any],
               path: tuple[Any, ...]) -> Any:
        kind = array.dtype.kind
        if kind in "biufc":
            return convert(array, Leaf.DATA)
        if kind in "US":  # file names, captions: not tensor data
            return array
        advice = _unsupported_dtype_advice(array.dtype)
        raise TypeError(
            f"{self._caller}() cannot move {_format_path(path)}, an array of dtype {array.dtype}: {advice}; "
            "or name its key in skip_keys to leave it on the host"
        )

    def _mapping(self, mapping: Mapping[Any, Any], convert: Callable[[Any, Leaf], Any], path: tuple[Any, ...],
                 *, refill: bool) -> Any:
        changed = {}
        for key, value in mapping.items():
            if key in self._skip_keys:
                continue
            new = self._map(value, convert, (*path, key))
            if new is not value:
                changed[key] = new
        if not changed:
            return mapping
        if refill:
            rebuilt = copy.copy(mapping)
            for key, value in changed.items():
                rebuilt[key] = value  # type: ignore[index]
            return rebuilt
        try:
            return type(mapping)({**mapping, **changed})  # type: ignore[call-arg]
        except TypeError as error:
            raise TypeError(
                f"{self._caller}() cannot rebuild {_format_path(path)}, a {_type_name(mapping)} holding tensors, "
                f"from a dict ({error}); give it a .to() method, or name its key in skip_keys"
            ) from None

    def _tuple(self, item: tuple[Any, ...], convert: Callable[[Any, Leaf], Any], path: tuple[Any, ...]) -> Any:
        fields = getattr(item, "_fields", None)  # a namedtuple
        if fields is not None:
            values = [value if name in self._skip_keys else self._map(value, convert, (*path, _Field(name)))
                      for name, value in zip(fields, item)]
        else:
            values = [self._map(value, convert, (*path, index)) for index, value in enumerate(item)]
        if all(new is old for new, old in zip(values, item)):
            return item
        return type(item)(*values) if fields is not None else type(item)(values)

    def _dataclass(self, item: Any, convert: Callable[[Any, Leaf], Any], path: tuple[Any, ...]) -> Any:
        changed = {}
        for field in dataclasses.fields(item):
            if not field.init or field.name in self._skip_keys:
                continue
            value = getattr(item, field.name)
            new = self._map(value, convert, (*path, _Field(field.name)))
            if new is not value:
                changed[field.name] = new
        return dataclasses.replace(item, **changed) if changed else item
