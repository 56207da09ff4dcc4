"""The rules. Each module is one rule: its code and ``check(facts)``; this table says what every front end needs to
know of them without importing them (they import LibCST and the analysis): code, name, summary, default.

A rule reads the facts the single analysis pass recorded (``inference.Facts``) and yields findings; it never
walks the tree itself, so adding a rule adds no traversal. A rule's module is named after its code and name
(``npt003_torch_tensor_copies_ndarray.py``); ``ALL_RULES``, the modules, is imported when first asked for.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str  # named after the bad pattern, as ruff names rules
    summary: str  # one line
    #: in the default selection; an opt-in rule is reported only where its code is named (``--extend-select NPT009``,
    #: ``select = [..., "NPT009"]``): a prefix such as ``NPT`` selects the default rules only, as ruff's prefixes
    #: leave its preview rules out
    default: bool = True

    @property
    def module_name(self) -> str:
        return f"{__name__}.{self.code.lower()}_{self.name.replace('-', '_')}"

    def module(self) -> ModuleType:
        return importlib.import_module(self.module_name)


RULES: tuple[Rule, ...] = (
    Rule("NPT001", "numpy-on-grad-tensor", "tensor that may require grad converted to NumPy without .detach()"),
    Rule("NPT002", "numpy-on-accelerator-tensor",
         "tensor that may be on an accelerator converted to NumPy without .cpu()"),
    # off by default: on 48 real projects, of 24 such copies (NPT010's aside) one was worth changing; the others copied
    # a few rewards per step, a 3x3 transform, buffers built once (docs/rules/NPT003.md)
    Rule("NPT003", "torch-tensor-copies-ndarray",
         "torch.tensor(ndarray) makes a full copy where from_numpy/as_tensor share memory", default=False),
    Rule("NPT004", "float64-default-into-torch",
         "NumPy's default float64 becomes a float64 tensor with no dtype decision"),
    Rule("NPT005", "per-item-device-transfer",
         "per-item .to(device)/.cuda() in a loop where one stacked transfer would do"),
    Rule("NPT006", "tensor-from-list-of-arrays",
         "a tensor made from a list of ndarrays, converted element by element instead of stacked"),
    Rule("NPT007", "non-blocking-copy-read-before-sync",
         "host tensor from a non_blocking=True device-to-host copy read before a synchronisation"),
    Rule("NPT008", "negative-stride-array-into-torch",
         "ndarray with a negative stride (or a read-only one) converted to a tensor"),
    # off by default: of 40 findings drawn at random from 48 real projects, 20 were these casts and none was worth
    # changing: a small array (noise, a done flag, a one-hot label) cast on purpose (docs/rules/NPT009.md)
    Rule("NPT009", "legacy-constructor-casts-ndarray",
         "a legacy constructor (torch.FloatTensor(a), ...) silently casts an array of another dtype",
         default=False),
    Rule("NPT010", "torch-tensor-copies-then-casts",
         "torch.tensor() copies NumPy's float64 array, then a dtype chosen later copies it again"),
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
DEFAULT_CODES: tuple[str, ...] = tuple(rule.code for rule in RULES if rule.default)


@functools.cache
def rule_modules() -> tuple[ModuleType, ...]:
    """Every rule's module, in code order (importing them imports LibCST and the analysis)."""
    return tuple(rule.module() for rule in RULES)


def __getattr__(name: str) -> object:
    if name == "ALL_RULES":  # ``from .rules import ALL_RULES`` in the engine, which needs the modules anyway
        return rule_modules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
