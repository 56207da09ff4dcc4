"""What a user installs and runs: light imports, the README's commands, the flake8 entry point."""

from __future__ import annotations

import re
import subprocess
import sys

from helpers import REPO


def test_linter_imports_neither_torch_nor_numpy():
    code = ("import sys, np2torch_lint, np2torch_lint.cli, np2torch_lint.flake8_plugin, np2torch_lint.engine\n"
            "np2torch_lint.engine.lint_text('import torch\\nx = torch.ones(1)\\nx.numpy()\\n', 'x.py')\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'numpy')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_package_root_imports_nothing_heavy():
    code = "import sys, np2torch_lint\nprint(sorted(m for m in sys.modules if m.split('.')[0] in " \
           "('libcst', 'torch', 'numpy', 'flake8')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```(?:sh|bash|console)\n(.*?)\n```", text, flags=re.DOTALL)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    commands = [c for c in readme_commands() if "pip install" in c]
    assert len(commands) == 2
    lint_command, test_command = commands
    assert "fixtures/" in lint_command and "np2torch-lint" in lint_command
    assert "pytest" in test_command and "torch==2.13.0" in test_command
    assert test_command.index("torch==2.13.0") < test_command.index("pip install -e")
    assert test_command in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_flake8_finds_the_plugin():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "np2torch-lint" in result.stdout


def test_every_rule_has_a_docs_page_with_the_required_sections():
    from np2torch_lint.rules import RULES_BY_CODE

    for code in RULES_BY_CODE:
        page = (REPO / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
        for heading in ("## What it finds", "## Why is this bad?", "## Example", "## Use instead",
                        "## Fix safety", "## References"):
            assert heading in page, f"{code}.md lacks {heading!r}"


def test_the_wheel_ships_the_library_models(tmp_path):
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(REPO)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("np2torch_lint-*.whl"))
    shipped = {name.rsplit("/", 1)[1] for name in zipfile.ZipFile(wheel).namelist()
               if name.startswith("np2torch_lint/analysis/models/")}
    assert shipped == {path.name for path in (REPO / "np2torch_lint" / "analysis" / "models").glob("*.toml")}
