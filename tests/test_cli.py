"""The np2torch-lint command: output formats, selection, config, suppression and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from np2torch_lint.cli import main

GRAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"
NPT001_LINE = "w.numpy()\n"
NPT010_LINE = "import numpy as np\ntorch.tensor(np.zeros(3)).float()\n"
CLEAN = "import torch\nx = torch.ones(3)\nx.numpy()\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_exit_zero_when_clean(write, capsys):
    assert run(capsys, str(write("clean.py", CLEAN))) == (0, "", "")


def test_exit_one_and_flake8_style_lines_when_there_are_findings(write, capsys):
    path = write("bad.py", GRAD + NPT001_LINE)
    code, out, err = run(capsys, str(path))
    assert code == 1
    assert out == f"{path}:3:1: NPT001 .numpy() on a tensor that may require grad raises RuntimeError: " \
                  "call .detach() first\n"
    assert err == ""


def test_exit_zero_flag_keeps_findings_but_exits_zero(write, capsys):
    code, out, _ = run(capsys, "--exit-zero", str(write("bad.py", GRAD + NPT001_LINE)))
    assert code == 0 and "NPT001" in out


def test_select_and_ignore_by_code_and_prefix(write, capsys):
    path = str(write("two.py", GRAD + NPT001_LINE + NPT010_LINE))
    assert {line.split()[1] for line in run(capsys, path)[1].splitlines()} == {"NPT001", "NPT010"}
    assert {line.split()[1] for line in run(capsys, "--select", "NPT010", path)[1].splitlines()} == {"NPT010"}
    assert {line.split()[1] for line in run(capsys, "--ignore", "NPT001", path)[1].splitlines()} == {"NPT010"}
    assert run(capsys, "--select", "NPT", "--ignore", "NPT0", path)[0] == 0
    assert {line.split()[1] for line in run(capsys, "--ignore", "NPT", "--select", "NPT001", path)[1].splitlines()} \
        == {"NPT001"}  # the longer, more specific prefix wins, as in flake8


@pytest.mark.parametrize("codes", ["NPT999", "XYZ", "npt-1", "E501"])
def test_unknown_codes_are_a_usage_error(write, capsys, codes):
    code, out, err = run(capsys, "--select", codes, str(write("clean.py", CLEAN)))
    assert code == 2 and out == ""
    assert "--select" in err and "Traceback" not in err


def test_statistics_count_findings_per_rule(write, capsys):
    path = str(write("bad.py", GRAD + NPT001_LINE + NPT001_LINE + NPT010_LINE))
    code, out, _ = run(capsys, "--statistics", path)
    assert code == 1
    assert "    2  NPT001  " in out and "    1  NPT010  " in out


def test_noqa_silences_a_code_or_all_codes_but_not_others(write, capsys):
    text = (GRAD + "w.numpy()  # noqa: NPT001\n" + "w.numpy()  # noqa\n" + "w.numpy()  # noqa: NPT002\n"
            + "w.numpy()  # NOQA:NPT0\n")
    code, out, _ = run(capsys, str(write("noqa.py", text)))
    assert [line.split(":")[1] for line in out.splitlines()] == ["5"]


def test_noqa_on_any_line_of_a_multi_line_statement_covers_it(write, capsys):
    text = GRAD + "value = (\n    w\n    .numpy()\n)  # noqa: NPT001\nother = (w\n    .numpy())\n"
    code, out, _ = run(capsys, str(write("multi.py", text)))
    assert [line.split(":")[1] for line in out.splitlines()] == ["7"]


def test_noqa_after_a_form_feed_silences_its_own_line(write, capsys):
    """A form feed (a page break) ends no line for Python: the comment belongs to the line it is on."""
    text = GRAD + "\f\n" + "a = w.numpy()  # noqa: NPT001\n" + "b = w.numpy()\n"
    code, out, _ = run(capsys, str(write("pages.py", text)))
    assert [line.split(":")[1] for line in out.splitlines()] == ["5"]


@pytest.mark.parametrize("directive", ["# np2torch-lint: skip-file", "# flake8: noqa"])
def test_file_level_skip(write, capsys, directive):
    assert run(capsys, str(write("skip.py", directive + "\n" + GRAD + NPT001_LINE)))[0] == 0


def test_folders_are_walked_and_tool_folders_skipped(write, capsys, tmp_path):
    write("pkg/bad.py", GRAD + NPT001_LINE)
    write("pkg/sub/bad.pyi", GRAD + NPT001_LINE)
    write("pkg/notes.txt", GRAD + NPT001_LINE)
    for skipped in (".git", ".venv", "build", "node_modules", "__pycache__", "x.egg-info"):
        write(f"pkg/{skipped}/bad.py", GRAD + NPT001_LINE)
    write("pkg/env/pyvenv.cfg", "")
    write("pkg/env/lib/bad.py", GRAD + NPT001_LINE)
    code, out, _ = run(capsys, str(tmp_path / "pkg"))
    assert code == 1
    assert sorted(Path(line.split(":")[0]).relative_to(tmp_path).as_posix() for line in out.splitlines()) == [
        "pkg/bad.py", "pkg/sub/bad.pyi"]


def test_config_select_exclude_and_per_file_ignores(write, capsys, tmp_path, monkeypatch):
    write("pyproject.toml", '[tool.np2torch-lint]\nselect = ["NPT001", "NPT010"]\nexclude = ["generated"]\n'
                            '[tool.np2torch-lint.per-file-ignores]\n"tests/*" = ["NPT001"]\n')
    write("src/a.py", GRAD + NPT001_LINE + NPT010_LINE)
    write("tests/test_a.py", GRAD + NPT001_LINE + NPT010_LINE)
    write("generated/b.py", GRAD + NPT001_LINE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, ".")
    found = sorted((Path(line.split(":")[0]).as_posix(), line.split()[1]) for line in out.splitlines())
    assert found == [("src/a.py", "NPT001"), ("src/a.py", "NPT010"), ("tests/test_a.py", "NPT010")]
    # an excluded file named explicitly is still linted, as in ruff
    assert "generated/b.py" in run(capsys, "generated/b.py")[1]
    # the command line wins over the file
    assert {line.split()[1] for line in run(capsys, "--select", "NPT010", "src")[1].splitlines()} == {"NPT010"}


def test_explicit_config_file_and_bad_config(write, capsys, tmp_path):
    config = write("conf/pyproject.toml", '[tool.np2torch-lint]\nignore = ["NPT001"]\n')
    path = str(write("a.py", GRAD + NPT001_LINE))
    assert run(capsys, "--config", str(config), path)[0] == 0
    broken = write("broken/pyproject.toml", "[tool.np2torch-lint]\nselekt = []\n")
    code, _, err = run(capsys, "--config", str(broken), path)
    assert code == 2 and "selekt" in err and "Traceback" not in err
    code, _, err = run(capsys, "--config", str(tmp_path / "missing.toml"), path)
    assert code == 2 and "no such file" in err


def test_stdin_is_read_with_a_display_name(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((GRAD + NPT001_LINE).encode())))
    code, out, _ = run(capsys, "--stdin-filename", "snippet.py", "-")
    assert code == 1 and out.startswith("snippet.py:3:1: NPT001")


def test_console_scripts_run(write):
    from helpers import run_command

    path = write("bad.py", GRAD + NPT001_LINE)
    result = run_command("np2torch-lint", str(path))
    assert result.returncode == 1 and b"NPT001" in result.stdout
    result = run_command("np2torch-lint", "--version")
    assert result.returncode == 0 and b"np2torch-lint" in result.stdout


def test_readme_usage_lists_every_option_and_format():
    from helpers import REPO
    from np2torch_lint.cli import build_parser
    from np2torch_lint.report import FORMATS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    usage = readme[readme.index("## Usage"):readme.index("## flake8")]
    options = {option for parser in (build_parser(), build_parser(fixing=True)) for action in parser._actions
               for option in action.option_strings if option.startswith("--")} - {"--help", "--version"}
    missing = sorted(option for option in options if option not in usage)
    assert missing == []
    assert all(f"`{name}`" in usage for name in FORMATS)
