"""benchmarks/real_code/recall.py scores any table folder, with its mirror root from an option or the environment.

Only argument handling and table loading are tested here: no project of the fixtures has a mirror, so nothing is
extracted or linted.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from helpers import REPO

_SPEC = importlib.util.spec_from_file_location("real_code_recall", REPO / "benchmarks" / "real_code" / "recall.py")
assert _SPEC is not None and _SPEC.loader is not None
recall = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = recall  # its dataclasses look their module up while the module runs
_SPEC.loader.exec_module(recall)

HEADER = "repo,commit,path,line,rule,verdict,evidence,also_lines,note\n"


def make_table(folder: Path, rows: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "projects.toml").write_text('[[project]]\nrepo = "someone/tiny"\ncommit = "0123abcd"\n')
    (folder / "ground_truth.csv").write_text(HEADER + rows)
    return folder


def test_table_option_scores_that_folders_projects_and_rows(tmp_path, capsys):
    table = make_table(tmp_path / "table", "someone/tiny,0123abcd,a.py,3,NPT003,bug,local,,a copy\n")
    empty_mirrors = tmp_path / "mirrors"
    empty_mirrors.mkdir()

    assert recall.main(["--table", str(table), "--mirror", str(empty_mirrors)]) == 0

    out = capsys.readouterr().out
    assert f"table: {table / 'projects.toml'} and {table / 'ground_truth.csv'}; mirrors under {empty_mirrors}" in out
    assert "0 of 1 projects linted" in out
    assert f"someone/tiny: no mirror under {empty_mirrors / 'someone+tiny'}; not linted" in out


def test_mirror_root_is_the_option_then_the_environment_then_the_fallback(tmp_path):
    assert recall.mirror_root(tmp_path / "given", {"NP2TORCH_MIRROR": str(tmp_path / "env")}) == tmp_path / "given"
    assert recall.mirror_root(None, {"NP2TORCH_MIRROR": str(tmp_path / "env")}) == tmp_path / "env"
    assert recall.mirror_root(None, {}) == recall.FALLBACK_MIRROR


def test_mirror_root_from_the_environment_reaches_the_run(tmp_path, capsys, monkeypatch):
    table = make_table(tmp_path / "table")
    monkeypatch.setenv("NP2TORCH_MIRROR", str(tmp_path))

    assert recall.main(["--table", str(table)]) == 0

    assert f"mirrors under {tmp_path}" in capsys.readouterr().out


@pytest.mark.parametrize("missing", ["projects.toml", "ground_truth.csv"])
def test_a_table_without_one_of_its_files_is_a_usage_error(tmp_path, capsys, missing):
    table = make_table(tmp_path / "table")
    (table / missing).unlink()

    with pytest.raises(SystemExit) as exit_info:
        recall.main(["--table", str(table), "--mirror", str(tmp_path)])

    assert exit_info.value.code == 2
    assert f"{table / missing}: no such file" in capsys.readouterr().err


def test_a_mirror_root_that_is_not_a_folder_is_a_usage_error(tmp_path, capsys):
    table = make_table(tmp_path / "table")

    with pytest.raises(SystemExit) as exit_info:
        recall.main(["--table", str(table), "--mirror", str(tmp_path / "absent")])

    assert exit_info.value.code == 2
    assert f"mirror root {tmp_path / 'absent'} is not a folder" in capsys.readouterr().err


def test_a_row_whose_line_is_not_a_number_names_the_file_and_row(tmp_path):
    table = make_table(tmp_path / "table", "someone/tiny,0123abcd,a.py,three,NPT003,bug,local,,a copy\n")

    with pytest.raises(SystemExit, match=r"ground_truth.csv:2: line must be a number, not 'three'"):
        recall.load_truth(table / "ground_truth.csv")
