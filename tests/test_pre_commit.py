"""The pre-commit hooks, tried from this checkout on a throwaway repository (pre-commit from PyPI installs them)."""

from __future__ import annotations

import json
import os
import re
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


def test_the_hooks_apply_the_configurations_excludes_to_the_files_pre_commit_passes(project):
    work, env = project
    (work / "pyproject.toml").write_text('[tool.np2torch-lint]\nexclude = ["generated"]\n')
    (work / "generated").mkdir()
    (work / "generated" / "bad.py").write_text(BAD)
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    check = try_repo(work, env, "np2torch-lint", "generated/bad.py")
    assert check.returncode == 0, check.stdout + check.stderr


def fixing_doc_yaml_blocks() -> list[str]:
    section = (REPO / "docs" / "fixing.md").read_text(encoding="utf-8").split("## pre-commit", 1)[1]
    return re.findall(r"```yaml\n(.*?)```", section.split("\n## ", 1)[0], re.S)


def test_the_documented_local_hooks_work_as_written(tmp_path):
    work = tmp_path / "work"
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    (work / ".pre-commit-config.yaml").write_text(fixing_doc_yaml_blocks()[0], encoding="utf-8")
    (work / "bad.py").write_text(BAD)
    subprocess.run(["git", "add", "."], cwd=work, check=True, env=env)
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "files were modified by this hook" in run.stdout, run.stdout + run.stderr
    assert "print(to_numpy(w))" in (work / "bad.py").read_text()


def test_the_documented_repository_hooks_pin_a_commit_with_autoupdate(tmp_path):
    """The repository has no release tag: ``rev: HEAD``, then ``pre-commit autoupdate`` writes the commit."""
    config = fixing_doc_yaml_blocks()[1]
    assert "rev: HEAD" in config and "/path/to/np2torch-lint" in config
    work = tmp_path / "work"
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    (work / ".pre-commit-config.yaml").write_text(config.replace("/path/to/np2torch-lint", str(REPO)),
                                                  encoding="utf-8")
    update = subprocess.run([sys.executable, "-m", "pre_commit", "autoupdate"], cwd=work, env=env,
                            capture_output=True, text=True, timeout=300)
    assert update.returncode == 0, update.stdout + update.stderr
    rev = re.search(r"rev: (\S+)", (work / ".pre-commit-config.yaml").read_text()).group(1)
    tags = subprocess.run(["git", "-C", str(REPO), "tag"], capture_output=True, text=True).stdout.split()
    assert rev in tags or re.fullmatch(r"[0-9a-f]{40}", rev), rev
    assert subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", rev], env=env).returncode == 0


def test_the_hooks_describe_every_rule():
    from np2torch_lint.rules import RULES

    manifest = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    descriptions = re.findall(r"description: (.*)", manifest)
    assert len(descriptions) == 2
    for description in descriptions:
        default, opt_in = description.split("; the opt-in ")
        named = {f"NPT{n:03}" for first, last in re.findall(r"NPT(\d+)(?:-NPT(\d+))?", default)
                 for n in range(int(first), int(last or first) + 1)}
        assert named == {rule.code for rule in RULES if rule.default}
        assert {rule.code for rule in RULES if not rule.default} == set(re.findall(r"NPT\d+", opt_in))
