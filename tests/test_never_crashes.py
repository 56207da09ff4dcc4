"""The analysis never crashes: on a valid program (hypothesmith writes them, as in flake8-bugbear's tests), on
real files mutated into broken ones, and over a cache damaged at random."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from np2torch_lint.engine import lint_text
from np2torch_lint.files import SourceError

REPO = Path(__file__).resolve().parents[1]

PRELUDE = "import torch\nimport numpy as np\nfrom torch import nn\n"


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles odd programs itself
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_any_valid_program_lints_without_crashing(source):
    try:
        lint_text(PRELUDE + source, "generated.py")
    except SourceError:
        pass  # LibCST may reject what Python accepts; that is a message, not a crash


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles odd programs itself
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_any_syntax_tree_lints_without_crashing(source):
    try:
        lint_text(PRELUDE + source, "generated.py")
    except SourceError:
        pass


# -- mutated real files: lines deleted, tokens inserted, text truncated

#: real files to mutate: the fixtures and the package's own modules
REAL_FILES = sorted([*(REPO / "fixtures").glob("*.py"), *(REPO / "np2torch_lint" / "rules").glob("*.py"),
                     *(REPO / "np2torch_lint" / "analysis").glob("*.py")])
TOKENS = ["(", ")", "[", "]", "{", "}", ":", ",", "=", "*", "**", "@", "\\\n", "'", '"""', "#", "\t", " ", "\n",
          "lambda", "yield", "await", "async ", "not ", "if ", "else", "for x in ", ".numpy()", "torch.tensor(",
          "np.asarray(", ".cuda()", "with torch.no_grad():\n", "global w\n", "del w\n", "return", "\0", "\ufeff"]
#: how many mutated programs a test run lints (NP2TORCH_FUZZ=10000 for a long run)
MUTATIONS = int(os.environ.get("NP2TORCH_FUZZ", "120"))


def mutated(rng: random.Random) -> str:
    text = rng.choice(REAL_FILES).read_text(encoding="utf-8")
    for _ in range(rng.randint(1, 3)):
        how = rng.choice(("delete lines", "insert a token", "truncate"))
        lines = text.splitlines(keepends=True)
        if how == "delete lines" and lines:
            start = rng.randrange(len(lines))
            del lines[start:start + rng.randint(1, 5)]
            text = "".join(lines)
        elif how == "insert a token":
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        else:
            text = text[:rng.randint(0, len(text))]
    return text


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_mutated_real_files_lint_without_crashing():
    for seed in range(MUTATIONS):
        text = mutated(random.Random(seed))
        try:
            lint_text(text, "mutated.py")
        except SourceError:
            pass  # one line for the user, as for any file that does not parse
        except Exception as error:  # noqa: BLE001 - reported with the seed that made it
            pytest.fail(f"seed {seed}: {type(error).__name__}: {error}")


# -- corrupted cache entries

CACHE_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/data.py": "import numpy as np\n\n\ndef load():\n    return np.random.rand(3)\n",
    "pkg/train.py": ("import torch\nfrom .data import load\n\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
                     "t = torch.from_numpy(load())\n"),
}
#: how many times a test run damages the cache (NP2TORCH_CACHE_FUZZ=2000 for a long run)
CACHE_DAMAGES = int(os.environ.get("NP2TORCH_CACHE_FUZZ", "40"))
_ODD_VALUES = [None, True, 0, -1, 10**30, 1.5, "", "x", [], [1, 2, 3], {}, {"k": "tensor"}, [[[[]]]], "\ud800"]


def _damage(rng: random.Random, text: str) -> str:
    """A cache entry damaged as disks and other programs damage files, or as another build might write it."""
    how = rng.randrange(5)
    if how == 0:
        return text[:rng.randint(0, len(text))]
    if how == 1:
        at = rng.randrange(len(text))
        return text[:at] + chr(rng.randrange(1, 0x2FF)) + text[at + 1:]
    if how == 2:
        return rng.choice(["", "null", "[", "[" * 100_000, "{" * 5000, '{"format": 3}', "\ufeff{}"])
    entry = json.loads(text)
    places: list[tuple[object, object]] = []

    def collect(node: object) -> None:
        if isinstance(node, dict):
            places.extend((node, key) for key in node)
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            places.extend((node, index) for index in range(len(node)))
            for value in node:
                collect(value)

    collect(entry)
    if not places:
        return json.dumps(rng.choice(_ODD_VALUES))
    holder, key = rng.choice(places)
    if how == 3 and isinstance(holder, dict):
        del holder[key]
    else:
        holder[key] = rng.choice(_ODD_VALUES)  # type: ignore[index]
    return json.dumps(entry)


def test_a_damaged_cache_never_crashes_a_run_nor_changes_its_findings(tmp_path):
    from np2torch_lint.commands import Performance, lint
    from np2torch_lint.config import load_settings
    from np2torch_lint.project.cache import Cache

    root = tmp_path / "project"
    for name, text in CACHE_PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    settings = load_settings(root / "pyproject.toml")
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")

    def findings(performance: Performance) -> list[tuple[str, int, str, str]]:
        report, errors = lint([str(root)], settings, performance=performance)
        assert errors == []
        return sorted((Path(f.diagnostic.filename).name, f.diagnostic.line, f.diagnostic.code, f.diagnostic.message)
                      for f in report.findings)

    expected = findings(Performance())
    assert {code for _, _, code, _ in expected} == {"NPT001", "NPT004"}
    assert findings(cached) == expected
    entries = sorted((tmp_path / "cache").glob("*/*.json"))
    rng = random.Random(0)
    for round_number in range(CACHE_DAMAGES):
        damaged = rng.sample(entries, rng.randint(1, len(entries)))
        for entry in damaged:
            entry.write_text(_damage(rng, entry.read_text(encoding="utf-8")), encoding="utf-8", errors="surrogatepass")
        assert findings(cached) == expected, f"round {round_number}"
        for entry in entries:  # each damaged entry was written anew, whole
            path = Path(json.loads(entry.read_text(encoding="utf-8"))["path"])
            assert Cache._problem(json.loads(entry.read_text(encoding="utf-8")), path) is None, f"round {round_number}"
