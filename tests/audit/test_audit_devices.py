"""NPT002 and NPT007, which need a device: their logic on the CPU (a fake event stands in for the copy's CUDA
event), and the real thing under ``cuda``."""

from __future__ import annotations

import runpy

import numpy as np
import pytest
import torch

from np2torch_lint.audit import audit, hooks
from np2torch_lint.audit.rules import npt002_numpy_on_accelerator_tensor as npt002
from np2torch_lint.audit.rules import npt007_non_blocking_copy_read_before_sync as npt007
from np2torch_lint.audit.sites import Site


class FakeEvent:
    """A copy's event: ``done`` says whether the copy has completed."""

    def __init__(self, done: bool) -> None:
        self.done = done

    def query(self) -> bool:
        return self.done


def pending_reads(write, event: FakeEvent, reads: str) -> tuple[object, list]:
    """Run ``reads`` (lines reading ``host``) after a non-blocking copy into ``host`` whose event is ``event``."""
    program = write("reads.py", "import numpy as np\n" + reads)
    host = torch.arange(4.0)
    with audit() as report:
        hooks.installed().expect_reads(host, event, Site("train.py", 7))  # what the hooks do at the copy
        runpy.run_path(str(program), init_globals={"host": host})
    return report, report.findings


def test_npt007_uses_before_the_copy_completed_are_reported_at_each_use(write):
    report, findings = pending_reads(write, FakeEvent(done=False), "values = host.numpy()\n"
                                                                   "first = host[0].item()\n"
                                                                   "print(host)\n"
                                                                   "joined = np.concatenate([host])\n"
                                                                   "for _ in range(2):\n"
                                                                   "    total = float(host.sum())\n")
    assert [(f.code, f.line, f.count) for f in findings] == [("NPT007", 2, 1), ("NPT007", 3, 1), ("NPT007", 4, 1),
                                                             ("NPT007", 5, 1), ("NPT007", 7, 2)]
    assert findings[1].message.startswith(".item() used a host tensor before its non_blocking=True copy (at "
                                          "train.py:7) completed (once): synchronize first")
    # print's own .tolist() is not a second use; NumPy's conversion is one; h.sum() reads the data as .item() does
    assert [f.message.split(" used ")[0] for f in findings] == [".numpy()", ".item()", "repr()/print()",
                                                                "a NumPy function", ".sum()"]


def test_npt007_uses_after_the_copy_completed_are_not_reported(write):
    _, findings = pending_reads(write, FakeEvent(done=True), "values = host.numpy()\nprint(host)\n")
    assert findings == []


def test_npt007_views_and_metadata_are_not_uses(write):
    _, findings = pending_reads(write, FakeEvent(done=False), "shape = host.shape\nhalf = host[:2]\n"
                                                              "flat = host.view(2, 2)\nsize = host.numel()\n")
    assert findings == []


def test_npt007_watches_torch_calls_only_from_the_first_non_blocking_copy():
    with audit():
        assert torch.overrides._get_current_function_mode_stack() == []
        hooks.installed().expect_reads(torch.ones(1), FakeEvent(done=True), Site("train.py", 1))
        (mode,) = torch.overrides._get_current_function_mode_stack()
        assert isinstance(mode, npt007.PendingWatch)
    assert torch.overrides._get_current_function_mode_stack() == []


@pytest.mark.parametrize(("source", "result", "is_copy"), [
    (torch.device("cpu"), torch.device("cpu"), False), (torch.device("meta"), torch.device("cpu"), False)])
def test_npt007_watches_copies_from_a_device_only(source, result, is_copy):
    assert npt007.device_to_host(torch.empty(1, device=source), torch.empty(1, device=result)) is is_copy


@pytest.mark.parametrize(("device", "error", "is_npt002"), [
    ("cuda", TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                       "host memory first."), True),
    ("xpu", TypeError("can't convert xpu:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                      "memory first."), True),
    ("meta", TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                       "memory first."), False),  # .cpu() cannot help a meta tensor
    ("cuda", TypeError("Got unsupported ScalarType BFloat16"), False),
])
def test_npt002_is_torch_refusing_a_device_tensor(device, error, is_npt002):
    assert npt002.raised_by(device, error) is is_npt002


def test_a_meta_tensors_numpy_error_passes_through_untouched():
    with pytest.raises(TypeError, match="meta device type") as raised, audit() as report:
        torch.empty(2, device="meta").numpy()
    assert not hasattr(raised.value, "__notes__") and report.findings == []


SPIN_CYCLES = 1_000_000_000  # about a second of GPU spinning: the copy queued behind it is still pending


@pytest.mark.cuda
def test_npt007_on_cuda_a_read_before_the_copy_completed(write):
    program = write("race.py", "import torch\n"
                               "x = torch.ones(1 << 20, device='cuda')\n"
                               "torch.cuda._sleep(SPIN)\n"
                               "host = x.to('cpu', non_blocking=True)\n"
                               "values = host.numpy()\n")
    with audit() as report:
        runpy.run_path(str(program), init_globals={"SPIN": SPIN_CYCLES})
    (finding,) = report.findings
    assert (finding.code, finding.line, finding.properties["copied_at"][0]["line"]) == ("NPT007", 5, 4)


@pytest.mark.cuda
def test_npt007_on_cuda_a_synchronized_read_is_not_reported(write):
    program = write("synced.py", "import torch\n"
                                 "x = torch.ones(1 << 20, device='cuda')\n"
                                 "torch.cuda._sleep(SPIN)\n"
                                 "host = x.to('cpu', non_blocking=True)\n"
                                 "torch.cuda.synchronize()\n"
                                 "values = host.numpy()\n")
    with audit() as report:
        runpy.run_path(str(program), init_globals={"SPIN": SPIN_CYCLES})
    assert report.findings == []


@pytest.mark.cuda
def test_npt002_on_cuda_the_error_carries_the_rule(write):
    program = write("device.py", "import torch\n"
                                 "def show(convert, value):\n"
                                 "    return convert(value)\n"
                                 "show(lambda t: t.numpy(), torch.ones(2, device='cuda'))\n")
    with pytest.raises(TypeError, match="cuda:0 device type") as raised, audit() as report:
        runpy.run_path(str(program))
    assert [(f.code, f.line) for f in report.findings] == [("NPT002", 4)]
    assert raised.value.__notes__[0].startswith("np2torch-audit: NPT002 at ")


@pytest.mark.cuda
def test_npt005_on_cuda_per_item_copies(write):
    program = write("items.py", "import numpy as np, torch\n"
                                "items = [np.zeros(16, dtype=np.float32) for _ in range(8)]\n"
                                "moved = [torch.from_numpy(a).cuda() for a in items]\n")
    with audit() as report:
        runpy.run_path(str(program))
    assert [(f.code, f.line, f.count) for f in report.findings] == [("NPT005", 3, 8)]


def test_a_host_tensor_is_found_through_its_views():
    pending = npt007.PendingHostCopies()
    host = torch.arange(8.0)
    pending.copied(host, FakeEvent(done=False), Site("train.py", 3))
    assert pending.still_copying(host[2:4]) == Site("train.py", 3)
    assert pending.still_copying(torch.arange(8.0)) is None
    assert np.shares_memory(host.numpy(), host[2:4].numpy())
