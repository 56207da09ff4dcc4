"""np2torch-fix: expected outputs in both styles, properties over every fixture, runnable before/after programs."""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from np2torch_lint.cli import fix_main
from np2torch_lint.engine import analyse_text, parse
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

from helpers import FIXTURES, REPO

FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))
ANALYSIS_FIXTURES = sorted((FIXTURES / "analysis").glob("*.py"))
STYLES = {FixStyle.HELPERS: ".py", FixStyle.INLINE: ".inline.py"}
EXECUTABLE = sorted((REPO / "tests" / "data" / "executable").glob("*.py"))


def expected_path(path: Path, style: FixStyle) -> Path:
    return FIXTURES / "fixed" / (path.stem + STYLES[style])


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixed_fixture_matches_the_expected_output(path, style):
    outcome = fix_text(path.read_text(encoding="utf-8"), str(path), style=style, unsafe=True)
    assert outcome.text == expected_path(path, style).read_text(encoding="utf-8")


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("path", FIXTURE_FILES + ANALYSIS_FIXTURES, ids=lambda p: p.name)
def test_fix_properties(path, style, unsafe):
    original = path.read_text(encoding="utf-8")
    once = fix_text(original, str(path), style=style, unsafe=unsafe)
    parse(once.text)  # the result parses
    assert fix_text(once.text, str(path), style=style, unsafe=unsafe).text == once.text  # idempotent
    # what is left has no fix that this run could apply
    for finding in analyse_text(once.text, str(path), style=style).findings:
        assert finding.fix is None or (not unsafe and finding.fix.applicability.value == "unsafe")
    # comments survive, in order
    assert re.findall(r"#.*", original) == re.findall(r"#.*", once.text)
    # only lines holding a fixed finding change; added lines are imports
    fixable_lines = _lines_of_fixable_findings(original, path, style, unsafe)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            a=original.splitlines(), b=once.text.splitlines(), autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1 + 1, i2 + 1)) <= fixable_lines, original.splitlines()[i1:i2]
        if tag == "insert":
            assert all(line.startswith(("from ", "import ")) or not line.strip()
                       for line in once.text.splitlines()[j1:j2])


def _lines_of_fixable_findings(text: str, path: Path, style: FixStyle, unsafe: bool) -> set[int]:
    analysis = analyse_text(text, str(path), style=style)
    lines: set[int] = set()
    for finding in analysis.findings:
        if finding.fix is None or (finding.fix.applicability.value == "unsafe" and not unsafe):
            continue
        where = analysis.positions[finding.fix.target or finding.node]
        lines.update(range(where.start.line, where.end.line + 1))
    return lines


def test_safe_fixes_only_by_default_and_unsafe_on_request(tmp_path, capsys):
    path = tmp_path / "mixed.py"
    path.write_text("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
                    "t = torch.tensor(np.zeros(3)).float()\n")
    assert fix_main(["--fix-style", "inline", str(path)]) == 1  # NPT010 is left
    assert "w.detach().numpy()" in path.read_text() and "torch.tensor(" in path.read_text()
    assert capsys.readouterr().err.strip().endswith("fixed 1 finding in 1 file, 1 left")
    assert fix_main(["--fix-style", "inline", "--unsafe-fixes", str(path)]) == 1  # changed a file
    assert "torch.as_tensor(np.zeros(3)).float()" in path.read_text()
    assert fix_main(["--fix-style", "inline", "--unsafe-fixes", str(path)]) == 0  # nothing left
    assert capsys.readouterr().err.strip().endswith("fixed 0 findings in 0 files, 0 left")


def test_diff_and_check_write_nothing(tmp_path, capsys):
    path = tmp_path / "bad.py"
    text = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    path.write_text(text)
    assert fix_main(["--diff", "--fix-style", "inline", str(path)]) == 1
    out = capsys.readouterr().out
    assert "-w.numpy()\n+w.detach().numpy()\n" in out
    assert fix_main(["--check", str(path)]) == 1
    assert path.read_text() == text


def test_files_without_findings_are_untouched(tmp_path):
    path = tmp_path / "clean.py"
    path.write_text("import torch\nx = torch.ones(3)\nx.numpy()\n")
    os.utime(path, (1_000_000, 1_000_000))
    assert fix_main([str(path)]) == 0
    assert path.stat().st_mtime == 1_000_000


@pytest.mark.parametrize(("data", "encoding"), [
    (b"import torch\r\nw = torch.ones(2, requires_grad=True)\r\nw.numpy()  # caf\xc3\xa9\r\n", "utf-8"),
    (b"\xef\xbb\xbfimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n", "utf-8-sig"),
    (b"# -*- coding: latin-1 -*-\nimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()  # caf\xe9\n",
     "latin-1"),
])
def test_encoding_bom_newlines_and_mode_survive(tmp_path, data, encoding):
    path = tmp_path / "enc.py"
    path.write_bytes(data)
    path.chmod(0o640)
    assert fix_main(["--fix-style", "inline", str(path)]) == 1
    fixed = path.read_bytes()
    assert fixed == data.replace(b"w.numpy()", b"w.detach().numpy()")
    assert (path.stat().st_mode & 0o777) == 0o640
    assert fixed.decode(encoding)


