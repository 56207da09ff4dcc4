"""Whether a network class of the project holds no parameters at all: its outputs then require grad only where its
inputs do.

A module the analysis does not know is taken to have trainable parameters, as most have, so what it gives may
require grad. A class of the project can say otherwise: ``BBoxTransform(nn.Module)``, a loss or a box decoder, whose
methods assign the object nothing that can hold a parameter (no submodule, no ``nn.Parameter``, nothing unknown)
and never register one by name (``register_parameter``, ``add_module``, ``setattr``). Its bases must be such classes
too, or ``nn.Module`` itself: ``nn.Linear`` brings its own weight.
"""

from __future__ import annotations

from typing import Mapping

from .definitions import ClassInfo
from .syntax import identifiers_in
from .values import Kind, Value

_PLAIN_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: what can add a parameter or submodule to an object without an ``self.x = ...`` the attributes show
_REGISTERING_NAMES = frozenset({"register_parameter", "add_module", "register_module", "setattr", "__dict__",
                                "_modules", "_parameters", "load_state_dict", "apply"})
#: kinds of value that hold no parameter
#: kinds of value that hold no parameter: a library object that is not a module (an optimizer, a writer) registers
#: nothing on the module
_NO_PARAMETER_KINDS = frozenset({Kind.NONE, Kind.NUMBER, Kind.STRING, Kind.NDARRAY, Kind.NUMPY_VALUE, Kind.REF,
                                 Kind.FUNCTION, Kind.CLASS, Kind.DEVICE, Kind.OTHER, Kind.INSTANCE,
                                 Kind.DATALOADER})


def holds_no_parameters(info: ClassInfo, given: Mapping[str, Value] | None = None) -> bool:
    """Whether objects of ``info`` (with its bases) can hold no trainable parameter; False when not sure. ``given``:
    what one construction passes for the attributes that hold a parameter of ``__init__`` as it came (``self.stride =
    stride``), in place of what a read with unknown parameters saw."""
    if info.parameter_free is not None:  # another module's class: its summary says
        return info.parameter_free
    for each in info.lineage():
        if each.unknown_bases or (each.library_base is not None and each.library_base not in _PLAIN_MODULE_BASES):
            return False
        if each.node is None:
            if each.parameter_free is not True:
                return False
            continue
        if _registrations(each) & _REGISTERING_NAMES:
            return False
        if not all(_holds_no_parameter(given.get(name, value) if given and each is info else value)
                   for name, value in each.attributes.items()):
            return False
    return True


def _holds_no_parameter(value: Value) -> bool:
    if value.choices is not None:
        return all(_holds_no_parameter(choice) for choice in value.choices)
    if value.kind is Kind.TENSOR:
        return value.requires_grad is False
    if value.kind is Kind.NN_MODULE:
        return value.has_params is False  # a loss or an activation
    if value.kind in (Kind.SEQUENCE, Kind.MAPPING):
        parts = [part for part in (value.element, *(value.items or ())) if part is not None]
        return bool(parts) and all(_holds_no_parameter(part) for part in parts)
    return value.kind in _NO_PARAMETER_KINDS


#: what adds a member whose name the code builds (``setattr(self, f"layer_{i}", ...)``)
_NAMING_REGISTRATIONS = _REGISTERING_NAMES - {"__dict__", "load_state_dict", "apply"} | {"register_buffer"}


def _adds_members_by_name(info: ClassInfo) -> bool:
    """Whether the class body (of this file) names anything that adds a member under a name built at run time."""
    return bool(_registrations(info) & _NAMING_REGISTRATIONS)


def may_have_unnamed_members(info: ClassInfo) -> bool:
    """Whether ``info`` may hold members its attributes do not name: another module's class unless its summary says
    every member is named; a class of this file whose body adds members by name."""
    if info.unnamed_members is None:
        info.unnamed_members = info.node is None or _adds_members_by_name(info)
    return info.unnamed_members


def _registrations(info: ClassInfo) -> frozenset[str]:
    """The names of ways to add members by name that the class body mentions, found once per class (its body does
    not change): one walk serves both questions above."""
    if info.registrations is None:
        wanted = _REGISTERING_NAMES | _NAMING_REGISTRATIONS
        info.registrations = frozenset() if info.node is None else frozenset(
            identifiers_in(info.node.body) & wanted)
    return info.registrations
