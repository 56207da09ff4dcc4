"""Bad input gets one clear line, no traceback, exit 2, and the other files are still linted."""

from __future__ import annotations

import json
import os

import jsonschema
import libcst as cst
import pytest

from np2torch_lint import engine, parsing
from np2torch_lint.cli import main
from np2torch_lint.internal_errors import InternalError

from helpers import REPO

GOOD = "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"


def lint(capsys, *paths) -> tuple[int, str, list[str]]:
    code = main([str(p) for p in paths])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err.splitlines()


@pytest.mark.parametrize(("content", "reason"), [
    (b"import torch\ndef broken(:\n    pass\n", "could not parse: invalid syntax at 2:12"),
    (b"import torch\nx = '\xff\xfe'\n", "could not parse: not valid utf-8: invalid start byte at 2:6"),
    (b"# -*- coding: latin-9000 -*-\nimport torch\n", "could not parse: unknown encoding"),
    (b"\x7fELF\x00\x01\x02torch", "could not parse: binary file"),
    (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nimport torch\n", "could not parse: encoding problem"),
])
def test_unreadable_file_is_reported_and_the_run_goes_on(write, capsys, content, reason):
    bad = write("bad.py", content)
    good = write("good.py", GOOD)
    before = bad.read_bytes()
    code, out, err = lint(capsys, bad, good)
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"{bad}: {reason}"), err
    assert "good.py:3:1: NPT001" in out
    assert bad.read_bytes() == before


def test_parse_error_names_the_position(write, capsys):
    bad = write("bad.py", "import torch\n\nx = (1,\n")
    code, _, err = lint(capsys, bad)
    assert code == 2 and err[0].startswith(f"{bad}: could not parse: ") and " at " in err[0]


def test_missing_path(capsys, tmp_path):
    code, _, err = lint(capsys, tmp_path / "nope.py")
    assert code == 2 and err == [f"{tmp_path / 'nope.py'}: could not read: no such file or directory"]


def test_symlink_loop_is_reported_once_and_the_walk_finishes(write, capsys, tmp_path):
    write("tree/good.py", GOOD)
    os.symlink(tmp_path / "tree", tmp_path / "tree" / "loop")
    os.symlink(tmp_path / "tree" / "b", tmp_path / "tree" / "a")
    os.symlink(tmp_path / "tree" / "a", tmp_path / "tree" / "b")
    code, out, err = lint(capsys, tmp_path / "tree")
    assert code == 2
    assert out.count("NPT001") == 1
    assert any("loop" in line and "tree/loop" in line for line in err)
    assert any("tree/a" in line for line in err)


@pytest.mark.parametrize(("content", "line"), [
    ("\ufeffimport torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n".encode("utf-8"), 3),
    (GOOD.replace("\n", "\r\n").encode(), 3),
    ("# -*- coding: latin-1 -*-\nimport torch\n# caf\u00e9\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"
     .encode("latin-1"), 5),
])
def test_bom_crlf_and_coding_cookie_files_are_linted(write, capsys, content, line):
    code, out, _ = lint(capsys, write("enc.py", content))
    assert code == 1 and f":{line}:1: NPT001" in out


@pytest.mark.parametrize("source", [
    "import torch\nx = " + "[" * 5000 + "]" * 5000 + "\n",  # Python refuses over 200 nested brackets
    "import torch\nx = " + "f(" * 3000 + ")" * 3000 + "\n",
    "import torch\nx = " + "+".join(["a"] * 100_000) + "\n",  # valid Python, 100k levels deep
    "import torch\nx = (" + " +\n".join(["a"] * 100_000) + ")\n",
    "import torch\nx = " + "a." * 20_000 + "b\n",
    "import torch\nx = a" + " + \\\n a" * 100_000 + "\n",  # backslash continuations
    "import torch\r\nx = a" + " + \\\r\n a" * 100_000 + "\r\n",
])
def test_pathological_nesting_gets_a_message_not_a_crash(write, capsys, source):
    bad = write("deep.py", source)
    good = write("good.py", GOOD)
    code, out, err = lint(capsys, bad, good)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"{bad}: could not parse: ")
    assert "NPT001" in out


@pytest.mark.parametrize(("stretch", "checked"), [
    ("x = [" + ", ".join(f"'name_{i}'" for i in range(400)) + "]\n", False),  # a data literal: flat
    ("f(" + ",\n  ".join(f"key_{i}=value_{i}" for i in range(300)) + ")\n", False),  # a long call
    ("s = '" + "x" * 3000 + "'\n", False),  # a long line without operators
    ("x = (" + " +\n".join(["a"] * 600) + ")\n", True),  # a chain hidden in brackets
    ("x = " + " + ".join(["a"] * 800) + "\n", True),  # a chain on one long line
    ("x = [" + ", ".join(f"o.a{i}.b.c" for i in range(200)) + "]\n", True),  # many dots: checked, to be safe
])
def test_only_long_stretches_with_many_nesting_tokens_get_a_second_parse(stretch, checked):
    assert parsing._could_hide_deep_code("import torch\n" + stretch) is checked


