"""No surprise dependency: a helpers-style fix that makes a project import np2torch_lint.runtime says so, once, unless
the project lists np2torch-lint; the runtime without NumPy or torch fails with one line that says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from np2torch_lint.cli import fix_main
from np2torch_lint.dependencies import NOTICE, lists_np2torch_lint, project_folder

from helpers import run_main

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"


def fix_summary(capsys, *argv: str) -> list[str]:
    _, _, err = run_main(fix_main, capsys, "--no-cache", *argv)
    return err.splitlines()


def test_a_fix_that_adds_the_runtime_import_says_so_once(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["torch"]\n')
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BAD)
    assert fix_summary(capsys, str(tmp_path)) == ["fixed 2 findings in 2 files, 0 left", NOTICE]
    assert "from np2torch_lint.runtime import to_numpy" in (tmp_path / "a.py").read_text()
    assert "pip" not in NOTICE and '"np2torch-lint[runtime]"' in NOTICE and 'fix-style = "inline"' in NOTICE


@pytest.mark.parametrize(("name", "content"), [
    ("pyproject.toml", '[project]\nname = "app"\ndependencies = ["torch", "np2torch-lint[runtime]>=0.1"]\n'),
    ("pyproject.toml", '[project]\nname = "app"\n[project.optional-dependencies]\ngpu = ["NP2Torch_Lint"]\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\nnp2torch-lint = {extras = ["runtime"]}\n'),
    ("requirements.txt", "torch>=2\n# the conversion helpers\nnp2torch-lint[runtime]==0.1.0\n"),
    ("requirements-train.txt", "np2torch.lint\n"),
    ("setup.cfg", "[options]\ninstall_requires =\n    torch\n    np2torch-lint\n"),
    ("setup.py", 'from setuptools import setup\nsetup(name="app", install_requires=["np2torch-lint[runtime]"])\n'),
])
def test_a_project_that_lists_np2torch_lint_gets_no_notice(tmp_path, capsys, name, content):
    (tmp_path / name).write_text(content)
    (tmp_path / "a.py").write_text(BAD)
    assert fix_summary(capsys, str(tmp_path / "a.py")) == ["fixed 1 finding in 1 file, 0 left"]


def test_the_linters_own_config_table_is_not_a_dependency(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n[tool.np2torch-lint]\nfix-style = "helpers"\n')
    assert lists_np2torch_lint(project_folder(tmp_path / "a.py")) is False


def test_inline_fixes_and_files_that_imported_the_runtime_already_get_no_notice(tmp_path, capsys):
    (tmp_path / "a.py").write_text(BAD)
    assert fix_summary(capsys, "--fix-style", "inline", str(tmp_path / "a.py")) == [
        "fixed 1 finding in 1 file, 0 left"]
    (tmp_path / "b.py").write_text("from np2torch_lint.runtime import to_numpy\n" + BAD)
    assert fix_summary(capsys, str(tmp_path / "b.py")) == ["fixed 1 finding in 1 file, 0 left"]


def test_a_preview_of_the_fix_gives_the_notice_too(tmp_path, capsys):
    (tmp_path / "a.py").write_text(BAD)
    assert fix_summary(capsys, "--diff", str(tmp_path / "a.py")) == ["would fix 1 finding in 1 file, 0 left", NOTICE]
    assert (tmp_path / "a.py").read_text() == BAD


@pytest.mark.parametrize("missing", ["numpy", "torch"])
def test_the_runtime_without_numpy_or_torch_fails_with_one_line_that_says_what_to_install(missing):
    result = subprocess.run([sys.executable, "-c", f"import sys; sys.modules[{missing!r}] = None\n"
                             "import np2torch_lint.runtime"], capture_output=True, text=True)
    assert result.returncode == 1
    last = result.stderr.splitlines()[-1]
    assert last == (f"ModuleNotFoundError: np2torch_lint.runtime needs NumPy and PyTorch, and {missing} is not "
                    "installed: pip install 'np2torch-lint[runtime]'")
    assert "During handling" not in result.stderr  # one error, not a chain
