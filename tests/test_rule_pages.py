"""--explain and `rule`: every rule's page, from the installed package, including a real wheel (not only this
editable checkout); docs/rules stays the pages' one copy."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from np2torch_lint.cli import main
from np2torch_lint.engine import analyse_text
from np2torch_lint.rules import RULES_BY_CODE

from helpers import REPO, run_main

DOCS = REPO / "docs" / "rules"


@pytest.mark.parametrize("code", list(RULES_BY_CODE))
def test_explain_prints_the_rule_page(capsys, code):
    page = (DOCS / f"{code}.md").read_text(encoding="utf-8")
    assert run_main(main, capsys, "--explain", code) == (0, page, "")
    assert run_main(main, capsys, "rule", code.lower()) == (0, page, "")


def test_rule_all_is_a_table_of_every_rule(capsys):
    code, out, err = run_main(main, capsys, "rule", "--all")
    lines = out.splitlines()
    assert (code, err) == (0, "") and lines[0].split() == ["code", "name", "summary"]
    assert [line.split()[:2] for line in lines[1:]] == [[c, rule.name] for c, rule in RULES_BY_CODE.items()]
    assert all(line.endswith(rule.summary) for line, rule in zip(lines[1:], RULES_BY_CODE.values()))
    code, out, _ = run_main(main, capsys, "rule", "--all", "--output-format", "json")
    assert [item["code"] for item in json.loads(out)] == list(RULES_BY_CODE)
    assert json.loads(out)[0]["explanation"] == (DOCS / "NPT001.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv", [["--explain", "NPT999"], ["rule", "E501"], ["rule"], ["rule", "NPT001", "--all"]])
def test_unknown_rules_and_bad_rule_arguments_are_usage_errors(capsys, argv):
    code, out, err = run_main(main, capsys, *argv)
    assert code == 2 and out == "" and "error: " in err.splitlines()[-1]


def test_a_path_named_like_a_subcommand_is_linted_with_check_or_dot_slash(capsys, tmp_path, monkeypatch):
    (tmp_path / "rule").mkdir()
    (tmp_path / "rule" / "bad.py").write_text("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n")
    monkeypatch.chdir(tmp_path)
    assert run_main(main, capsys, "check", "rule")[0] == 1
    assert run_main(main, capsys, "./rule")[0] == 1


def test_the_package_pages_are_the_docs_pages():
    """np2torch_lint/rule_docs is a link to docs/rules: one copy, which setuptools ships."""
    link = REPO / "np2torch_lint" / "rule_docs"
    assert link.is_symlink() and link.resolve() == DOCS.resolve()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of this checkout (so the build leaves nothing behind in it)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "np2torch_lint", source / "np2torch_lint", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(DOCS, source / "docs" / "rules")
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(out), str(source)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    [built] = out.glob("*.whl")
    return built


def test_the_wheel_holds_every_rule_page(wheel):
    with zipfile.ZipFile(wheel) as archive:
        pages = {name for name in archive.namelist() if name.startswith("np2torch_lint/rule_docs/")}
        assert pages == {f"np2torch_lint/rule_docs/{code}.md" for code in RULES_BY_CODE}
        for code in RULES_BY_CODE:
            assert archive.read(f"np2torch_lint/rule_docs/{code}.md").decode() == (DOCS / f"{code}.md").read_text(
                encoding="utf-8")


def test_explain_works_from_the_installed_wheel(wheel, tmp_path):
    """The wheel unpacked is what pip installs; run from it, far from this checkout and its docs/."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # -S: no .pth files, so this checkout's editable install cannot answer for np2torch_lint; the dependencies
    # come from this environment's site-packages, after the unpacked wheel
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]])}

    def python(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-S", *args], capture_output=True, text=True, cwd=tmp_path, env=env)

    where = python("-c", "import np2torch_lint.rule_docs as d, np2torch_lint as p; print(p.__file__, *d.__path__)")
    assert all(Path(path).is_relative_to(site) for path in where.stdout.split()), where.stdout + where.stderr
    for code in RULES_BY_CODE:
        result = python("-m", "np2torch_lint", "--explain", code)
        assert (result.returncode, result.stderr) == (0, "")
        assert result.stdout == (DOCS / f"{code}.md").read_text(encoding="utf-8")
    table = python("-m", "np2torch_lint", "rule", "--all")
    assert table.returncode == 0 and len(table.stdout.splitlines()) == len(RULES_BY_CODE) + 1


def _caller_example(page: str) -> str:
    """The Python block under a page's "### Through a caller" heading."""
    section = page.split("\n### Through a caller\n", 1)[1]
    return section.split("```python\n", 1)[1].split("\n```", 1)[0] + "\n"


@pytest.mark.parametrize("code", list(RULES_BY_CODE))
def test_every_rule_page_shows_a_finding_that_holds_through_a_caller(code):
    example = _caller_example((DOCS / f"{code}.md").read_text(encoding="utf-8"))
    marked = [number for number, line in enumerate(example.splitlines(), start=1) if f"# {code}" in line]
    found = [d for d in analyse_text(example, "example.py", codes={code}).diagnostics if d.code == code]
    assert [d.line for d in found] == marked, found
    helpers = re.findall(r"^def (\w+)\(", example, flags=re.M)
    lines = example.splitlines()
    for finding in found:  # the message names the caller, or the finding is at the call of the helper (NPT005)
        at_the_call = any(f"{name}(" in lines[finding.line - 1] for name in helpers)
        assert "(through the call of " in finding.message or at_the_call, finding