def test_moderately_deep_valid_code_is_still_linted(write, capsys):
    chain = "import torch\nw = torch.ones(3, requires_grad=True)\ny = " + " + ".join(["w"] * 700) + "\ny.numpy()\n"
    code, out, _ = lint(capsys, write("chain.py", chain))
    assert code == 1 and ":4:1: NPT001" in out


@pytest.mark.parametrize("operator", ["+", "*", "|", "**"])
def test_a_long_flat_chain_of_operators_that_python_compiles_is_linted(write, capsys, operator):
    terms = f" {operator} ".join(["w"] * 1000)
    compile(terms, "<chain>", "eval")  # CPython takes it
    chain = f"import torch\nw = torch.ones(3, requires_grad=True)\ny = {terms}\ny.numpy()\n"
    code, out, err = lint(capsys, write("chain.py", chain))
    assert (code, err) == (1, []) and ":4:1: NPT001" in out


def test_real_nesting_deeper_than_the_limit_is_still_refused(write, capsys):
    deep = write("deep.py", "import torch\nx = " + "not " * 1100 + "w\n")
    code, _, err = lint(capsys, deep)
    assert code == 2 and err == [f"{deep}: could not parse: nested 1104 levels deep; np2torch-lint parses at most 1000"]


def test_a_chain_longer_than_python_compiles_is_refused_with_its_length(write, capsys):
    long = write("long.py", "import torch\nx = " + " + ".join(["w"] * 3500) + "\n")
    code, _, err = lint(capsys, long)
    assert code == 2 and err == [f"{long}: could not parse: a chain of 3500 operands; np2torch-lint parses at most "
                                 "3000, as Python compiles"]


def test_text_with_a_lone_surrogate_is_a_message_not_a_crash():
    with pytest.raises(engine.SourceError, match=r"^a lone surrogate \(\\ud800\) at 2:6, which Python source cannot "
                                                 r"hold$"):
        engine.lint_text("import torch\nx = '\ud800'\n", "editor.py")


def test_a_broken_notebook_gets_one_clear_line_and_is_left_alone(write, capsys):
    notebook = write("nb.ipynb", '{"cells": [{"source": ["import torch\\n", "w.numpy()"]}]')
    before = notebook.read_bytes()
    code, out, err = lint(capsys, notebook, write("good.py", GOOD))
    assert code == 2 and "NPT001" in out
    assert err == [f"{notebook}: could not parse: not a Jupyter notebook: not valid JSON: Expecting ',' delimiter "
                   "at 1:56"]  # the end, where the closing brace is missing
    assert notebook.read_bytes() == before


def test_a_huge_file_is_refused_with_its_size(write, capsys):
    huge = write("huge.py", "import torch\n" + "# padding\n" * 1_200_000)
    code, _, err = lint(capsys, huge)
    assert code == 2 and err == [f"{huge}: could not parse: too large to lint (11.4 MiB; the limit is 10 MiB)"]


def test_a_syntax_error_is_reported_in_a_file_that_never_mentions_the_library(write, capsys):
    bad = write("plain.py", "def broken(:\n    pass\n")
    code, out, err = lint(capsys, bad, write("good.py", GOOD))
    assert code == 2 and "NPT001" in out
    assert err == [f"{bad}: could not parse: invalid syntax at 1:12"]


def test_syntax_this_python_lacks_but_libcst_parses_is_not_an_error(write, capsys):
    """Python's own parser checks files without torch cheaply; LibCST, which knows newer syntax, has the last word."""
    newer = write("newer.py", "type Alias = list[int]\n\n\ndef first[T](items: list[T]) -> T:\n    return items[0]\n")
    assert lint(capsys, newer) == (0, "", [])


# A tab then spaces where the block's other lines use spaces: Python counts the tab to column 8 and accepts it;
# LibCST's native parser refuses it (LibCST issue 829)
MIXED_TABS = ("import torch\n"
              "def f(n):\n"
              "    for t in range(n):\n"
              "\t    w = torch.ones(3, requires_grad=True)\n"
              "\t    y = w.numpy()\n"
              "    return y\n")


def test_indentation_mixing_tabs_and_spaces_that_python_accepts_is_linted_at_its_own_columns(write, capsys):
    mixed = write("mixed.py", MIXED_TABS)
    code, out, err = lint(capsys, mixed)
    assert (code, err) == (1, [])
    assert out.splitlines()[0] == f"{mixed}:5:10: NPT001 .numpy() on a tensor that may require grad raises " \
                                  "RuntimeError: call .detach() first"


