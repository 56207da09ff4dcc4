"""Configuration that cannot crash: every mistake is one line naming the key, exit 2; and how the command line's
--select/--ignore/--extend-* combine with the file's (ruff's layers)."""

from __future__ import annotations

import pytest

from np2torch_lint.analysis.models import KINDS

from np2torch_lint.cli import main

from helpers import run_main

GRAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"
ALL_FIVE = (GRAD + "w.numpy()\n"  # NPT001
            "import numpy as np\ntorch.tensor(np.zeros(3, dtype=np.float32))\n"  # NPT003
            "torch.from_numpy(np.zeros(3))\n"  # NPT004
            "d = torch.device('cuda')\nx = torch.ones(3, device=d)\nx.numpy()\n"  # NPT002
            "out = []\nfor a in arrays:\n    out.append(torch.from_numpy(np.asarray(a, dtype=np.float32)).cuda())\n")
TABLE = "pyproject.toml: [tool.np2torch-lint]"


@pytest.fixture
def project(tmp_path, monkeypatch, write):
    """A folder with a file that has one finding of every rule; returns a function writing its pyproject.toml."""
    monkeypatch.chdir(tmp_path)
    write("src/all.py", ALL_FIVE)

    def configure(toml: str) -> None:
        write("pyproject.toml", toml)

    return configure


def codes_reported(capsys, *argv: str) -> list[str]:
    code, out, err = run_main(main, capsys, *argv, "src")
    assert err == "" and code in (0, 1)
    return sorted({line.split()[1] for line in out.splitlines()})


def test_every_rule_fires_on_the_sample(project, capsys):
    assert codes_reported(capsys) == ["NPT001", "NPT002", "NPT004", "NPT005"]  # NPT003 is opt-in
    assert codes_reported(capsys, "--extend-select", "NPT003") == ["NPT001", "NPT002", "NPT003", "NPT004", "NPT005"]


@pytest.mark.parametrize(("toml", "message"), [
    ("[tool.np2torch-lint]\nignore = 5\n", f"{TABLE} ignore: expected a list of rule codes, got an integer (5)"),
    ('[tool.np2torch-lint]\nselect = "NPT002"\n',
     f'{TABLE} select: expected a list of rule codes, got a string ("NPT002"); write ["NPT002"]'),
    ("[tool.np2torch-lint]\nselect = {a = 1}\n", f"{TABLE} select: expected a list of rule codes, got a table"),
    ("[tool.np2torch-lint]\nselect = [1]\n",
     f"{TABLE} select: expected rule codes (like NPT001, or a prefix like NPT), got an integer (1)"),
    ('[tool.np2torch-lint]\nselect = ["NPT999"]\n',
     f'{TABLE} select: no rule matches "NPT999"; known rules: ' + ', '.join(f'NPT{n:03}' for n in range(1, 11))),
    ('[tool.np2torch-lint]\nignore = ["npt-1"]\n',
     f'{TABLE} ignore: "npt-1" is not a rule code (like NPT001, or a prefix like NPT)'),
    ('[tool.np2torch-lint]\nper-file-ignores = { "a.py" = 1 }\n',
     f'{TABLE} per-file-ignores "a.py": expected a list of rule codes, got an integer (1)'),
    ('[tool.np2torch-lint.per-file-ignores]\n"tests/*" = "NPT001"\n',
     f'{TABLE} per-file-ignores "tests/*": expected a list of rule codes, got a string ("NPT001"); '
     'write ["NPT001"]'),
    ('[tool.np2torch-lint]\nper-file-ignores = ["a.py"]\n',
     f'{TABLE} per-file-ignores: expected a table of "glob" = [rule codes], got a list'),
    ("[tool]\nnp2torch-lint = 1\n", f"{TABLE}: expected a table, got an integer (1)"),
    ('[tool.np2torch-lint]\nexclude = "build"\n',
     f'{TABLE} exclude: expected a list of glob patterns (strings), got a string ("build"); write ["build"]'),
    ("[tool.np2torch-lint]\nexclude = [1]\n",
     f"{TABLE} exclude: expected a list of glob patterns (strings), got an integer (1)"),
    ('[tool.np2torch-lint]\nfix-style = "fancy"\n',
     f'{TABLE} fix-style: expected "helpers" or "inline", got a string ("fancy")'),
    ("[tool.np2torch-lint]\nfix-style = true\n",
     f'{TABLE} fix-style: expected "helpers" or "inline", got a boolean (true)'),
    ('[tool.np2torch-lint]\nrespect-gitignore = "no"\n',
     f'{TABLE} respect-gitignore: expected true or false, got a string ("no")'),
    ("[tool.np2torch-lint]\nforce-exclude = 1\n", f"{TABLE} force-exclude: expected true or false, got an integer (1)"),
    ("[tool.np2torch-lint]\nselekt = []\n",
     f"{TABLE} selekt: unknown setting; known settings: cache-dir, exclude, extend-include, fix-style, "
     "force-exclude, ignore, include, models, per-file-ignores, respect-gitignore, select, src"),
    ("[tool.np2torch-lint]\nsrc = \"src\"\n",
     f'{TABLE} src: expected a list of folders (strings), got a string ("src"); write ["src"]'),
    ("[tool.np2torch-lint]\nmodels = 1\n",
     f'{TABLE} models: expected a table of "qualified.name" = "spec", got an integer (1)'),
    ('[tool.np2torch-lint.models]\n"mylib.load" = "array[uint8]"\n',
     f'{TABLE} models "mylib.load": \'array[uint8]\': unknown kind \'array\'; known kinds: '
     + ", ".join(sorted(KINDS))),
    ('[tool.np2torch-lint.models]\n"mylib.load" = 3\n',
     f'{TABLE} models "mylib.load": expected a spec like "ndarray[uint8]", got an integer (3)'),
    ("[tool.np2torch-lint]\ncache-dir = 3\n",
     f"{TABLE} cache-dir: expected a folder name (a non-empty string), got an integer (3)"),
    ('[tool.np2torch-lint]\ninclude = "*.py"\n',
     f'{TABLE} include: expected a list of glob patterns (strings), got a string ("*.py"); write ["*.py"]'),
    ("[tool.np2torch-lint]\nextend-include = [true]\n",
     f"{TABLE} extend-include: expected a list of glob patterns (strings), got a boolean (true)"),
])
def test_each_config_mistake_is_one_line_and_exit_two(project, capsys, toml, message):
    project(toml)
    code, out, err = run_main(main, capsys, "src")
    assert (code, out, err.splitlines()) == (2, "", [message])


