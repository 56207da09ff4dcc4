"""Project-wide analysis: summaries of other modules, project facts, import cycles, modules that do not parse."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from np2torch_lint.engine import LintContext, analyse_text, lint_text
from np2torch_lint.files import read_source
from np2torch_lint.project import Project

from helpers import REPO

PROJECTS = REPO / "tests" / "data" / "projects"
EXPECTATION = re.compile(r"#\s*(NPT\d{3}(?:\s*,\s*NPT\d{3})*)\s*$")
CASES = [("relative", "pkg/train.py"), ("srclayout", "scripts/run.py"), ("buffers", "sample_check.py"),
         ("defaults", "load_data.py"), ("cycle", "a.py"), ("broken", "good.py")]


def expected(path: Path) -> Counter:
    found: Counter = Counter()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECTATION.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group(1)):
                found[(number, code)] += 1
    return found


def lint_in_project(root: Path, relative: str) -> list:
    path = root / relative
    context = LintContext(project=Project.at(root))
    return lint_text(read_source(str(path)).text, str(path), context=context)


@pytest.mark.parametrize(("project", "relative"), CASES)
def test_findings_that_need_other_modules_match_the_expectations(project: str, relative: str):
    root = PROJECTS / project
    found = Counter((d.line, d.code) for d in lint_in_project(root, relative))
    assert found == expected(root / relative)


@pytest.mark.parametrize(("project", "relative"), [case for case in CASES if case[0] != "broken"])
def test_without_the_project_the_same_file_misses_what_other_modules_say(project: str, relative: str):
    path = PROJECTS / project / relative
    alone = Counter((d.line, d.code) for d in lint_text(read_source(str(path)).text, str(path)))
    assert alone != expected(path)


def test_a_legacy_constructor_fix_is_unsafe_where_another_module_sets_the_default_tensor_type():
    root = PROJECTS / "defaults"
    path = root / "load_data.py"
    analysis = analyse_text(read_source(str(path)).text, str(path), context=LintContext(project=Project.at(root)))
    (finding,) = [f for f in analysis.findings if f.code == "NPT003"]
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "run.py" in finding.fix.title
    alone = analyse_text(read_source(str(path)).text, str(path))
    (safe,) = [f for f in alone.findings if f.code == "NPT003"]
    assert safe.fix is not None and safe.fix.applicability.value == "safe"


def test_project_facts_name_the_modules_that_change_the_default_dtype():
    project = Project.at(PROJECTS / "defaults")
    assert project.facts().default_dtype_changed_in == ("run.py",)
    assert Project.at(PROJECTS / "relative").facts().changes_default_dtype is False


def test_modules_resolve_through_relative_imports_and_source_roots():
    project = Project.at(PROJECTS / "srclayout")
    assert project.module_of(PROJECTS / "srclayout" / "src" / "mylib" / "nets.py") == ("mylib.nets", False)
    assert project.module_of(PROJECTS / "srclayout" / "scripts" / "run.py") == ("scripts.run", False)
    link = Project.at(PROJECTS / "relative").link(PROJECTS / "relative" / "pkg" / "train.py")
    assert link.absolute(1, "data") == "pkg.data"
    assert link.absolute(1, None) == "pkg"
    assert link.absolute(3, "x") is None  # above the top of the project


def test_an_import_cycle_terminates_and_a_summary_says_what_it_can():
    project = Project.at(PROJECTS / "cycle")
    summary = project.summary("b")
    assert summary is not None and set(summary.names) >= {"helper", "loop", "make"}


def test_a_module_that_does_not_parse_has_no_summary():
    assert Project.at(PROJECTS / "broken").summary("bad") is None
