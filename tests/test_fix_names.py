"""Fixes change only the expressions they report: the names they write clash with nothing the file binds, and
the imports they add go where isort puts them."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import isort
import libcst as cst
import pytest
from libcst.metadata import ClassScope, ComprehensionScope, FunctionScope, GlobalScope, MetadataWrapper, ScopeProvider

from np2torch_lint.fix_imports import Binding, NameUses
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle

from helpers import FIXTURES, REPO, run_programs

CLASHES = sorted((REPO / "tests" / "data" / "clashes").glob("*.py"))
EXECUTABLE = sorted((REPO / "tests" / "data" / "executable").glob("*.py"))
# isort's default profile, with the libraries a user's project sees as third-party said so
ISORT = isort.Config(known_third_party=["torch", "numpy", "np2torch_lint"], known_first_party=["mypkg"])


@pytest.fixture(scope="module")
def clash_runs(tmp_path_factory) -> dict[tuple[str, FixStyle], tuple[str, tuple, tuple]]:
    """Each clash program fixed in each style, run before and after (all in one interpreter)."""
    folder = tmp_path_factory.mktemp("clashes")
    fixed: dict[tuple[str, FixStyle], tuple[str, Path]] = {}
    for program in CLASHES:
        for style in FixStyle:
            outcome = fix_text(program.read_text(), program.name, style=style, unsafe=True)
            assert outcome.fixed >= 1, f"{program.name} must have a fix for this test to mean anything"
            path = folder / f"{program.stem}_{style.value}.py"
            path.write_text(outcome.text)
            fixed[(program.stem, style)] = (outcome.text, path)
    runs = run_programs([*CLASHES, *(path for _, path in fixed.values())])
    return {key: (text, runs[str(REPO / "tests" / "data" / "clashes" / f"{key[0]}.py")], runs[str(path)])
            for key, (text, path) in fixed.items()}


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("program", CLASHES, ids=lambda p: p.stem)
def test_a_fix_next_to_a_name_like_its_helper_runs_the_same(clash_runs, program, style):
    fixed, (ran_before, before, error_before), (ran_after, after, error_after) = clash_runs[(program.stem, style)]
    assert ran_before, error_before
    assert ran_after, error_after
    assert after == before and before
    if style is FixStyle.HELPERS and "from np2torch_lint.runtime import" in fixed:
        imported = fixed.split("from np2torch_lint.runtime import")[1].split("\n")[0].split(",")
        assert not any(name.strip() in program.read_text() for name in imported)


RUNTIME_TO_NUMPY = "np2torch_lint.runtime.to_numpy"
NAME_FORMS = {
    "import": "from mylib import to_numpy\n",
    "import as": "import mylib as to_numpy\n",
    "def": "def to_numpy(x):\n    return x\n",
    "class": "class to_numpy:\n    pass\n",
    "assignment": "to_numpy = 1\n",
    "tuple assignment": "a, (b, to_numpy) = 1, (2, 3)\n",
    "annotated assignment": "to_numpy: int = 1\n",
    "augmented assignment": "to_numpy += 1\n",
    "walrus": "if (to_numpy := 3):\n    pass\n",
    "for target": "for to_numpy in range(3):\n    pass\n",
    "with target": "with open('f') as to_numpy:\n    pass\n",
    "except target": "try:\n    pass\nexcept Exception as to_numpy:\n    pass\n",
    "comprehension variable": "squares = [to_numpy for to_numpy in range(3)]\n",
    "parameter": "def f(to_numpy):\n    return 1\n",
    "lambda parameter": "f = lambda to_numpy: 1\n",
    "global": "def f():\n    global to_numpy\n",
    "nonlocal": "def f():\n    to_numpy = 1\n    def g():\n        nonlocal to_numpy\n",
    "del": "del to_numpy\n",
    "match capture": "match x:\n    case [to_numpy]:\n        pass\n",
    "import inside a function": "def f():\n    from np2torch_lint.runtime import to_numpy\n",
    "read with no binding here": "print(to_numpy)\n",
}


@pytest.mark.parametrize("form", NAME_FORMS, ids=list(NAME_FORMS))
def test_every_way_of_binding_a_name_takes_it(form):
    text = "import torch\n" + NAME_FORMS[form]
    use = NameUses(cst.parse_module(text), text, ["to_numpy"]).of("to_numpy")
    assert use.binding is Binding.TAKEN or (use.binding is Binding.BOUND and use.target != RUNTIME_TO_NUMPY)


@pytest.mark.parametrize("text", [
    "import torch\nx.to_numpy()\nf(to_numpy=1)\n# to_numpy\ns = 'to_numpy'\n",
    "import torch\nimport a.to_numpy\nfrom a.b import c\n",
], ids=["attribute, keyword, comment, string", "dotted import part"])
def test_what_binds_nothing_leaves_a_name_free(text):
    assert NameUses(cst.parse_module(text), text, ["to_numpy"]).of("to_numpy").binding is Binding.FREE


def test_the_runtime_own_import_is_reused_and_nothing_else_is():
    text = "from np2torch_lint.runtime import to_numpy\nimport torch\nprint(to_numpy(torch.ones(1)))\n"
    use = NameUses(cst.parse_module(text), text, ["to_numpy"]).of("to_numpy")
    assert (use.binding, use.target) == (Binding.BOUND, "np2torch_lint.runtime.to_numpy")
    lookalike = text.replace("np2torch_lint.runtime", "mylib.runtime")
    assert NameUses(cst.parse_module(lookalike), lookalike, ["to_numpy"]).of("to_numpy").target != use.target


GRAD = "w = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
def test_a_taken_helper_name_is_written_through_a_free_runtime_alias(style):
    text = "import torch\n\nto_numpy = 'mine'\nnpt_runtime = 'also mine'\n" + GRAD
    fixed = fix_text(text, "x.py", style=style).text
    if style is FixStyle.HELPERS:
        assert "from np2torch_lint import runtime as npt_runtime_\n" in fixed
        assert "print(npt_runtime_.to_numpy(w))" in fixed
    assert "to_numpy = 'mine'\nnpt_runtime = 'also mine'\n" in fixed
    compile(fixed, "x.py", "exec")


def test_a_module_name_used_for_something_else_gets_an_import_of_its_own():
    text = "import torch\n\n\ndef f(np):\n    return np\n\n\nitems = [torch.from_numpy(a).cuda() for a in arrays]\n"
    fixed = fix_text(text, "x.py", style=FixStyle.INLINE, unsafe=True).text
    assert "import numpy\n" in fixed and "numpy.stack(arrays)" in fixed  # np is a parameter's: the next name
    assert "def f(np):\n    return np\n" in fixed


ISORT_CLEAN = {
    "third-party section": 'import os\nimport sys\n\nimport numpy as np\nimport torch\n\nimport mypkg\n\n',
    "docstring and __future__": '"""Doc."""\n\nfrom __future__ import annotations\n\nimport torch\n\n',
    "standard library only before": "import os\n\nimport torch\n\n",
    "runtime import to merge": "import numpy as np\nimport torch\nfrom np2torch_lint.runtime import from_numpy\n\n",
    "comment above an import": "import os\n\n# the model\nimport torch\n\n",
    "local imports": "import torch\n\nfrom . import sibling\n\n",
    "type checking and try blocks": ("from typing import TYPE_CHECKING\n\nimport torch\n\nif TYPE_CHECKING:\n"
                                     "    import numpy\ntry:\n    import scipy\nexcept ImportError:\n"
                                     "    scipy = None\n\n"),
}
BODY = ("w = torch.ones(2, requires_grad=True)\nprint(w.numpy())\nt = torch.from_numpy(np.random.rand(3))\n"
        "items = [torch.from_numpy(a).cuda() for a in [np.zeros(2)]]\n")


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("head", ISORT_CLEAN, ids=list(ISORT_CLEAN))
def test_an_isort_clean_file_stays_isort_clean(head, style):
    text = ISORT_CLEAN[head] + ("" if "numpy as np" in ISORT_CLEAN[head] else "np = None\n") + BODY
    assert isort.check_code(text, config=ISORT)
    fixed = fix_text(text, "x.py", style=style, unsafe=True).text
    assert fixed != text
    assert isort.check_code(fixed, config=ISORT, show_diff=True), fixed
    lines = fixed.splitlines()
    if "if TYPE_CHECKING:" in text:  # never inside a TYPE_CHECKING or try block
        block = lines[lines.index("if TYPE_CHECKING:"):lines.index("    scipy = None")]
        assert not any("np2torch_lint" in line or "npt_" in line for line in block)


# --- every name bound before a fix means the same after it ------------------------------------------------


def resolved_names(text: str) -> dict[tuple[str, str], set[str]]:
    """(scope, name) -> what each read of that name resolves to, for every name read in the module."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    scopes = {scope for scope in wrapper.resolve(ScopeProvider).values() if scope is not None}
    resolved: dict[tuple[str, str], set[str]] = defaultdict(set)
    for scope in scopes:
        for access in scope.accesses:
            for assignment in access.referents:
                node = getattr(assignment, "node", None)
                where = wrapper.module.code_for_node(node).strip() if isinstance(node, cst.CSTNode) else "builtin"
                kind = type(node).__name__ if node is not None else "builtin"
                resolved[(_scope_key(scope), access.node.value)].add(f"{kind}: {where[:80]}")
    return resolved