def test_indentation_mixing_tabs_and_spaces_is_not_fixed_and_the_file_is_left_alone(write, capsys):
    mixed, good = write("mixed.py", MIXED_TABS), write("good.py", GOOD)
    code, _, err = lint(capsys, "--fix", "--unsafe-fixes", mixed, good)
    assert code == 2
    assert [line for line in err if "mixed.py" in line] == [
        f"{mixed}: could not parse: LibCST cannot parse its indentation, which mixes tabs and spaces as "
        "Python allows: it is linted with the tabs expanded, but cannot be fixed until they are replaced"]
    assert mixed.read_text() == MIXED_TABS and good.read_text() != GOOD


def test_indentation_mixing_tabs_and_spaces_is_not_fixed_where_an_importer_parsed_it_first(write, capsys):
    # in a project the importer's turn parses the module first, with its tabs expanded, and keeps the tree
    write("pyproject.toml", "[tool.np2torch-lint]\n")
    good = write("good.py", "from mixed import f\n" + GOOD)
    mixed = write("mixed.py", MIXED_TABS)
    code, _, err = lint(capsys, "--fix", "--unsafe-fixes", good.parent)
    assert code == 2 and any("mixed.py: could not parse: LibCST cannot parse its indentation" in line for line in err)
    assert mixed.read_text() == MIXED_TABS and good.read_text() != "from mixed import f\n" + GOOD


def test_tabs_in_a_string_stay_as_they_are_where_the_tabs_of_indentation_are_expanded():
    text = MIXED_TABS + 's = """\n\tkept\n"""\n'
    module = parsing.parse(text, tabs_expanded=True)
    assert module.code.splitlines()[3] == " " * 12 + "w = torch.ones(3, requires_grad=True)"
    with pytest.raises(parsing.SourceError):
        parsing.parse(text)


PYTHON_2 = 'import torch\nprint "loss", loss\n'


