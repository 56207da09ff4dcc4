"""What ``fix_text`` says is left is what linting its result finds, though a pass whose fixes all applied does
not parse its result again (the tree is the old one with the replacements swapped in, ``fix_tree``)."""

from __future__ import annotations

import libcst
import pytest

from np2torch_lint import fixer, parsing
from np2torch_lint.engine import lint_text
from np2torch_lint.fixer import FixError, fix_text
from np2torch_lint.fixes import FixStyle
from np2torch_lint.noqa import filter_suppressed

from helpers import FIXTURES, REPO

FILES = sorted(FIXTURES.glob("**/*.py")) + sorted((REPO / "tests" / "data" / "executable").glob("*.py"))
GRAD = "import torch\nw = torch.ones(2, requires_grad=True)\n"

CASES = {
    "an import added above every finding": GRAD + "\n\ndef f():\n    return w.numpy()\n\n\nx = w.numpy()\n",
    "several findings on one line": GRAD + "a, b = w.numpy(), w.numpy(); c = w.numpy()  # three\n",
    "a finding through a call, below an added import": (
        "import numpy as np\nimport torch\n\n\ndef f(t):\n    return torch.tensor(t)\n\n\n"
        "w = torch.ones(2, requires_grad=True)\nw.numpy()\nf(np.zeros(3))\n"),
    "an unsafe finding inside a safe fix's target": (
        "import numpy as np\nimport torch\n\nx = torch.tensor(np.zeros(3), requires_grad=True).numpy()\n"
        "y = w = torch.ones(2, requires_grad=True)\nw.numpy()\n"),
    "NPT001 and NPT002 on one .numpy()": (
        "import torch\n\nw = torch.ones(2, requires_grad=True, device='cuda')\nw.numpy()\n"
        "z = w.numpy()  # noqa: NPT002\n"),
    "a suppressed finding beside a fixed one": GRAD + "a = w.numpy(); b = w.numpy()  # noqa\nc = w.numpy()\n",
    "no import block": ('"""Doc."""\n\n\ndef f():\n    import torch\n    w = torch.ones(2, requires_grad=True)\n'
                        "    return w.numpy()\n"),
    "a multi-line target": GRAD + "x = (\n    w\n    .numpy()\n)\ny = torch.tensor(\n    x,\n)\n",
}


def _linted(text: str, filename: str, style: FixStyle) -> list:
    """What the linter reports (``# noqa`` applied, as ``remaining`` has it)."""
    return filter_suppressed(lint_text(text, filename, style=style), text)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_what_is_left_is_what_linting_the_fixed_fixture_finds(path, style, unsafe):
    outcome = fix_text(path.read_text(encoding="utf-8"), str(path), style=style, unsafe=unsafe)
    assert outcome.remaining == _linted(outcome.text, str(path), style)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_what_is_left_is_what_linting_the_fixed_text_finds(text, style, unsafe):
    outcome = fix_text(text, "x.py", style=style, unsafe=unsafe)
    assert outcome.fixed
    assert outcome.remaining == _linted(outcome.text, "x.py", style)


def test_a_message_naming_a_line_names_it_in_the_fixed_text():
    text = CASES["a finding through a call, below an added import"]
    outcome = fix_text(text, "x.py")
    assert outcome.text.count("\n") == text.count("\n") + 1  # the import
    (left,) = outcome.remaining
    assert left.message.endswith("(through the call of f at line 12)") and left.line == 7


@pytest.mark.parametrize("text", [
    GRAD + "".join(f"a{i} = w.numpy()\n" for i in range(50)),
    "import torch\n\n\ndef run():\n    w = torch.ones(2, requires_grad=True)\n"
    + "".join(f"    a{i} = w.numpy()\n" for i in range(50)),  # the import goes right above a long function
], ids=["module level", "in a function"])
def test_a_pass_that_applies_every_fix_does_not_parse_its_result(text, parsed):
    outcome = fix_text(text, "x.py")
    assert outcome.fixed == 50 and not outcome.remaining
    assert parsed[0] == text
    assert outcome.text not in parsed  # only the import block was parsed again
    assert all(len(each) < 100 for each in parsed[1:])


def test_a_pass_that_left_an_overlapping_fix_parses_its_result(parsed):
    text = CASES["NPT001 and NPT002 on one .numpy()"]
    outcome = fix_text(text, "x.py", style=FixStyle.INLINE)
    assert "w.detach().cpu().numpy()" in outcome.text
    assert len([each for each in parsed if len(each) > 60]) >= 2  # the first text and the next pass's


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_tree_of_a_pass_is_what_parsing_its_result_gives(path, style, monkeypatch):
    made = []
    fixed_tree = fixer.fixed_tree

    def recording(module, text, new_text, *args):
        tree = fixed_tree(module, text, new_text, *args)
        made.append((new_text, tree))
        return tree

    monkeypatch.setattr(fixer, "fixed_tree", recording)
    fix_text(path.read_text(encoding="utf-8"), str(path), style=style, unsafe=True)
    for new_text, tree in made:
        if tree is not None:
            assert tree.code == new_text
            assert tree.deep_equals(libcst.parse_module(new_text))


@pytest.mark.parametrize("broken", ["w.numpy()(", "w.numpy() +"])
def test_a_fix_that_breaks_the_code_is_refused(broken, monkeypatch):
    spliced = fixer._spliced
    monkeypatch.setattr(fixer, "_spliced", lambda text, edits: spliced(text, edits) + broken + "\n")
    with pytest.raises(FixError, match="does not parse"):
        fix_text(GRAD + "x = w.numpy()\n", "x.py")


def test_a_fix_that_makes_the_file_too_large_is_refused(monkeypatch):
    monkeypatch.setattr(parsing, "MAX_SOURCE_CHARS", 100)
    text = GRAD + "x = w.numpy()\n" * 3
    assert len(text) < 100
    with pytest.raises(FixError, match="too large"):
        fix_text(text, "x.py")


def test_code_too_deep_for_pythons_parser_is_checked_statement_by_statement(monkeypatch, parsed):
    # Python's parser gives up on an elif chain this long (MemoryError); LibCST parses it
    text = GRAD + "if flag == 0:\n    a = w.numpy()\n" + "".join(
        f"elif flag == {i}:\n    a = w.numpy()\n" for i in range(1, 6500))
    checked: list[str] = []
    python_accepts = parsing.python_accepts
    monkeypatch.setattr(fixer, "python_accepts", lambda code: checked.append(code) or python_accepts(code))
    outcome = fix_text(text, "chain.py", style=FixStyle.INLINE)
    assert outcome.fixed == 6500 and not outcome.remaining
    assert outcome.text.count("a = w.detach().numpy()") == 6500
    assert outcome.text not in parsed
    assert checked == [outcome.text, "a = w.detach().numpy()\n" * 6500]  # the changed lines, side by side