def test_read_only_file_is_reported_and_left_alone(tmp_path, capsys):
    path = tmp_path / "locked.py"
    text = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
    path.write_text(text)
    path.chmod(0o444)
    assert fix_main([str(path)]) == 2
    assert "read-only" in capsys.readouterr().err
    assert path.read_text() == text


def test_stdin_to_stdout():
    result = subprocess.run([sys.executable, "-m", "np2torch_lint", "--fix", "--fix-style", "inline", "-"],
                            input=b"import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n",
                            capture_output=True)
    assert result.stdout == b"import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.detach().numpy())\n"
    assert result.returncode == 1


def test_unparsable_file_is_reported_not_written(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("import torch\ndef (:\n")
    assert fix_main([str(path)]) == 2
    assert "could not parse" in capsys.readouterr().err
    assert path.read_text() == "import torch\ndef (:\n"


def run_program(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("program", EXECUTABLE, ids=lambda p: p.stem)
def test_executable_programs_before_and_after_the_fix(tmp_path, program, style):
    before = run_program(program)
    fixed_path = tmp_path / program.name
    fixed_path.write_text(fix_text(program.read_text(), program.name, style=style, unsafe=True).text)
    after = run_program(fixed_path)
    assert after.returncode == 0, after.stderr
    assert analyse_text(fixed_path.read_text(), program.name).findings == []  # every finding was fixed
    rule = program.stem[:6]
    if rule == "npt001":
        assert before.returncode != 0 and "Can't call numpy() on Tensor that requires grad" in before.stderr
        assert "matches True" in after.stdout
    elif rule == "npt003":
        assert "sees write False" in before.stdout and "sees write True" in after.stdout
        assert "dtype torch.float32" in before.stdout and "dtype torch.float32" in after.stdout
    elif rule == "npt004":
        assert before.returncode != 0 and "mat1 and mat2 must have the same dtype" in before.stderr
        assert "dtype torch.float32" in after.stdout
    elif rule == "npt006":  # the same batch, without torch's warning about a list of arrays
        assert before.stdout == after.stdout and after.stdout
        assert "list of numpy.ndarrays is extremely slow" in before.stderr
        assert "extremely slow" not in after.stderr
    elif program.stem == "npt008_negative_strides":
        assert before.returncode != 0 and "At least one stride in the given numpy array is negative" in before.stderr
        assert "matches True True" in after.stdout
    elif program.stem == "npt008_read_only":  # the write no longer reaches the read-only array
        assert "The given NumPy array is not writable" in before.stderr and "array changed True" in before.stdout
        assert "array changed False" in after.stdout and "not writable" not in after.stderr
    else:  # NPT002, NPT005 and NPT007 run on this CPU before and after: the same output
        assert before.returncode == 0 and before.stdout == after.stdout and after.stdout


def test_existing_imports_and_aliases_are_reused():
    text = ("import numpy as onp\nimport torch as th\nfrom np2torch_lint.runtime import to_numpy\n\n"
            "w = th.ones(2, requires_grad=True)\nprint(w.numpy(), to_numpy(w))\n"
            "t = th.from_numpy(onp.zeros(3))\n")
    helpers = fix_text(text, "x.py", style=FixStyle.HELPERS, unsafe=True).text
    assert helpers.count("from np2torch_lint.runtime import") == 1
    assert "from np2torch_lint.runtime import from_numpy, to_numpy" in helpers
    assert "print(to_numpy(w), to_numpy(w))" in helpers
    assert "from_numpy(onp.zeros(3), dtype=th.float32)" in helpers
    inline = fix_text(text, "x.py", style=FixStyle.INLINE, unsafe=True).text
    assert "t = th.as_tensor(onp.zeros(3), dtype=th.float32)" in inline
    assert "import torch\n" not in inline and "import numpy\n" not in inline


def test_a_missing_torch_import_is_added_once():
    text = "from torch import from_numpy\nimport numpy as np\na = from_numpy(np.zeros(3))\nb = from_numpy(np.ones(3))\n"
    fixed = fix_text(text, "x.py", style=FixStyle.INLINE, unsafe=True).text
    assert fixed.count("import torch\n") == 1
    assert "a = torch.as_tensor(np.zeros(3), dtype=torch.float32)" in fixed
    compile(fixed, "x.py", "exec")


def test_stdin_that_cannot_be_decoded_passes_through_unchanged():
    data = b"import torch\nx = '\xff'\n"
    result = subprocess.run([sys.executable, "-m", "np2torch_lint", "--fix", "-"], input=data, capture_output=True)
    assert result.stdout == data and result.returncode == 2
    assert b"stdin: could not parse: not valid utf-8" in result.stderr
