"""Reporting after a fix, as ruff does: the findings left in the chosen format (JSON with each fix's edits), and a
summary that counts only what was written, in grammatical English."""

from __future__ import annotations

import io
import json
import os
import stat
import sys

import pytest

from np2torch_lint.cli import fix_main, main
from np2torch_lint.dependencies import NOTICE

from helpers import apply_edits, run_main

MIXED = ("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
         "t = torch.tensor(np.zeros(3)).float()\n")  # NPT001 (safe fix), NPT010 (unsafe fix)


def test_findings_left_are_listed_and_the_summary_counts_what_was_written(write, capsys):
    path = write("mixed.py", MIXED)
    code, out, err = run_main(fix_main, capsys, "--fix-style", "inline", str(path))
    assert code == 1
    assert path.read_text().splitlines()[3] == "w.detach().numpy()"
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["NPT010"]
    assert out.startswith(f"{path}:5:5: NPT010 ")
    assert err == "fixed 1 finding in 1 file, 1 left\n"


def test_the_linter_with_fix_lists_what_is_left_as_json_with_edits_that_apply_to_the_written_file(write, capsys):
    path = write("mixed.py", MIXED)
    code, out, err = run_main(main, capsys, "--fix", "--output-format", "json", str(path))
    assert code == 1 and err == f"fixed 1 finding in 1 file, 1 left\n{NOTICE}\n"  # no dependency list: the note
    [left] = json.loads(out)
    assert left["code"] == "NPT010" and left["fix"]["applicability"] == "unsafe"
    written = path.read_text()
    assert "to_numpy(w)" in written
    fixed = apply_edits(written, left["fix"]["edits"])
    assert "from_numpy(np.zeros(3)).float()" in fixed and "torch.tensor(" not in fixed


def test_counts_are_grammatical(write, capsys, tmp_path):
    for name in ("a.py", "b.py"):
        write(name, MIXED)
    _, _, err = run_main(fix_main, capsys, "--unsafe-fixes", str(tmp_path))
    assert err == f"fixed 4 findings in 2 files, 0 left\n{NOTICE}\n"
    _, out, err = run_main(fix_main, capsys, str(tmp_path))
    assert (out, err) == ("", "fixed 0 findings in 0 files, 0 left\n")


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_a_file_that_could_not_be_written_is_not_counted_and_its_findings_are_listed(write, capsys):
    path = write("readonly.py", MIXED)
    os.chmod(path, stat.S_IRUSR)
    try:
        code, out, err = run_main(fix_main, capsys, str(path))
    finally:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    assert code == 2 and path.read_text() == MIXED
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["NPT001", "NPT010"]
    assert err.splitlines() == [f"{path}: could not write, left unchanged: {path} is read-only",
                                "fixed 0 findings in 0 files, 2 left"]


def test_check_lists_what_would_be_left_and_writes_nothing(write, capsys):
    path = write("mixed.py", MIXED)
    code, out, err = run_main(fix_main, capsys, "--check", str(path))
    assert code == 1 and path.read_text() == MIXED
    assert out.split()[1] == "NPT010" and err == f"would fix 1 finding in 1 file, 1 left\n{NOTICE}\n"


def test_diff_prints_only_the_diff(write, capsys):
    code, out, err = run_main(fix_main, capsys, "--diff", str(write("mixed.py", MIXED)))
    assert code == 1 and out.startswith("---") and "NPT010" not in out
    assert err == f"would fix 1 finding in 1 file, 1 left\n{NOTICE}\n"


def test_a_stdin_filter_writes_the_code_to_stdout_and_the_findings_left_to_stderr(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(MIXED.encode())))
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    monkeypatch.setattr(sys, "stdout", stdout)
    code = fix_main(["--stdin-filename", "snippet.py", "--output-format", "json-lines", "-"])
    stdout.flush()
    fixed = stdout.buffer.getvalue().decode()
    err = capsys.readouterr().err.splitlines()
    assert code == 1 and "to_numpy(w)" in fixed
    assert json.loads(err[0])["code"] == "NPT010" and err[1] == "fixed 1 finding in 1 file, 1 left"


def test_statistics_after_a_fix_count_what_is_left(write, capsys):
    code, out, _ = run_main(fix_main, capsys, "--statistics", str(write("mixed.py", MIXED)))
    assert code == 1 and out.split()[:2] == ["1", "NPT010"] and len(out.splitlines()) == 1


def test_the_summary_counts_findings_settled_not_edits_made(write, capsys):
    """``to_numpy(w)`` settles both NPT001 and NPT002 of ``w.numpy()``: four findings of seven are gone."""
    path = write("counted.py", "import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True).cuda()\n"
                               "w.numpy()\nw.numpy()\n"  # NPT001 and NPT002 twice: one safe edit each
                               "t = torch.tensor(np.zeros(3)).float()\n"  # NPT010, unsafe
                               "u = torch.from_numpy(np.zeros(3))\nv = torch.from_numpy(np.ones(3))\n")  # NPT004 x2
    code, out, err = run_main(fix_main, capsys, str(path))
    assert path.read_text().count("to_numpy(w)") == 2  # one edit for each pair
    assert len(out.splitlines()) == 3  # NPT010 and two NPT004, whose fixes are unsafe
    assert err == f"fixed 4 findings in 1 file, 3 left\n{NOTICE}\n"
