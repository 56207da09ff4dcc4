"""NPT007: a host tensor from a ``non_blocking=True`` device-to-host copy, read before anything synchronises.

``x.to("cpu", non_blocking=True)`` only queues the copy; ``.numpy()``, ``.item()``, ``float()``, ``print`` or a
NumPy function that reads the host tensor before ``torch.cuda.synchronize()`` (or a stream or event sync) may see
memory the copy has not written yet. Docs: ``docs/rules/NPT007.md``.

The fix (safe: it only makes the copy wait) drops ``non_blocking=True``; in the helpers style,
``x.to("cpu", non_blocking=True).numpy()`` becomes ``to_numpy(x)``, a conversion that waits for the copy.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ..analysis import Facts, HostReadBeforeSync
from ..diagnostics import Applicability, Finding, Fix
from ..fixes import Edit, FixStyle, call, unparenthesized, without_keyword

CODE = "NPT007"


def check(facts: Facts, style: FixStyle = FixStyle.HELPERS) -> Iterator[Finding]:
    for read in facts.host_reads_before_sync:
        reader = _describe(read.via)
        message = (f"{reader} reads a tensor whose non_blocking=True copy to the host may not have finished: "
                   "synchronize first (torch.cuda.synchronize()) or drop non_blocking=True")
        yield Finding(CODE, read.node, message, _fix(read, style), read.through)


def _describe(via: str) -> str:
    if "." not in via:
        return f".{via}()"
    module, name = via.rsplit(".", 1)
    return {"builtins": f"{name}()", "numpy": f"np.{name}()"}.get(module, f"{name}()")


def _fix(read: HostReadBeforeSync, style: FixStyle) -> Fix:
    if style is FixStyle.HELPERS and _converts_the_copy_at_once(read):
        return Fix(Applicability.SAFE, "Convert with to_numpy(), which waits for the copy", _to_numpy)
    return Fix(Applicability.SAFE, "Make the copy blocking (drop non_blocking=True)", _blocking, read.copy)


def _converts_the_copy_at_once(read: HostReadBeforeSync) -> bool:
    """``x.to(<the CPU>, non_blocking=True).numpy()``: the copy and its read in one expression."""
    node, copy = read.node, read.copy
    return (read.via == "numpy" and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.value is copy and isinstance(copy.func, cst.Attribute) and copy.func.attr.value == "to"
            and len(copy.args) == 2 and copy.args[0].keyword is None and not copy.args[0].star)


def _blocking(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    return without_keyword(node, "non_blocking") if isinstance(node, cst.Call) else node


def _to_numpy(node: cst.CSTNode, edit: Edit) -> cst.CSTNode:
    """``x.to("cpu", non_blocking=True).numpy()`` -> ``to_numpy(x)``."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return node
    copy = node.func.value
    if not isinstance(copy, cst.Call) or not isinstance(copy.func, cst.Attribute):
        return node
    return call(edit.helper("to_numpy"), cst.Arg(unparenthesized(copy.func.value))).with_changes(
        lpar=node.lpar, rpar=node.rpar)
