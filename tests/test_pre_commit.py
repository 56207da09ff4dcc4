"""The pre-commit hooks, tried from this checkout on a throwaway repository (pre-commit from PyPI installs them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("precommit")
    work = root / "work"
    work.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(root / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    return work, env


def try_repo(work: Path, env: dict[str, str], hook: str, *files: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--files", *files],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)


def test_check_hook_fails_on_a_bad_file_and_the_fix_hook_rewrites_it(project):
    work, env = project
    (work / "bad.py").write_text(BAD)
    (work / "good.py").write_text("import torch\nprint(torch.ones(2).numpy())\n")
    (work / "nb.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                                          "outputs": [], "source": BAD}],
                                               "metadata": {}, "nbformat": 4, "nbformat_minor": 4}))
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)

    check = try_repo(work, env, "np2torch-lint", "bad.py", "good.py", "nb.ipynb")
    assert check.returncode == 1, check.stdout + check.stderr
    assert "bad.py:3:7: NPT001" in check.stdout and "nb.ipynb:cell 1:3:7: NPT001" in check.stdout
    assert (work / "bad.py").read_text() == BAD

    fix = try_repo(work, env, "np2torch-fix", "bad.py", "good.py")
    assert fix.returncode == 1, fix.stdout + fix.stderr  # files changed: pre-commit stops the commit
    assert "from np2torch_lint.runtime import to_numpy" in (work / "bad.py").read_text()
    assert "print(to_numpy(w))" in (work / "bad.py").read_text()

    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    again = try_repo(work, env, "np2torch-lint", "bad.py", "good.py")
    assert again.returncode == 0, again.stdout + again.stderr
