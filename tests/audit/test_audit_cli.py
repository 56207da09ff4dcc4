"""``python -m np2torch_lint.audit script.py ARGS...``: running the script as Python would, the report, the exit
status, the formats and --compare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from np2torch_lint.audit.cli import main

REPO = Path(__file__).resolve().parents[2]
COPIES = ("import sys\n"
          "import numpy as np, torch\n"
          "def convert(make):\n"
          "    return torch.tensor(make())\n"
          "for _ in range(int(sys.argv[1])):\n"
          "    convert(lambda: np.zeros(4, dtype=np.float32))\n"
          "print('ran with', sys.argv[1:])\n")


def audited(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_the_script_runs_with_its_arguments_and_the_report_goes_to_standard_error(write, capsys):
    script = write("copies.py", COPIES)
    status, out, err = audited(capsys, str(script), "3", "--flag")
    assert status == 1  # findings
    assert out == "ran with ['3', '--flag']\n"  # the script's output is its own
    assert err == (f"{script}:4:12: NPT003 torch.tensor() copied a NumPy array here (3 times, 48 B in all, 16 B "
                   "each): torch.from_numpy() or torch.as_tensor() shares its memory\n")


def test_a_clean_run_exits_0_and_exit_zero_keeps_findings_at_0(write, capsys):
    clean = write("clean.py", "import torch\ntorch.ones(2) + 1\n")
    assert audited(capsys, str(clean)) == (0, "", "")
    script = write("copies.py", COPIES)
    assert audited(capsys, "--exit-zero", str(script), "1")[0] == 0


def test_the_scripts_own_failure_keeps_its_status_and_its_traceback(write, capsys):
    exits = write("exits.py", "import sys\nsys.exit(3)\n")
    assert audited(capsys, str(exits))[0] == 3
    fails = write("fails.py", "def broken():\n    raise ValueError('bad input')\nbroken()\n")
    status, _, err = audited(capsys, str(fails))
    assert status == 1
    assert err.startswith("Traceback (most recent call last):\n  File \"" + str(fails) + "\", line 3, in <module>")
    assert err.rstrip().endswith("ValueError: bad input") and "cli.py" not in err and "runpy" not in err


def test_a_module_runs_with_dash_m(write, capsys, monkeypatch):
    write("copying_module.py", COPIES)
    monkeypatch.chdir(write("copying_module.py", COPIES).parent)
    status, out, err = audited(capsys, "-m", "copying_module", "2")
    assert status == 1 and out == "ran with ['2']\n" and "NPT003" in err and "(2 times," in err


@pytest.mark.parametrize(("argv", "message"), [
    ([], "np2torch-audit: error: give a script to run (or -m module)"),
    (["missing.py"], "np2torch-audit: error: can't open file 'missing.py': no such file"),
])
def test_usage_errors_exit_2_with_one_line(capsys, argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = audited(capsys, *argv)
    assert status == 2 and err.splitlines()[-1] == message


def test_json_carries_the_counts(write, capsys, tmp_path):
    script = write("copies.py", COPIES)
    report = tmp_path / "report.json"
    assert audited(capsys, "--output-format", "json", "-o", str(report), str(script), "2")[0] == 1
    (finding,) = json.loads(report.read_text(encoding="utf-8"))
    assert (finding["code"], finding["line"], finding["column"], finding["end_column"]) == ("NPT003", 4, 12, 32)
    assert finding["properties"] == {"count": 2, "bytes": 32, "seconds": 0.0, "calls": {"torch.tensor": 2}}


def test_sarif_is_valid_and_names_the_audit(write, capsys, tmp_path):
    script = write("copies.py", COPIES)
    report = tmp_path / "report.sarif"
    audited(capsys, "--output-format", "sarif", "-o", str(report), str(script), "1")
    sarif = json.loads(report.read_text(encoding="utf-8"))
    schema = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(sarif, schema)
    (run,) = sarif["runs"]
    assert run["tool"]["driver"]["name"] == "np2torch-audit"
    (result,) = run["results"]
    assert result["ruleId"] == "NPT003" and result["properties"]["count"] == 1


def test_compare_marks_each_finding(write, capsys):
    script = write("both.py", "import numpy as np, torch\n"
                              "def convert(array):\n"
                              "    return torch.tensor(array)\n"
                              "convert(np.__dict__['zeros'](3, dtype=np.float32))\n"  # an array only the run knows
                              "seen = torch.tensor(np.zeros(3, dtype=np.float32))\n")
    status, _, err = audited(capsys, "--compare", str(script))
    assert status == 1
    assert [line.rsplit(" [", 1)[1] for line in err.splitlines()] == ["not found statically]",
                                                                      "also found by np2torch-lint]"]
    status, _, err = audited(capsys, "--compare", "--output-format", "json", str(script))
    assert [item["properties"]["static"] for item in json.loads(err)] == [False, True]


def test_compare_counts_the_linters_own_codes_for_a_copy_that_casts_as_found(write, capsys):
    # the audit's NPT003 (a copy sharing would avoid) is the linter's NPT009 for a legacy constructor's cast and
    # NPT010 for a float64 copy cast again
    script = write("casts.py", "import numpy as np, torch\n"
                               "cast = torch.Tensor(np.zeros(3))\n"
                               "copied = torch.tensor(np.zeros(3)).float()\n")
    status, _, err = audited(capsys, "--compare", "--output-format", "json", str(script))
    assert status == 1
    assert [(item["code"], item["line"], item["properties"]["static"]) for item in json.loads(err)] == [
        ("NPT003", 2, True), ("NPT003", 3, True)]


def test_compare_counts_a_finding_silenced_by_noqa_as_found(write, capsys):
    script = write("silenced.py", "import numpy as np, torch\n"
                                  "seen = torch.tensor(np.zeros(3, dtype=np.float32))  # noqa: NPT003\n")
    _, _, err = audited(capsys, "--compare", str(script))
    assert err.rstrip().endswith("[also found by np2torch-lint]")


def test_python_dash_m_runs_the_audit(write):
    script = write("copies.py", COPIES)
    result = subprocess.run([sys.executable, "-m", "np2torch_lint.audit", str(script), "1"], capture_output=True,
                            text=True)
    assert (result.returncode, result.stdout) == (1, "ran with ['1']\n")
    assert result.stderr.startswith(f"{script}:4:12: NPT003 ")


def test_the_console_script_and_the_pytest_plugin_are_entry_points():
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="np2torch-audit")
    (plugin,) = entry_points(group="pytest11", name="np2torch-audit")
    assert (script.value, plugin.value) == ("np2torch_lint.audit.cli:main", "np2torch_lint.audit.pytest_plugin")
