"""NPT005: one ``.to(device)``/``.cuda()`` per item inside a loop or comprehension whose results are collected.

Each transfer is a separate host-to-device copy with its own launch and synchronisation cost; stacking on the
host and moving the batch once is one copy. Docs: ``docs/rules/NPT005.md``.

The fix (unsafe: stacking needs same-shaped items, and the items become views of one batch) exists for the
plain comprehension ``[torch.from_numpy(a).to(device) for a in arrays]`` (or of tensors, ``[t.to(device) for t
in ts]``), alone or inside ``torch.stack(...)``. A ``for`` loop that appends has no fix: it may do other work.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, call, keyword, method_call
from ..analysis import CollectedTransfer, Facts

CODE = "NPT005"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    seen = set()
    for transfer in facts.collected_transfers:
        if transfer.node in seen:
            continue
        seen.add(transfer.node)
        yield Finding(CODE, transfer.node, "one device transfer per item in a loop: stack the items on the host "
                                           "and move the batch once", _fix(transfer), transfer.through)


def _fix(transfer: CollectedTransfer) -> Fix | None:
    target = transfer.stacked_by if transfer.stacked_by is not None else transfer.loop
    if transfer.stacked_by is None and not isinstance(transfer.loop, cst.ListComp):
        return None  # a for loop, or a generator consumed by something else: no rewrite is sure to be right
    if _batched(target, None) is None:
        return None
    return Fix(Applicability.UNSAFE, "Stack the items and transfer the batch once", _batched, target)


def _batched(node: cst.CSTNode, edit: Edit | None) -> cst.CSTNode | None:
    """``[torch.from_numpy(a).to(d) for a in arrays]`` -> ``list(torch.from_numpy(np.stack(arrays)).to(d))``;
    inside ``torch.stack(..., dim)`` the batch itself, stacked along that dim. Returns None (checking, ``edit``
    None) or ``node`` (fixing) when the code is not of that shape, or has an argument the rewrite cannot carry."""
    unchanged = node if edit is not None else None
    stacking = _stacking(node) if isinstance(node, cst.Call) else (node, None)
    if stacking is None:
        return unchanged
    comprehension, dim = stacking
    if not isinstance(comprehension, (cst.ListComp, cst.GeneratorExp)):
        return unchanged
    loop = comprehension.for_in
    element = comprehension.elt
    if (loop.inner_for_in is not None or loop.ifs or loop.asynchronous is not None
            or not isinstance(loop.target, cst.Name) or not isinstance(element, cst.Call)
            or not isinstance(element.func, cst.Attribute) or element.func.attr.value not in ("to", "cuda")):
        return unchanged
    item = loop.target.value
    receiver = element.func.value
    if isinstance(receiver, cst.Name) and receiver.value == item:
        arrays = False
    elif (isinstance(receiver, cst.Call) and _called(receiver) in ("from_numpy", "as_tensor")
          and len(receiver.args) == 1 and isinstance(receiver.args[0].value, cst.Name)
          and receiver.args[0].value.value == item and receiver.args[0].keyword is None):
        arrays = True
    else:
        return unchanged
    if edit is None:
        return node  # the shape fits: a fix exists
    iterable = loop.iter.with_changes(lpar=[], rpar=[]) if isinstance(loop.iter, cst.GeneratorExp) else loop.iter
    device_args = [arg for arg in element.args if not (arg.keyword and arg.keyword.value == "non_blocking")]
    if arrays and edit.style is FixStyle.HELPERS and dim is None and _one_device(element, device_args):
        device = device_args[0].value if device_args else cst.SimpleString('"cuda"')
        batch: cst.BaseExpression = call(edit.helper("stack_to_device"), cst.Arg(iterable), cst.Arg(device))
    else:  # stack_to_device stacks along the first dim only: elsewhere the plain idiom, which takes any dim
        if arrays:
            axis = [keyword("axis", dim)] if dim is not None else []
            host = call(edit.attribute("torch", "from_numpy"),
                        cst.Arg(call(edit.attribute("numpy", "stack"), cst.Arg(iterable), *axis)))
        else:
            host = call(edit.attribute("torch", "stack"), cst.Arg(iterable),
                        *([keyword("dim", dim)] if dim is not None else []))
        moved = method_call(host, element.func.attr.value)
        batch = moved.with_changes(args=element.args)
    if isinstance(node, cst.Call):  # torch.stack([...]) is the batch itself
        return batch.with_changes(lpar=node.lpar, rpar=node.rpar)
    return call(cst.Name("list"), cst.Arg(batch)).with_changes(lpar=node.lpar, rpar=node.rpar)


def _stacking(node: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression | None] | None:
    """What ``torch.stack(tensors, dim=0, *, out=None)`` is given: the tensors, and the dim where it is not the
    first (None). None when an argument cannot be carried: ``out=`` (the batch would be another tensor), a star,
    or a dim that is not a number or a name (the rewrite evaluates the dim before the device, not after it)."""
    tensors: cst.BaseExpression | None = None
    dim: cst.BaseExpression | None = None
    for index, arg in enumerate(node.args):
        name = arg.keyword.value if arg.keyword is not None else ("tensors", "dim")[index] if index < 2 else None
        if arg.star or name not in ("tensors", "dim") or (tensors if name == "tensors" else dim) is not None:
            return None
        if name == "tensors":
            tensors = arg.value
        else:
            dim = arg.value
    if tensors is None or (dim is not None and not _plain_dim(dim)):
        return None
    return tensors, None if dim is not None and _is_zero(dim) else dim


def _plain_dim(dim: cst.BaseExpression) -> bool:
    """A number (``1``, ``-1``) or a name (``axis``, ``self.dim``): the same value as NumPy's ``axis`` however
    the two calls order their arguments' evaluation."""
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, cst.Minus):
        dim = dim.expression
    while isinstance(dim, cst.Attribute):
        dim = dim.value
    return isinstance(dim, cst.Integer) or isinstance(dim, cst.Name) and dim.value not in ("None", "True", "False")


def _is_zero(dim: cst.BaseExpression) -> bool:
    if isinstance(dim, cst.UnaryOperation) and isinstance(dim.operator, (cst.Minus, cst.Plus)):
        dim = dim.expression
    return isinstance(dim, cst.Integer) and dim.evaluated_value == 0


def _called(node: cst.Call) -> str | None:
    func = node.func
    return func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)


def _one_device(element: cst.Call, device_args: list[cst.Arg]) -> bool:
    """``.to(device)`` with one positional device, or a bare ``.cuda()``: what stack_to_device takes."""
    if element.func.attr.value == "cuda":  # type: ignore[attr-defined]
        return not device_args
    return len(device_args) == 1 and device_args[0].keyword is None and not device_args[0].star
