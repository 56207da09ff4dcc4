"""DataLoader workers forked while an audit runs report what they saw to it."""

from __future__ import annotations

import runpy
import time

from np2torch_lint.audit import audit
from programs import PROGRAMS, expected

ITEMS = PROGRAMS / "npt003_dataset_items.py"


def with_workers(write, keep_iterating: bool = False):
    """npt003_dataset_items.py with two forked workers (the same lines); or, with ``keep_iterating``, taking one
    batch and keeping the loader's iterator (and its workers) alive."""
    text = ITEMS.read_text(encoding="utf-8").replace(
        "batch_size=4)", "batch_size=4, num_workers=2, multiprocessing_context='fork')")
    if keep_iterating:
        text = text.replace("for batch in DataLoader(", "iterator = iter(DataLoader(").replace(
            "fork'):\n    assert batch.shape == (4, 32)\n", "fork'))\nbatch = next(iterator)\n")
    return write("workers.py", text)


def test_findings_in_forked_data_loader_workers_come_back(write):
    with audit() as report:
        runpy.run_path(str(with_workers(write)), run_name="__main__")
    ((code, line), counts), = expected(ITEMS).items()
    assert [(f.code, f.line, f.count, f.nbytes) for f in report.findings] == [
        (code, line, counts["count"], counts["bytes"])]


def test_a_worker_that_outlives_the_audit_has_told_what_it_saw_so_far(write):
    program = with_workers(write, keep_iterating=True)
    assert "iterator = iter(" in program.read_text(encoding="utf-8")
    with audit() as report:
        scope = runpy.run_path(str(program), run_name="__main__")
        time.sleep(0.5)  # more than a spool write's interval
    (finding,) = report.findings
    assert finding.count >= 4  # at least the first batch; prefetching workers may have made more
    del scope
