"""NPT005: one ``.to(device)``/``.cuda()`` per item inside a loop or comprehension whose results are collected.

Each transfer is a separate host-to-device copy with its own launch and synchronisation cost; stacking on the
host and moving the batch once is one copy. Docs: ``docs/rules/NPT005.md``.
"""

from __future__ import annotations

from typing import Iterator

from ..diagnostics import Finding
from ..inference import Facts

CODE = "NPT005"
NAME = "per-item-device-transfer"
SUMMARY = "per-item .to(device)/.cuda() in a loop where one stacked transfer would do"


def check(facts: Facts) -> Iterator[Finding]:
    seen = set()
    for transfer in facts.collected_transfers:
        if transfer.node in seen:
            continue
        seen.add(transfer.node)
        yield Finding(CODE, transfer.node, "one device transfer per item in a loop: stack the items on the host "
                                           "and move the batch once")
