"""The flake8 plugin costs nothing unless an NPT code is selected: it then neither parses nor imports LibCST."""

from __future__ import annotations

import subprocess
import sys

import pytest

from np2torch_lint.flake8_plugin import CODES
from np2torch_lint.rules import RULES_BY_CODE

BAD = "import os\nimport torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"

# flake8 run in a fresh interpreter, which then says which heavy modules the run imported
RUN_FLAKE8 = """
import sys
from flake8.main.application import Application
application = Application()
application.run(sys.argv[1:])
print("imported:", ",".join(name for name in ("libcst", "np2torch_lint.engine") if name in sys.modules))
"""


def flake8_in_process(path, *options: str) -> tuple[list[str], str]:
    result = subprocess.run([sys.executable, "-c", RUN_FLAKE8, *options, str(path)], capture_output=True, text=True)
    *found, imported = result.stdout.splitlines()
    return sorted(line.split()[1] for line in found), imported


def test_the_plugin_knows_every_rule_code():
    assert CODES == tuple(RULES_BY_CODE)


def test_nothing_heavy_is_imported_when_no_npt_code_is_selected(write):
    found, imported = flake8_in_process(write("bad.py", BAD), "--select", "E,F,W")
    assert found == ["F401"] and imported == "imported: "


@pytest.mark.parametrize(("options", "expected"), [
    ((), ["F401", "NPT001"]),  # flake8's default selection includes installed plugins
    (("--select", "NPT"), ["NPT001"]),
    (("--extend-select", "NPT001"), ["F401", "NPT001"]),
    (("--select", "F,NPT0"), ["F401", "NPT001"]),
    (("--select", "NPT", "--ignore", "NPT001"), []),  # NPT002-NPT005 are still selected
])
def test_the_plugin_runs_whenever_some_npt_code_is_selected(write, options, expected):
    found, imported = flake8_in_process(write("bad.py", BAD), *options)
    assert found == expected and imported == "imported: libcst,np2torch_lint.engine"


def test_ignoring_every_npt_code_is_the_same_as_not_selecting_it(write):
    assert flake8_in_process(write("bad.py", BAD), "--ignore", "NPT") == (["F401"], "imported: ")


@pytest.mark.parametrize(("toml", "message"), [
    ("[tool.np2torch-lint]\nselect = [\n",
     "pyproject.toml: cannot read it as TOML: Invalid value (at end of document)"),
    ('[tool.np2torch-lint]\nselect = ["NPT001"]\nselect = ["NPT002"]\n',
     "pyproject.toml: cannot read it as TOML: Cannot overwrite a value (at line 3, column 20)"),
    ('[tool.np2torch-lint]\nselect = ["\0"]\n',
     "pyproject.toml: cannot read it as TOML: Illegal character '\\x00' (at line 2, column 12)"),
    ("[tool.np2torch-lint]\nselect = " + "[" * 5000 + "]" * 5000 + "\n",
     "pyproject.toml: cannot read it as TOML: arrays or tables nested too deeply (no setting nests more than 3 "
     "levels)"),
    ("[tool.np2torch-lint]\nselect = []\n",
     "pyproject.toml: [tool.np2torch-lint] select: no rule codes given (like NPT001, or a prefix like NPT)"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_configuration_np2torch_lint_refuses_stops_flake8_with_its_message_and_no_traceback(
        tmp_path, write, toml, message, jobs):
    write("pyproject.toml", toml)
    write("bad.py", BAD)
    result = subprocess.run([sys.executable, "-m", "flake8", "-j", jobs, "bad.py"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines() == ["There was a critical error during execution of Flake8:",
                                          f"np2torch-lint: {message}"]


def test_a_bad_configuration_does_not_stop_flake8_when_no_npt_code_is_selected(tmp_path, write):
    write("pyproject.toml", "[tool.np2torch-lint]\nselect = [\n")
    write("bad.py", BAD)
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "F", "bad.py"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout.split()[1] == "F401"
