"""``audit()`` as a context manager: what it installs, what it puts back, nesting, other modes, imports."""

from __future__ import annotations

import runpy
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch.overrides import _get_current_function_mode_stack

from np2torch_lint.audit import audit
from np2torch_lint.audit.rules import npt004_float64_default_into_torch as npt004

ORIGINALS = {"tensor": torch.tensor, "as_tensor": torch.as_tensor, "asarray": torch.asarray,
             "from_numpy": torch.from_numpy}


def torch_as_it_was() -> bool:
    return (all(getattr(torch, name) is original for name, original in ORIGINALS.items())
            and not {"__new__", "to", "cuda", "numpy", "copy_"} & set(vars(torch.Tensor))
            and _get_current_function_mode_stack() == [])


def test_nothing_is_installed_until_an_audit_starts_and_everything_goes_back_after():
    import np2torch_lint.runtime  # noqa: F401  (the thin export installs nothing)

    assert torch_as_it_was()
    with audit():
        assert torch.tensor is not ORIGINALS["tensor"] and "to" in vars(torch.Tensor)
        torch.from_numpy(np.zeros(2))  # noqa: NPT004 - float64 on purpose: it enters NPT004's mode
        assert len(_get_current_function_mode_stack()) == 1
    assert torch_as_it_was()


def test_an_error_in_the_block_propagates_and_the_hooks_still_go(write):
    program = write("fails.py", "import torch\nraise KeyError('from the program')\n")
    with pytest.raises(KeyError, match="from the program"), audit():
        runpy.run_path(str(program))
    assert torch_as_it_was()


def test_nested_audits_each_see_what_ran_while_they_did(write):
    program = write("copies.py", "import numpy as np, torch\ntorch.tensor(np.zeros(4, dtype=np.float32))\n")
    with audit() as outer:
        runpy.run_path(str(program))
        with audit() as inner:
            runpy.run_path(str(program))
        assert "to" in vars(torch.Tensor)  # the outer audit still runs
    assert [f.count for f in inner.findings] == [1] and [f.count for f in outer.findings] == [2]
    assert torch_as_it_was()


def test_the_audits_mode_stays_under_modes_the_program_enters(write):
    program = write("modes.py", "import numpy as np, torch\n"
                                "x = torch.from_numpy(np.zeros(3))\n"
                                "with torch.device('meta'):\n"
                                "    made = torch.ones(2)\n"
                                "y = x * torch.ones(3)\n")  # float32: promoted to float64
    with audit() as report:
        runpy.run_path(str(program))
        (mode,) = _get_current_function_mode_stack()
        assert isinstance(mode, npt004.MeetingWatch)
    assert [(f.code, f.line, f.properties["met"][0]["line"]) for f in report.findings] == [("NPT004", 2, 5)]


def test_a_mode_entered_before_the_audit_stays_on_top_of_it():
    with torch.device("meta"):
        outer = _get_current_function_mode_stack()
        with audit():
            torch.from_numpy(np.zeros(2))  # noqa: NPT004 - float64 on purpose
            stack = _get_current_function_mode_stack()
            assert isinstance(stack[0], npt004.MeetingWatch) and stack[1:] == outer
            assert torch.ones(1).device.type == "meta"  # the program's mode still decides
        assert _get_current_function_mode_stack() == outer


def test_a_default_dtype_of_float64_is_a_decision(write):
    # the program changes the default and puts it back itself (a call written here would make the linter, which
    # reads this repository as one project, take every file for a float64 program)
    program = write("scientific.py", "import numpy as np, torch\n"
                                     "torch.set_default_dtype(torch.float64)\n"
                                     "try:\n"
                                     "    x = torch.from_numpy(np.zeros(3)) * torch.ones(3, dtype=torch.float32)\n"
                                     "finally:\n"
                                     "    torch.set_default_dtype(torch.float32)\n")
    with audit() as report:
        runpy.run_path(str(program))
    assert report.findings == [] and torch.get_default_dtype() is torch.float32


@pytest.mark.parametrize("module", ["np2torch_lint.audit", "np2torch_lint.audit.pytest_plugin"])
def test_importing_the_audit_package_or_its_plugin_imports_neither_torch_nor_numpy(module):
    code = (f"import sys, {module}\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy', 'libcst')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