def _scope_key(scope) -> str:
    parts = []
    while scope is not None and not isinstance(scope, GlobalScope):
        if isinstance(scope, (FunctionScope, ClassScope)):
            parts.append(getattr(scope.node, "name", cst.Name("lambda")).value)
        elif isinstance(scope, ComprehensionScope):
            parts.append("<comprehension>")
        scope = scope.parent
    return ".".join(reversed(parts)) or "<module>"


def changed_names(before: str, after: str) -> list[tuple[str, str]]:
    """Names read before the fix that resolve to something else after it."""
    old, new = resolved_names(before), resolved_names(after)
    return [key for key in old if key in new and new[key] != old[key]]


CORPUS = sorted(FIXTURES.glob("*.py")) + EXECUTABLE + CLASHES


@pytest.mark.parametrize("style", list(FixStyle), ids=lambda s: s.value)
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_every_name_means_the_same_after_the_fix(path, style):
    before = path.read_text(encoding="utf-8")
    after = fix_text(before, path.name, style=style, unsafe=True).text
    assert after != before
    assert changed_names(before, after) == []


def test_the_name_check_catches_a_clashing_import():
    before = (REPO / "tests" / "data" / "clashes" / "loop_variable.py").read_text()
    clashing = "from np2torch_lint.runtime import to_numpy\n" + before.replace(
        "(x * 2).numpy()", "to_numpy(x * 2)")
    assert changed_names(before, clashing) == [("<module>", "to_numpy")]
