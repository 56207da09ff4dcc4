"""Jupyter notebooks: cells linted as one program, IPython syntax masked, findings by cell, fixes that touch only
the "source" of the cells they change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from np2torch_lint.cli import fix_main, main
from np2torch_lint.notebooks import fix_notebook, lint_notebook
from np2torch_lint.notebooks.reading import without_sources

from helpers import REPO, run_command

NOTEBOOKS = sorted((REPO / "tests" / "data" / "notebooks").glob("*.ipynb"))
GRAD = "w = torch.ones(3, requires_grad=True)"


def notebook(*sources: str, minor: int = 5, cell_type: str = "code", **metadata) -> str:
    """A notebook as Jupyter writes it, one code cell per source."""
    cells = []
    for number, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source) if cell_type == "code" else nbformat.v4.new_markdown_cell(source)
        cell["id"] = f"cell-{number}"
        cells.append(cell)
    document = nbformat.v4.new_notebook(cells=cells, metadata=metadata)
    document.nbformat_minor = minor
    if minor < 5:
        for cell in document.cells:
            del cell["id"]
    return nbformat.writes(document) + "\n"


def lint(capsys, *args: str) -> tuple[int, list[str], list[str]]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def positions(raw: str) -> list[tuple[str, int | None, int, int]]:
    return [(d.code, d.cell, d.line, d.column) for d in lint_notebook(raw, "nb.ipynb")]


def test_findings_are_reported_by_cell_in_text_and_json(capsys, tmp_path: Path):
    # (a copy: under the repository's tests/ folder the notebook is a test module, where NPT004 is silent)
    path = shutil.copy(REPO / "tests" / "data" / "notebooks" / "ipython_syntax.ipynb", tmp_path)
    code, out, _ = lint(capsys, path)
    assert code == 1
    assert [line.split(": ")[0] + ": " + line.split(": ")[1][:6] for line in out] == [
        f"{path}:cell 5:4:9: NPT001", f"{path}:cell 8:2:5: NPT004"]
    code, out, _ = lint(capsys, "--output-format", "json", path)
    items = json.loads("\n".join(out))
    # ``    y = w.numpy()`` and ``t = torch.from_numpy(h)``, lines counted within their cells
    assert [(i["cell"], i["line"], i["column"], i["end_line"], i["end_column"]) for i in items] == [
        (5, 4, 9, 4, 18), (8, 2, 5, 2, 24)]


def test_a_name_bound_in_an_earlier_cell_is_known_in_a_later_one():
    assert positions(notebook("import torch", GRAD, "# a comment", "y = w.numpy()")) == [("NPT001", 4, 1, 5)]
    # run top to bottom, a use before the cell that makes the tensor knows nothing of it
    assert positions(notebook("import torch", "y = w.numpy()", GRAD)) == []


@pytest.mark.parametrize("masked", [
    "%timeit w.numpy()", "!echo {w.numpy()}", "files = !ls", "x = %time w.numpy()", "w.numpy?", "?w.numpy",
    "w.numpy??", "%%time\nprint(1)\n", "%%bash\n  echo w.numpy()", "for i in range(2):\n    %time w.numpy()",
    "%env A=\\\n  B",
])
def test_ipython_syntax_neither_breaks_parsing_nor_gives_findings(masked):
    plain = notebook("import torch", GRAD, "w.numpy()")
    assert positions(plain) == [("NPT001", 3, 1, 1)]  # the same notebook without the IPython line has its finding
    assert positions(notebook("import torch", GRAD, masked, "w.numpy()")) == [("NPT001", 4, 1, 1)]


def test_a_magic_assignment_forgets_what_the_name_was():
    assert positions(notebook("import torch", GRAD, "w = %time make()", "w.numpy()")) == []


def test_magic_lookalikes_inside_strings_and_brackets_stay_python():
    source = 's = """\n%not a magic\n"""\nt = (1,\n     2)\nv = "x?"\nw.numpy()'
    assert positions(notebook("import torch", GRAD, source)) == [("NPT001", 3, 7, 1)]


def test_empty_and_markdown_cells_and_other_kernels():
    raw = notebook("", "import torch", "", GRAD, "w.numpy()")
    assert positions(raw) == [("NPT001", 5, 1, 1)]
    assert positions(notebook("w.numpy()", cell_type="markdown")) == []
    r_kernel = notebook("import torch", GRAD, "w.numpy()", language_info={"name": "R"})
    assert positions(r_kernel) == []


def test_noqa_in_a_cell_silences_its_statement():
    assert positions(notebook("import torch", GRAD, "w.numpy()  # noqa: NPT001")) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fixing_changes_only_the_sources_of_fixed_cells_validates_and_is_idempotent(path, unsafe):
    raw = path.read_text(encoding="utf-8")
    outcome = fix_notebook(raw, str(path), unsafe=unsafe)
    assert outcome.fixed > 0 and outcome.text != raw
    assert without_sources(outcome.text) == without_sources(raw)  # outputs, metadata, counts, layout, last newline
    nbformat.validate(json.loads(outcome.text))
    before, after = json.loads(raw)["cells"], json.loads(outcome.text)["cells"]
    changed = {number for number, (old, new) in enumerate(zip(before, after), start=1) if old != new}
    assert changed == {change.cell for change in outcome.changes}
    assert all(fixed["source"] != old["source"] for fixed, old in zip(after, before) if fixed != old)
    assert fix_notebook(outcome.text, str(path), unsafe=unsafe).text == outcome.text
    assert outcome.remaining == lint_notebook(outcome.text, str(path))


def test_fixed_cells_keep_magics_and_get_the_helper_import_after_the_first_cells_imports():
    path = REPO / "tests" / "data" / "notebooks" / "ipython_syntax.ipynb"
    outcome = fix_notebook(path.read_text(encoding="utf-8"), "nb.ipynb")
    cells = ["".join(cell["source"]) for cell in json.loads(outcome.text)["cells"]]
    assert cells[1] == ("%load_ext autoreload\n%autoreload 2\nimport numpy as np\nimport torch\n"
                        "from np2torch_lint.runtime import to_numpy")
    assert cells[4] == "%%time\nfor i in range(2):\n    %timeit w.numpy()\n    y = to_numpy(w)"
    assert cells[5] == "%%bash\necho 'w.numpy()'\n   echo indented"


def test_the_helper_import_moves_out_of_a_cell_without_imports():
    raw = notebook("x = 1", "import torch", GRAD + "\nw.numpy()")
    cells = ["".join(cell["source"]) for cell in json.loads(fix_notebook(raw, "nb.ipynb").text)["cells"]]
    assert cells == ["x = 1", "import torch\nfrom np2torch_lint.runtime import to_numpy", GRAD + "\nto_numpy(w)"]


@pytest.mark.parametrize("minor", [4, 5])
def test_without_any_imports_cell_the_helper_import_gets_a_new_first_code_cell(minor):
    raw = notebook("if True:\n    import torch", GRAD + "\nw.numpy()", minor=minor)
    outcome = fix_notebook(raw, "nb.ipynb")
    cells = json.loads(outcome.text)["cells"]
    assert ["".join(cell["source"]) for cell in cells] == [
        "from np2torch_lint.runtime import to_numpy", "if True:\n    import torch", GRAD + "\nto_numpy(w)"]
    assert ("id" in cells[0]) == (minor == 5)
    nbformat.validate(json.loads(outcome.text))
    assert fix_notebook(outcome.text, "nb.ipynb").text == outcome.text


def test_a_one_line_notebook_stays_on_one_line():
    raw = json.dumps(json.loads(notebook("import torch", GRAD + "\nw.numpy()")))
    fixed = fix_notebook(raw, "nb.ipynb").text
    assert "\n" not in fixed and without_sources(fixed) == without_sources(raw)


def test_np2torch_fix_writes_the_notebook_and_diff_shows_cells(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    shutil.copy(REPO / "tests" / "data" / "notebooks" / "replay_buffer.ipynb", path)
    before = path.read_bytes()
    # cell 4's torch.FloatTensor(rows[:, :STATES]) is the opt-in NPT009's
    assert fix_main(["--diff", "--unsafe-fixes", "--extend-select", "NPT009", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"--- {path}:cell 2\n+++ {path}:cell 2\n" in out and f"+++ {path}:cell 4\n" in out
    assert "+from np2torch_lint.runtime import from_numpy, to_numpy\n" in out
    assert path.read_bytes() == before
    assert fix_main(["--unsafe-fixes", "--extend-select", "NPT009", str(path)]) == 1
    assert path.read_bytes() != before and main(["--extend-select", "NPT009", str(path)]) == 0


@pytest.mark.parametrize(("content", "reason"), [
    ("{\"cells\": [", "not a Jupyter notebook: not valid JSON: Expecting value at 1:12"),
    ("[]", "not a Jupyter notebook: no list of \"cells\" in its JSON"),
    (json.dumps({"cells": [], "nbformat": 3}), "not an nbformat 4 notebook (nbformat: 3); convert it with "
                                               "`jupyter nbconvert --to notebook --nbformat 4`"),
    (json.dumps({"cells": [{"cell_type": "code", "source": 1}], "nbformat": 4}),
     "not a valid notebook: the source of cell 1 is not text or a list of lines"),
    (notebook("import torch", "def f(:\n    pass"), "invalid syntax at cell 2:1:7"),
    # an nbformat 3 notebook keeps its cells in "worksheets"
    (json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {},
                 "worksheets": [{"cells": [{"cell_type": "code", "input": "import torch\n"}]}]}),
     "not an nbformat 4 notebook (nbformat: 3); convert it with `jupyter nbconvert --to notebook --nbformat 4`"),
    # JSON can hold what no Python source can
    (notebook("import torch", f"{GRAD}\nname = 'LONE'\nw.numpy()").replace("LONE", "\\ud800"),
     "cell 2: a lone surrogate (\\ud800) at 2:9, which Python source cannot hold"),
    (notebook("import torch", f"{GRAD}\n\0\nw.numpy()"),
     "cell 2: a NUL character at 2:1, which Python source cannot hold"),
    (notebook("import torch", "name = '\0'"), "cell 2: a NUL character at 1:9, which Python source cannot hold"),
])
def test_a_broken_notebook_gives_one_line_and_exit_2_and_is_left_alone(tmp_path, capsys, content, reason):
    path = tmp_path / "broken.ipynb"
    path.write_text(content)
    for command in (main, fix_main):
        assert command([str(path)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert err[0] == f"{path}: could not parse: {reason}"
        assert len(err) == 1 or err[1].startswith("fixed 0 findings")
    assert path.read_text() == content


def test_notebooks_in_folders_are_linted_unless_include_leaves_them_out(tmp_path, capsys):
    (tmp_path / "nb.ipynb").write_text(notebook("import torch", GRAD, "w.numpy()"))
    (tmp_path / "script.py").write_text(f"import torch\n{GRAD}\nw.numpy()\n")
    (tmp_path / "script.pyw").write_text(f"import torch\n{GRAD}\nw.numpy()\n")
    assert [line.split(":")[0] for line in lint(capsys, str(tmp_path))[1]] == [
        str(tmp_path / "nb.ipynb"), str(tmp_path / "script.py")]
    (tmp_path / "pyproject.toml").write_text('[tool.np2torch-lint]\ninclude = ["*.py"]\nextend-include = ["*.pyw"]\n')
    assert [line.split(":")[0] for line in lint(capsys, str(tmp_path))[1]] == [
        str(tmp_path / "script.py"), str(tmp_path / "script.pyw")]
    assert lint(capsys, str(tmp_path / "nb.ipynb"))[0] == 1  # a notebook named on the command line is linted


def test_a_notebook_on_standard_input_is_named_by_stdin_filename():
    raw = notebook("import torch", GRAD, "w.numpy()")
    result = run_command("np2torch-lint", "-", "--stdin-filename", "nb.ipynb", stdin=raw.encode())
    assert result.returncode == 1 and result.stdout.decode().startswith("nb.ipynb:cell 3:1:1: NPT001")


def test_the_pre_commit_hooks_take_notebooks():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert hooks.count("types_or: [python, pyi, jupyter]") == 2


def test_the_plain_linter_does_not_import_the_notebook_or_server_code():
    code = ("import sys\nfrom np2torch_lint.cli import main\nmain(['--exit-zero', 'np2torch_lint/engine.py'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('np2torch_lint.notebooks', 'np2torch_lint.server',"
            " 'pygls', 'nbformat', 'lsprotocol'))))")
    result = run_command("python", "-c", code)
    assert result.stdout.decode().strip().splitlines()[-1] == "[]"
