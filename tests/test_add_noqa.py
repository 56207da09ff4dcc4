"""--add-noqa: every finding gets a noqa comment (merged into one already there), the linter is clean afterwards,
a second run changes nothing, and files without findings, encodings and line endings are left as they were."""

from __future__ import annotations

import os

import pytest

from np2torch_lint.cli import main

from helpers import run_command, run_main

HEAD = "import numpy as np\nimport torch\nw = torch.ones(3, requires_grad=True)\n"
CASES = [  # (line after HEAD, the same line after --add-noqa)
    ("w.numpy()\n", "w.numpy()  # noqa: NPT001\n"),
    ("w.numpy()  # noqa: E501\n", "w.numpy()  # noqa: E501, NPT001\n"),
    ("w.numpy()  # noqa:E501 the reason stays\n", "w.numpy()  # noqa:E501, NPT001 the reason stays\n"),
    ("w.numpy()  # keep this note   \n", "w.numpy()  # keep this note  # noqa: NPT001\n"),
    ("print(w.numpy(), torch.tensor(np.zeros(2)).float())\n",
     "print(w.numpy(), torch.tensor(np.zeros(2)).float())  # noqa: NPT001, NPT010\n"),
    ("w.numpy(); w.numpy()\n", "w.numpy(); w.numpy()  # noqa: NPT001\n"),
]


def lint(capsys, *argv: str) -> tuple[int, str, str]:
    return run_main(main, capsys, *argv)


@pytest.mark.parametrize(("line", "expected"), CASES, ids=[case[0].strip() for case in CASES])
def test_a_noqa_comment_is_added_or_merged(write, capsys, line, expected):
    path = write("one.py", HEAD + line)
    code, out, err = lint(capsys, "--add-noqa", str(path))
    assert (code, out) == (0, "") and err == "added 1 noqa comment to 1 file\n"
    assert path.read_text() == HEAD + expected
    assert lint(capsys, str(path))[:2] == (0, "")


def test_multi_line_statements_get_the_comment_where_one_can_stand(write, capsys):
    text = (HEAD
            + "values = np.asarray(\n    w,\n)\n"  # on the finding's first line, inside the brackets
            + "x = w \\\n    .numpy()\n"  # a backslash: at the end of the statement
            + 'y = np.asarray(w, """text\n""")\n'  # the finding's line ends inside a string
            + "z = (w\n     .numpy())  # noqa: E501\n")  # an existing noqa elsewhere in the statement
    path = write("multi.py", text)
    assert lint(capsys, "--add-noqa", str(path))[0] == 0
    assert path.read_text() == (HEAD
                                + "values = np.asarray(  # noqa: NPT001\n    w,\n)\n"
                                + "x = w \\\n    .numpy()  # noqa: NPT001\n"
                                + 'y = np.asarray(w, """text\n""")  # noqa: NPT001\n'
                                + "z = (w\n     .numpy())  # noqa: E501, NPT001\n")
    assert lint(capsys, str(path))[:2] == (0, "")


def test_round_trip_on_the_fixtures_is_clean_idempotent_and_flake8_agrees(tmp_path, capsys):
    from helpers import FIXTURES

    for fixture in FIXTURES.glob("*.py"):
        (tmp_path / fixture.name).write_bytes(fixture.read_bytes())
    before = lint(capsys, str(tmp_path))
    assert before[0] == 1
    code, _, err = lint(capsys, "--add-noqa", str(tmp_path))
    assert code == 0 and err.endswith(f" to {len(list(FIXTURES.glob('*.py')))} files\n")
    assert lint(capsys, str(tmp_path))[:2] == (0, "")
    contents = {path: path.read_bytes() for path in tmp_path.glob("*.py")}
    assert lint(capsys, "--add-noqa", str(tmp_path))[2] == "added 0 noqa comments to 0 files\n"
    assert {path: path.read_bytes() for path in tmp_path.glob("*.py")} == contents
    flake8 = run_command("flake8", "--select", "NPT", str(tmp_path), cwd=tmp_path)
    assert (flake8.returncode, flake8.stdout) == (0, b"")


def test_files_without_findings_are_not_touched(write, capsys):
    clean = write("clean.py", "import torch\nx = torch.ones(3)\nx.numpy()\n")
    no_torch = write("plain.py", "print('hello')\n")
    for path in (clean, no_torch):
        os.utime(path, (1_000_000, 1_000_000))
    assert lint(capsys, "--add-noqa", str(clean), str(no_torch)) == (0, "", "added 0 noqa comments to 0 files\n")
    assert clean.stat().st_mtime == no_torch.stat().st_mtime == 1_000_000


@pytest.mark.parametrize(("data", "expected"), [
    (HEAD.replace("\n", "\r\n").encode() + b"w.numpy()\r\n", b"w.numpy()  # noqa: NPT001\r\n"),
    (b"\xef\xbb\xbf" + HEAD.encode() + b"w.numpy()\n", b"w.numpy()  # noqa: NPT001\n"),
    (b"# -*- coding: latin-1 -*-\n" + HEAD.encode() + b"w.numpy()  # caf\xe9\n",
     b"w.numpy()  # caf\xe9  # noqa: NPT001\n"),
])
def test_encoding_bom_and_line_endings_are_kept(write, capsys, data, expected):
    path = write("enc.py", data)
    assert lint(capsys, "--add-noqa", str(path))[0] == 0
    after = path.read_bytes()
    assert after.endswith(expected) and after[:-len(expected)] == data[:data.rindex(b"w.numpy()")]


def test_add_noqa_refuses_to_be_combined_with_fixing_or_stdin(write, capsys):
    path = str(write("a.py", HEAD + "w.numpy()\n"))
    for argv in (["--fix", path], ["--diff", path], ["-"]):
        code, _, err = lint(capsys, "--add-noqa", *argv)
        assert code == 2 and "--add-noqa" in err.splitlines()[-1]


def test_notebooks_are_left_alone_with_a_note(tmp_path, capsys):
    from helpers import REPO

    notebook = tmp_path / "nb.ipynb"
    notebook.write_bytes((REPO / "tests" / "data" / "notebooks" / "ipython_syntax.ipynb").read_bytes())
    before = notebook.read_bytes()
    code, out, err = lint(capsys, "--add-noqa", str(notebook))
    assert (code, out) == (0, "") and notebook.read_bytes() == before
    assert err.splitlines() == [f"{notebook}: 2 findings left: --add-noqa does not change notebooks yet "
                                "(per-file-ignores can cover them)", "added 0 noqa comments to 0 files"]