def test_every_mistake_is_listed_not_only_the_first(project, capsys):
    project('[tool.np2torch-lint]\nselect = "NPT001"\nignore = 5\nexclude = [1]\n')
    code, _, err = run_main(main, capsys, "src")
    assert code == 2 and [line.split("]", 1)[1].split(":")[0] for line in err.splitlines()] == [
        " select", " ignore", " exclude"]


def test_a_toml_syntax_error_names_the_file(project, capsys):
    project("[tool.np2torch-lint]\nselect = [\n")
    code, out, err = run_main(main, capsys, "src")
    assert code == 2 and out == "" and err.startswith("pyproject.toml: cannot read it as TOML: ")
    assert len(err.splitlines()) == 1


def test_the_message_names_the_file_as_found(tmp_path, capsys, write, monkeypatch):
    write("project/pyproject.toml", "[tool.np2torch-lint]\nignore = 5\n")
    write("project/a.py", "import torch\n")
    monkeypatch.chdir(tmp_path)
    _, _, err = run_main(main, capsys, "project")
    assert err.startswith("project/pyproject.toml: [tool.np2torch-lint] ignore: ")


@pytest.mark.parametrize(("argv", "expected"), [
    (["--select", ""], "--select: no rule codes given (like NPT001, or a prefix like NPT)"),
    (["--select", " , "], "--select: no rule codes given (like NPT001, or a prefix like NPT)"),
    (["--select", "NPT999"], '--select: no rule matches "NPT999"'),
    (["--extend-select", "E501"], '--extend-select: no rule matches "E501"'),
    (["--ignore", "npt-1"], '--ignore: "npt-1" is not a rule code'),
    (["--extend-ignore", "XYZ"], '--extend-ignore: no rule matches "XYZ"'),
])
def test_bad_codes_on_the_command_line_are_a_usage_error(project, capsys, argv, expected):
    code, out, err = run_main(main, capsys, *argv, "src")
    assert code == 2 and out == ""
    assert err.splitlines()[0].startswith("usage: ")
    assert err.splitlines()[-1].startswith(f"np2torch-lint: error: {expected}")


def test_select_on_the_command_line_replaces_the_files_select_and_ignore(project, capsys):
    project('[tool.np2torch-lint]\nselect = ["NPT001", "NPT003"]\nignore = ["NPT003"]\n')
    assert codes_reported(capsys) == ["NPT001"]
    assert codes_reported(capsys, "--select", "NPT003,NPT004") == ["NPT003", "NPT004"]


def test_extend_select_and_ignore_add_to_the_files_selection(project, capsys):
    project('[tool.np2torch-lint]\nselect = ["NPT001", "NPT003"]\n')
    assert codes_reported(capsys, "--extend-select", "NPT005") == ["NPT001", "NPT003", "NPT005"]
    assert codes_reported(capsys, "--extend-ignore", "NPT003") == ["NPT001"]
    assert codes_reported(capsys, "--ignore", "NPT001") == ["NPT003"]
    # within the command line's layer the longer prefix wins: NPT002 over NPT00
    assert codes_reported(capsys, "--extend-select", "NPT002", "--ignore", "NPT00") == ["NPT002"]


def test_within_one_layer_the_longer_prefix_wins_and_ignore_wins_a_tie(project, capsys):
    assert codes_reported(capsys, "--select", "NPT", "--ignore", "NPT00", "--extend-select", "NPT004") == ["NPT004"]
    assert codes_reported(capsys, "--select", "NPT001", "--ignore", "NPT001") == []


def test_an_empty_select_in_the_file_is_refused_like_an_empty_select_on_the_command_line(project, capsys):
    project("[tool.np2torch-lint]\nselect = []\n")
    code, out, err = run_main(main, capsys, "src")
    assert (code, out, err.splitlines()) == (
        2, "", [f"{TABLE} select: no rule codes given (like NPT001, or a prefix like NPT)"])


def test_an_empty_ignore_in_the_file_ignores_nothing(project, capsys):
    project("[tool.np2torch-lint]\nignore = []\n")
    assert codes_reported(capsys) == ["NPT001", "NPT002", "NPT004", "NPT005"]  # NPT003 is opt-in, not ignored


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 5000 + "1" + "}" * 5000])
def test_settings_nested_thousands_deep_are_one_line_not_a_recursion_error(project, capsys, value):
    project(f"[tool.np2torch-lint]\nselect = {value}\n")
    code, out, err = run_main(main, capsys, "src")
    assert (code, out) == (2, "") and err.splitlines() == [
        "pyproject.toml: cannot read it as TOML: arrays or tables nested too deeply (no setting nests more than "
        "3 levels)"]


def test_per_file_ignores_apply_after_the_command_line(project, capsys, write):
    project('[tool.np2torch-lint.per-file-ignores]\n"src/*" = ["NPT001"]\n')
    assert "NPT001" not in codes_reported(capsys, "--select", "NPT001,NPT002")
