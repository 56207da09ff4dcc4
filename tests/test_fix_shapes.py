"""Fixes on the shapes real and generated code has: deep nesting, multi-line calls, redundant calls, legacy
constructors whose dtype depends on torch's default."""

from __future__ import annotations

import pytest

from np2torch_lint.diagnostics import Applicability
from np2torch_lint.engine import analyse_text, lint_text
from np2torch_lint.files import SourceError
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

GRAD = "import torch\nw = torch.ones(2, requires_grad=True)\n"


def elif_chain(branches: int) -> str:
    lines = [GRAD + "if flag == 0:\n    a = w.numpy()\n"]
    lines += [f"elif flag == {i}:\n    a = w.numpy()  # branch {i}\n" for i in range(1, branches)]
    return "".join(lines)


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
def test_an_elif_chain_of_2000_branches_is_fixed(style):
    text = elif_chain(2000)
    outcome = fix_text(text, "chain.py", style=style)
    assert outcome.fixed == 2000 and not outcome.remaining
    assert outcome.text.count("# branch") == 1999
    compile(outcome.text, "chain.py", "exec")


@pytest.mark.parametrize("text", [
    GRAD + "x = " + "(" * 150 + "w" + ")" * 150 + ".numpy()\n",  # deep brackets
    GRAD + "x = w" + ".clone()" * 450 + ".numpy()\n",  # a long method chain (two levels each)
    GRAD + "x = (w" + " + w" * 900 + ").numpy()\n",  # a long operator chain
    GRAD + "def f():\n" + "".join("    " * (d + 1) + f"if c{d}:\n" for d in range(90))
    + "    " * 91 + "return w.numpy()\n",  # deep blocks
], ids=["brackets", "method chain", "operator chain", "blocks"])
def test_deep_code_is_fixed_without_a_recursion_error(text):
    outcome = fix_text(text, "deep.py", style=FixStyle.INLINE)
    assert outcome.fixed == 1
    compile(outcome.text, "deep.py", "exec")


def test_code_beyond_the_nesting_limit_gets_one_line_not_a_traceback():
    text = GRAD + "x = w" + " + w" * 20_000 + "\n"
    for run in (lambda: lint_text(text, "deep.py"), lambda: fix_text(text, "deep.py")):
        with pytest.raises(SourceError) as raised:
            run()
        assert "\n" not in str(raised.value)


def test_many_findings_in_one_statement_are_all_fixed_at_once():
    text = GRAD + "rows = [" + ", ".join(["w.numpy()"] * 3000) + "]  # noqa: NPT002\n"
    outcome = fix_text(text, "many.py", style=FixStyle.INLINE)
    assert outcome.fixed == 3000 and outcome.text.count("w.detach().numpy()") == 3000


MULTI_LINE = {
    "trailing comma and comment": (
        "t = torch.as_tensor(\n    np.zeros(3),   # and me\n)\n",
        "t = torch.as_tensor(\n    np.zeros(3),   # and me\n    dtype=torch.float32,\n)\n"),
    "no trailing comma": (
        "t = torch.as_tensor(\n    np.zeros(3)  # me\n)\n",
        "t = torch.as_tensor(\n    np.zeros(3),  # me\n    dtype=torch.float32\n)\n"),
    "one per line, indented": (
        "def f():\n    return torch.as_tensor(\n        np.zeros(3),\n        device='cpu',  # where\n    )\n",
        "def f():\n    return torch.as_tensor(\n        np.zeros(3),\n        device='cpu',  # where\n"
        "        dtype=torch.float32,\n    )\n"),
    "comment line before the bracket": (
        "t = torch.as_tensor(\n    np.zeros(3),\n    # last\n)\n",
        "t = torch.as_tensor(\n    np.zeros(3),\n    dtype=torch.float32,\n    # last\n)\n"),
    "one line": ("t = torch.as_tensor(np.zeros(3))\n", "t = torch.as_tensor(np.zeros(3), dtype=torch.float32)\n"),
}


@pytest.mark.parametrize("case", MULTI_LINE, ids=list(MULTI_LINE))
def test_an_added_keyword_follows_the_layout_of_the_call(case):
    before, after = MULTI_LINE[case]
    head = "import numpy as np\nimport torch\n\n"
    assert fix_text(head + before, "x.py", style=FixStyle.INLINE, unsafe=True).text == head + after


