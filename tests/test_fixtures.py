"""Every fixture's findings equal its inline expectations, exactly, from both front ends."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from np2torch_lint.cli import lint_paths
from np2torch_lint.config import RuleSelection, Settings, load_settings
from np2torch_lint.rules import RULES, RULES_BY_CODE

from helpers import FIXTURES, REPO, expected_findings, run_command


OPT_IN = ",".join(rule.code for rule in RULES if not rule.default)


def every_rule(settings: Settings) -> Settings:
    """The settings with every rule selected, the opt-in ones too: each fixture marks all it expects."""
    return dataclasses.replace(settings, selections=(*settings.selections, RuleSelection(select=tuple(RULES_BY_CODE))))


FIXTURE_FILES = sorted(FIXTURES.glob("*.py"))  # one per rule
ANALYSIS_FIXTURES = sorted((FIXTURES / "analysis").glob("*.py"))  # one per capability of the analysis


def test_there_is_a_fixture_for_every_rule():
    from np2torch_lint.rules import RULES_BY_CODE

    names = {path.name.split("_", 1)[0].upper() for path in FIXTURE_FILES}
    assert names == set(RULES_BY_CODE)


@pytest.mark.parametrize("path", FIXTURE_FILES + ANALYSIS_FIXTURES, ids=lambda p: p.name)
def test_findings_match_inline_expectations(path: Path):
    # the repository's settings: the fixtures are examples, not one program, so they are not part of the project
    # (one of them changes torch's default dtype, which would change what all the others mean)
    diagnostics, errors = lint_paths([str(path)], every_rule(load_settings(REPO / "pyproject.toml")))
    assert errors == []
    found = Counter((d.line, d.code) for d in diagnostics)
    expected = expected_findings(path)
    assert expected, "a fixture without positive cases tests nothing"
    missing = sorted(expected - found)
    extra = sorted(found - expected)
    assert (missing, extra) == ([], []), f"missing (line, code): {missing}; unexpected: {extra}"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_each_fixture_has_many_negative_cases(path: Path):
    negatives = [line for line in path.read_text(encoding="utf-8").splitlines() if "# ok:" in line]
    assert len(negatives) >= 8


def test_fixtures_hold_at_least_forty_negative_cases():
    total = sum(path.read_text(encoding="utf-8").count("# ok:") for path in FIXTURE_FILES)
    assert total >= 40


@pytest.mark.parametrize("path", ANALYSIS_FIXTURES, ids=lambda p: p.name)
def test_each_analysis_fixture_has_positives_and_negatives(path: Path):
    text = path.read_text(encoding="utf-8")
    assert text.count("# ok:") >= 6 and expected_findings(path)


def test_analysis_fixtures_hold_at_least_sixty_negative_cases():
    assert sum(path.read_text(encoding="utf-8").count("# ok:") for path in ANALYSIS_FIXTURES) >= 60


def test_cli_and_flake8_report_the_same_on_every_fixture():
    lint = run_command("np2torch-lint", "--extend-select", OPT_IN, "fixtures/")
    flake8 = run_command("flake8", "--select", "NPT", "--extend-select", OPT_IN, "fixtures/")
    assert lint.returncode == 1, lint.stderr
    assert lint.stderr == b""
    lint_lines = sorted(lint.stdout.decode().splitlines())
    assert lint_lines == sorted(flake8.stdout.decode().splitlines())
    assert len(lint_lines) == sum(sum(expected_findings(path).values()) for path in FIXTURE_FILES + ANALYSIS_FIXTURES)


def test_flake8_with_two_jobs_reports_the_same():
    one = run_command("flake8", "--select", "NPT", "fixtures/")
    two = run_command("flake8", "--select", "NPT", "-j", "2", "fixtures/")
    assert sorted(one.stdout.splitlines()) == sorted(two.stdout.splitlines())
    assert one.stdout


def test_flake8_applies_its_own_noqa(write, tmp_path):
    path = write("noqa_case.py", "import torch\nw = torch.ones(1, requires_grad=True)\nw.numpy()  # noqa: NPT001\n"
                                 "w.numpy()\n")
    result = run_command("flake8", "--select", "NPT", str(path), cwd=tmp_path)
    assert result.stdout.decode().splitlines() == [f"{path}:4:1: NPT001 .numpy() on a tensor that may require grad "
                                                   "raises RuntimeError: call .detach() first"]


def test_the_project_is_clean_under_its_own_linter_and_flake8():
    assert run_command("np2torch-lint", ".").returncode == 0
    result = run_command("flake8", "np2torch_lint", "tests", "benchmarks", cwd=REPO)
    assert result.returncode == 0, result.stdout.decode()
