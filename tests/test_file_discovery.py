"""Which files are linted: .gitignore (in a git repository) and .ignore files, --no-respect-gitignore, and
--force-exclude for paths given explicitly (what pre-commit passes)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from np2torch_lint.cli import main

from helpers import run_main

BAD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"


def linted(capsys, *argv: str) -> list[str]:
    """The files reported (each has one finding), relative to the current folder, sorted."""
    code, out, err = run_main(main, capsys, *argv)
    assert err == "" and code in (0, 1), err
    return sorted(Path(line.split(":")[0]).as_posix() for line in out.splitlines())


@pytest.fixture
def repository(tmp_path, write, monkeypatch):
    """A git repository (a .git folder is what counts) with ignore files at several levels."""
    (tmp_path / ".git" / "info").mkdir(parents=True)
    write(".git/info/exclude", "local_only.py\n")
    write(".gitignore", "generated/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n")
    write("src/.gitignore", "scratch.py\n")
    write(".ignore", "notes/\n")
    for name in ("src/a.py", "generated/b.py", "src/x_pb2.py", "src/keep_pb2.py", "top_only.py", "src/top_only.py",
                 "src/scratch.py", "scratch.py", "notes/n.py", "local_only.py"):
        write(name, BAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_gitignore_ignore_and_info_exclude_are_respected(repository, capsys):
    assert linted(capsys, ".") == ["scratch.py", "src/a.py", "src/keep_pb2.py", "src/top_only.py"]


def test_a_subfolder_is_walked_with_the_ignore_files_above_it(repository, capsys):
    assert linted(capsys, "src") == ["src/a.py", "src/keep_pb2.py", "src/top_only.py"]


def test_no_respect_gitignore_lints_everything(repository, capsys, write):
    assert len(linted(capsys, "--no-respect-gitignore", ".")) == 10
    write("pyproject.toml", "[tool.np2torch-lint]\nrespect-gitignore = false\n")
    assert len(linted(capsys, ".")) == 10
    assert len(linted(capsys, "--respect-gitignore", ".")) == 4


def test_outside_a_git_repository_only_ignore_files_count(tmp_path, write, monkeypatch, capsys):
    write(".gitignore", "a.py\n")
    write(".ignore", "b.py\n")
    write("a.py", BAD)
    write("b.py", BAD)
    monkeypatch.chdir(tmp_path)
    assert linted(capsys, ".") == ["a.py"]


def test_a_file_given_explicitly_is_linted_even_when_ignored(repository, capsys):
    assert linted(capsys, "generated/b.py", "src/x_pb2.py") == ["generated/b.py", "src/x_pb2.py"]


def test_force_exclude_applies_exclude_and_skipped_folders_to_explicit_paths(repository, capsys, write):
    write("pyproject.toml", '[tool.np2torch-lint]\nexclude = ["generated", "*_pb2.py"]\n')
    write(".venv/lib/v.py", BAD)
    explicit = ["generated/b.py", "generated", "src/x_pb2.py", ".venv/lib/v.py", "src/a.py"]
    # without it, every path given is linted, an ignored folder included (with the ignore files inside it)
    assert linted(capsys, *explicit) == [".venv/lib/v.py", "generated/b.py", "generated/b.py", "src/a.py",
                                         "src/x_pb2.py"]
    assert linted(capsys, "--force-exclude", *explicit) == ["src/a.py"]
    write("pyproject.toml", '[tool.np2torch-lint]\nexclude = ["generated"]\nforce-exclude = true\n')
    assert linted(capsys, "generated/b.py", "src/a.py") == ["src/a.py"]
    assert linted(capsys, "--no-force-exclude", "generated/b.py") == ["generated/b.py"]


def test_force_exclude_skips_standard_input_named_like_an_excluded_file(repository, capsys, write, monkeypatch):
    write("pyproject.toml", '[tool.np2torch-lint]\nexclude = ["generated"]\n')
    for name, expected in (("generated/b.py", []), ("src/new.py", ["src/new.py"])):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
        assert linted(capsys, "--force-exclude", "--stdin-filename", name, "-") == expected
