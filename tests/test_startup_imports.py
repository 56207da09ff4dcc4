"""Start-up: the command line, --version and a run answered from the cache import neither LibCST nor the analysis
(nor flake8, pathspec, NumPy or torch); only a file that must be analysed brings them in. What they cost in
seconds is measured by benchmarks/startup.py, not here."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("libcst", "np2torch_lint.analysis", "np2torch_lint.engine", "np2torch_lint.fixer", "flake8", "pathspec",
         "numpy", "torch", "concurrent.futures.process", "importlib.metadata", "logging")
BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"

# runs the command line in a fresh interpreter, then says which heavy modules that run imported
RUN = """
import sys
from np2torch_lint.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("imported:", ",".join(name for name in {heavy!r} if name in sys.modules))
"""


def imported_by(*argv: str, cwd=None) -> tuple[str, list[str]]:
    result = subprocess.run([sys.executable, "-c", RUN.format(heavy=HEAVY), *argv], capture_output=True, text=True,
                            cwd=cwd)
    *output, imported = result.stdout.splitlines()
    return "\n".join(output), [name for name in imported.removeprefix("imported:").strip().split(",") if name]


def test_importing_the_command_line_imports_nothing_heavy():
    result = subprocess.run([sys.executable, "-c", f"import sys, np2torch_lint.cli\n"
                             f"print([name for name in {HEAVY!r} if name in sys.modules])"],
                            capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


def test_version_imports_nothing_heavy():
    output, imported = imported_by("--version")
    assert output.startswith("np2torch-lint ") and imported == []


def test_a_run_answered_from_the_cache_imports_nothing_heavy_and_a_cold_one_does(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.np2torch-lint]\n")
    (tmp_path / "train.py").write_text(BAD)
    (tmp_path / ".gitignore").write_text("*.pyc\n")  # not in a git repository: never read, so no pathspec
    cold_output, cold = imported_by("train.py", cwd=tmp_path)
    assert "libcst" in cold and "NPT001" in cold_output
    warm_output, warm = imported_by("train.py", cwd=tmp_path)
    assert warm == [] and warm_output == cold_output