@pytest.mark.parametrize("command", ["lint", "fix"])
def test_exit_zero_is_honoured_for_a_file_that_does_not_parse_and_the_file_is_still_named(write, capsys, command):
    old = write("legacy/old.py", PYTHON_2)
    good = write("good.py", GOOD)
    argv = ["--fix", "--fix-style", "inline"] if command == "fix" else []
    assert main([*argv, "--no-cache", str(old), str(good)]) == 2  # the documented status without --exit-zero
    capsys.readouterr()
    good.write_text(GOOD)
    assert main([*argv, "--no-cache", "--exit-zero", str(old), str(good)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"{old}: could not parse: Missing parentheses in call to 'print'. Did you mean print(...)? at 2:1" in err


def test_exit_zero_does_not_hide_a_path_that_cannot_be_read(capsys, tmp_path):
    assert main(["--exit-zero", str(tmp_path / "nope.py")]) == 2


@pytest.mark.parametrize("output_format", ["json", "json-lines"])
def test_a_file_that_does_not_parse_is_a_finding_without_a_code_in_the_json_formats(write, capsys, output_format):
    old = write("old.py", PYTHON_2)
    good = write("good.py", GOOD)
    assert main(["--no-cache", "--exit-zero", "--output-format", output_format, str(good), str(old)]) == 0
    out = capsys.readouterr().out
    found = json.loads(out) if output_format == "json" else [json.loads(line) for line in out.splitlines()]
    assert [item["code"] for item in found] == ["NPT001", None]
    assert found[1] == {"code": None, "filename": str(old), "cell": None, "line": 2, "column": 1, "end_line": 2,
                        "end_column": 1, "fix": None,
                        "message": "could not parse: Missing parentheses in call to 'print'. Did you mean print(...)? "
                                   "at 2:1"}


def test_a_file_that_does_not_parse_is_a_result_in_sarif_and_an_issue_in_the_ci_formats(write, capsys, tmp_path,
                                                                                        monkeypatch):
    write("old.py", PYTHON_2)
    write("undecodable.py", b"import torch\nx = '\xff'\n")
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "--exit-zero", "--output-format", "sarif", "old.py", "undecodable.py"]) == 0
    log = json.loads(capsys.readouterr().out)
    schema = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    results = log["runs"][0]["results"]
    assert [(r["message"]["text"].split(":")[0], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [("could not parse", 2), ("could not parse", 2)]
    assert main(["--no-cache", "--exit-zero", "--output-format", "github", "old.py"]) == 0
    assert capsys.readouterr().out.startswith("::error file=old.py,line=2,col=1,endLine=2,endColumn=1,"
                                              "title=syntax-error::could not parse:")
    assert main(["--no-cache", "--exit-zero", "--output-format", "gitlab", "old.py"]) == 0
    [issue] = json.loads(capsys.readouterr().out)
    assert issue["check_name"] == "syntax-error"
    assert issue["location"] == {"path": "old.py", "lines": {"begin": 2, "end": 2}}


class _TooMuchWork(Exception):
    pass


def _values_made(monkeypatch, text: str, budget: int = 200_000) -> int:
    """How many abstract values the analysis of ``text`` makes (stopping past ``budget``)."""
    from np2torch_lint.analysis import values

    made = 0
    plain_init, plain_copy = values.Value.__init__, values._copy_with_changes

    def count() -> None:
        nonlocal made
        made += 1
        if made > budget:
            raise _TooMuchWork

    def counting_init(self, *args, **kwargs):
        count()
        plain_init(self, *args, **kwargs)

    def counting_copy(value, changes):
        count()
        return plain_copy(value, changes)

    monkeypatch.setattr(values.Value, "__init__", counting_init)
    monkeypatch.setattr(values, "_copy_with_changes", counting_copy)
    try:
        engine.lint_text(text, "doubling.py")
    finally:
        monkeypatch.undo()
    return made


@pytest.mark.parametrize("doubling", ["a = (a, a)", "a = [a, a]", "a = a + [a]", "a = [*a, a]", "a = list(zip(a, a))",
                                      "a = [[x, x] for x in (a, a)]", "a = f(a, a)"])
def test_containers_built_from_themselves_cost_what_the_file_is_long(monkeypatch, doubling):
    """Each statement doubles what ``a`` holds; a sequence remembers a bounded tree of its items, so the work grows
    with the lines (it grew with 2 ** lines: 22 of them took 12.7 s and 1.1 GB, 40 over a minute and 4 GB)."""
    def program(lines: int) -> str:
        return ("import torch\nimport numpy as np\n\n\ndef f(*items):\n    return items\n\n\na = np.zeros(3)\n"
                + f"{doubling}\n" * lines + "for x in a:\n    torch.tensor(x)\n")

    twenty, forty = _values_made(monkeypatch, program(20)), _values_made(monkeypatch, program(40))
    assert forty < 2.5 * twenty


def _a_bug_in_the_analysis_of(monkeypatch, name: str) -> None:
    """Our analysis raises on the file called ``name``, as a bug of ours would; other files are analysed."""
    real = engine.findings_for

    def findings_for(module, codes=None, style=None, context=None, filename=None):
        if filename is not None and filename.endswith(name):
            raise KeyError("boom")
        return real(module, codes, style, context, filename)

    monkeypatch.setattr(engine, "findings_for", findings_for)


def test_an_internal_error_is_one_line_whatever_the_exception_prints():
    try:
        {}[cst.parse_expression("f(\n  x,\n  y)")]
    except KeyError as error:
        message = str(InternalError.from_exception(error))
    assert "\n" not in message and len(message) < 240, message
    assert message.startswith("KeyError: Call(") and message.endswith("please report it")


@pytest.mark.parametrize("caching", [["--no-cache"], []])
def test_a_bug_of_ours_in_one_file_is_one_line_and_the_others_are_linted(write, capsys, monkeypatch, caching):
    bad, good = write("bad.py", GOOD), write("good.py", GOOD)
    _a_bug_in_the_analysis_of(monkeypatch, "bad.py")
    code = main([*caching, str(bad), str(good)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert code == 2
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"{bad}: internal error, no findings: KeyError: 'boom' at "), err
    assert err[0].endswith("please report it")
    assert "good.py:3:1: NPT001" in captured.out and "bad.py" not in captured.out
    monkeypatch.undo()  # the bug is fixed: the next run analyses the file again, not a cached failure
    assert main([*caching, str(bad), str(good)]) == 1
    assert "bad.py:3:1: NPT001" in capsys.readouterr().out


def test_a_bug_of_ours_while_fixing_leaves_that_file_unchanged_and_fixes_the_others(write, capsys, monkeypatch):
    bad, good = write("bad.py", GOOD), write("good.py", GOOD)
    _a_bug_in_the_analysis_of(monkeypatch, "bad.py")
    code = main(["--fix", "--unsafe-fixes", str(bad), str(good)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert code == 2
    err = captured.err.splitlines()
    assert [line for line in err if "internal error" in line] == [
        line for line in err if line.startswith(f"{bad}: internal error, file left unchanged: KeyError: 'boom' at ")]
    assert len([line for line in err if "internal error" in line]) == 1, err
    assert bad.read_text() == GOOD and good.read_text() != GOOD


def test_a_bug_of_ours_in_a_worker_reaches_the_parent_as_one_and_is_never_a_cache_entry():
    from np2torch_lint.jobs import FileResult

    failed = FileResult(error="KeyError: 'x' at engine.py:1; please report it", internal=True)
    back = FileResult.from_data(failed.as_data())
    assert back is not None and back.internal and back.error == failed.error
    assert "internal" not in FileResult().as_data()  # what the cache stores keeps its fixed keys