@pytest.mark.parametrize(("before", "after"), [
    ("print(w.cpu().numpy())", "print(to_numpy(w))"),
    ("print(np.asarray(w.cpu()))", "print(to_numpy(w))"),
    ("print(w.cpu().cpu().numpy())", "print(to_numpy(w))"),
    ("print(w.detach().numpy())", None),  # not flagged: detached
    ("print(w.to('cpu', non_blocking=True).numpy())", "print(to_numpy(w.to('cpu', non_blocking=True)))"),
])
def test_a_copy_to_the_host_that_to_numpy_makes_anyway_is_folded(before, after):
    text = "import numpy as np\n" + GRAD + before + "\n"
    fixed = fix_text(text, "x.py").text
    assert fixed.endswith((after if after is not None else before) + "\n")


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
def test_a_cast_to_the_dtype_a_fix_asks_for_is_folded(style):
    text = "import numpy as np\nimport torch\nt = torch.FloatTensor(np.zeros(3)).float()\n"
    fixed = fix_text(text, "x.py", style=style).text
    conversion = "from_numpy" if style is FixStyle.HELPERS else "torch.as_tensor"
    assert fixed.endswith(f"t = {conversion}(np.zeros(3), dtype=torch.float32)\n")
    kept = text.replace(".float()", ".double()")  # a cast to another dtype is the user's
    assert fix_text(kept, "x.py", style=style).text.endswith("dtype=torch.float32).double()\n")


def legacy_fix(text: str, style: FixStyle = FixStyle.INLINE):
    findings = analyse_text("import numpy as np\nimport torch\n" + text, "x.py", style=style).findings
    (finding,) = [f for f in findings if f.code == "NPT009"]
    return finding.fix


def test_a_legacy_constructor_fix_says_what_it_assumes_of_the_default_dtype():
    default = legacy_fix("t = torch.Tensor(np.zeros(3))\n")
    assert default.applicability is Applicability.SAFE and "assumes torch's default dtype is float32" in default.title
    fixed_dtype = legacy_fix("t = torch.FloatTensor(np.zeros(3))\n")
    assert fixed_dtype.applicability is Applicability.SAFE and "assumes" not in fixed_dtype.title
    changed_default = legacy_fix("torch.set_default_dtype(torch.float64)\nt = torch.Tensor(np.zeros(3))\n")
    assert changed_default.applicability is Applicability.UNSAFE
    # torch.FloatTensor itself makes CPU float32 whatever the default; in a program that changes the default,
    # every legacy fix is still classed unsafe (issue 8), which can never break code
    conservative = legacy_fix("torch.set_default_dtype(torch.float64)\nt = torch.FloatTensor(np.zeros(3))\n")
    assert conservative.applicability is Applicability.UNSAFE and "this file changes" in conservative.title


@pytest.mark.parametrize(("constructor", "source", "safe_in_helpers"), [
    ("FloatTensor", "np.zeros(3)", True),  # float64 -> float32: one rounding in NumPy and torch
    ("HalfTensor", "np.zeros(3)", False),  # float64 -> float16: NumPy rounds once, torch twice
    ("IntTensor", "np.zeros(3)", False),  # float -> int: NaN and overflow differ, NumPy warns
    ("DoubleTensor", "np.zeros(3, dtype=np.int64)", True),
])
def test_a_legacy_fix_through_numpy_is_safe_only_where_numpy_casts_alike(constructor, source, safe_in_helpers):
    helpers = legacy_fix(f"t = torch.{constructor}({source})\n", FixStyle.HELPERS)
    assert (helpers.applicability is Applicability.SAFE) is safe_in_helpers
    assert legacy_fix(f"t = torch.{constructor}({source})\n").applicability is Applicability.SAFE


FORM_FEEDS = {  # Emacs's page breaks: a form feed in a line's indentation, where Python counts columns afresh
    "before a statement": GRAD + "\fx = w.numpy()\n",
    "in a block's first line": GRAD + "def f():\n\f    a = w.numpy()\n    b = w.numpy()\n",
    "in a later line": GRAD + "def f():\n    a = w.numpy()\n\f    b = w.numpy(); c = w.numpy()\n",
    "after spaces: a dedent": GRAD + "def f():\n    a = 1\n    \fb = w.numpy()\n",
    "in brackets": GRAD + "if True:\n\f  x = [w.numpy(),\n\f       w.numpy()]\n",
}


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("text", FORM_FEEDS.values(), ids=FORM_FEEDS.keys())
def test_form_feeds_in_indentation_give_pythons_columns_and_the_fix_is_applied(text, style):
    import ast

    calls = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Call) and node.args == []
             and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"]
    expected = sorted((node.lineno, node.col_offset + 1, node.end_lineno, node.end_col_offset + 1) for node in calls)
    found = sorted((d.line, d.column, d.end_line, d.end_column) for d in lint_text(text, "pages.py"))
    assert found == expected
    outcome = fix_text(text, "pages.py", style=style)
    assert outcome.fixed == len(calls) and not outcome.remaining
    assert outcome.text.count("\f") == text.count("\f")
    compile(outcome.text, "pages.py", "exec")
