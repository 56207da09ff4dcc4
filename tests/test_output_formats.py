"""Every --output-format: the full format against a golden file, GitHub lines parsed back, SARIF against the
official schema, JSON edits that really are the fix, colours only where wanted, statistics."""

from __future__ import annotations

import io
import json
from collections import Counter
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from np2torch_lint.cli import main
from np2torch_lint.engine import lint_text, parse
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle
from np2torch_lint.report import FORMATS, wants_color
from np2torch_lint.rules import RULES_BY_CODE

from helpers import FIXTURES, REPO, apply_edits, run_main

GOLDEN = REPO / "tests" / "data" / "golden"
SARIF_SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"
BAD = ("import numpy as np\nimport torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n"
       "t = torch.tensor(np.zeros(3)).float()\n")


def lint(capsys, *argv: str) -> tuple[int, str, str]:
    return run_main(main, capsys, *argv)


def test_full_format_matches_the_golden_file(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code, out, err = lint(capsys, "--output-format", "full", "full_input.py")
    expected = GOLDEN / "full.txt"
    if os.environ.get("NP2TORCH_UPDATE_GOLDEN"):  # after a deliberate change of the look or of a message
        expected.write_text(out, encoding="utf-8")
    assert (code, err) == (1, "")
    assert "\t" in (GOLDEN / "full_input.py").read_text(encoding="utf-8")  # so the carets' alignment is tested
    assert out == expected.read_text(encoding="utf-8")


def test_concise_is_one_flake8_line_per_finding_and_show_fixes_adds_the_fix(write, capsys):
    path = write("bad.py", BAD)
    code, out, _ = lint(capsys, str(path))
    assert code == 1
    assert [re.match(r"^(.+):(\d+):(\d+): (NPT\d{3}) ", line).group(2, 4) for line in out.splitlines()] == [
        ("4", "NPT001"), ("5", "NPT010")]
    _, out, _ = lint(capsys, "--show-fixes", str(path))
    assert out.splitlines()[1] == "    fix (safe): Convert with to_numpy()"
    assert out.splitlines()[3].startswith("    fix (unsafe, needs --unsafe-fixes): ")
    _, out, _ = lint(capsys, "--show-fixes", "--unsafe-fixes", "--output-format", "text", str(path))
    assert out.splitlines()[3].startswith("    fix (unsafe): ")


def test_json_output_has_the_documented_keys(write, capsys):
    path = write("bad.py", "import torch\nw = torch.ones(3, requires_grad=True)\nw.numpy()\n")
    code, out, _ = lint(capsys, "--output-format", "json", str(path))
    assert code == 1
    [item] = json.loads(out)
    import_edit, call_edit = item["fix"]["edits"]  # where the import goes is the fixer's choice
    assert item == {"code": "NPT001", "message": item["message"], "filename": str(path), "cell": None, "line": 3,
                    "column": 1, "end_line": 3, "end_column": 10,
                    "fix": {"applicability": "safe", "message": "Convert with to_numpy()",
                            "edits": [import_edit, call_edit]}}
    assert import_edit["content"].startswith("from np2torch_lint.runtime import to_numpy\n")
    assert import_edit["location"] == import_edit["end_location"]  # an insertion
    assert call_edit == {"content": "to_numpy(w)", "location": {"row": 3, "column": 1},
                         "end_location": {"row": 3, "column": 10}}


def test_json_fix_is_null_where_no_rewrite_exists(write, capsys):
    loop = ("import numpy as np\nimport torch\nout = []\nfor a in arrays:\n"
            "    out.append(torch.from_numpy(np.asarray(a, dtype=np.float32)).cuda())\n")
    code, out, _ = lint(capsys, "--output-format", "json", str(write("loop.py", loop)))
    [item] = json.loads(out)
    assert code == 1 and item["code"] == "NPT005" and item["fix"] is None


@pytest.mark.parametrize("style", ["helpers", "inline"])
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.name)
def test_json_edits_are_the_fix_applied_alone(capsys, path, style):
    code, out, _ = lint(capsys, "--output-format", "json", "--fix-style", style, str(path))
    text = path.read_text(encoding="utf-8")
    with_fixes = [item for item in json.loads(out) if item["fix"] is not None]
    assert code == 1 and with_fixes
    before = Counter(d.code for d in lint_text(text, "x.py"))
    for item in with_fixes:
        edits = item["fix"]["edits"]
        assert edits, item
        fixed = apply_edits(text, edits)
        parse(fixed)  # the edits leave code that parses, and this finding is gone (others may go with it)
        assert sum(d.code == item["code"] for d in lint_text(fixed, "x.py")) < before[item["code"]]


def test_json_edits_match_what_the_fixer_writes_for_a_lone_finding(write, capsys):
    for style in ("helpers", "inline"):
        text = "import torch\n\nw = torch.ones(3, requires_grad=True)\nprint(w.numpy())\n"
        path = write(f"one_{style}.py", text)
        _, out, _ = lint(capsys, "--output-format", "json", "--fix-style", style, str(path))
        [item] = json.loads(out)
        assert apply_edits(text, item["fix"]["edits"]) == fix_text(text, str(path), style=FixStyle(style)).text


def test_the_edits_of_many_findings_read_the_modules_imports_once(write, capsys, monkeypatch):
    """Each fix's import edit is placed in the module's import layout, worked out once per file: reading it per
    finding made the edits' cost grow with findings x statements (8.8x a parse at 4,000 findings)."""
    from np2torch_lint import fix_imports

    calls = Counter()
    original = fix_imports._top_level_imports

    def counted(*args):
        calls["layout"] += 1
        return original(*args)

    monkeypatch.setattr(fix_imports, "_top_level_imports", counted)
    path = write("many.py", "import torch\nw = torch.ones(3, requires_grad=True)\n"
                 + "".join(f"a{i} = w.numpy()\n" for i in range(50)))
    code, out, _ = lint(capsys, "--output-format", "json", "--no-cache", str(path))
    assert code == 1 and len(json.loads(out)) == 50
    assert all(item["fix"]["edits"] for item in json.loads(out)) and calls["layout"] == 1


def test_json_lines_is_one_json_object_per_finding(write, capsys):
    path = write("bad.py", BAD)
    _, out, _ = lint(capsys, "--output-format", "json-lines", str(path))
    _, whole, _ = lint(capsys, "--output-format", "json", str(path))
    assert [json.loads(line) for line in out.splitlines()] == json.loads(whole)


def _unescape(text: str) -> str:
    for escaped, plain in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, plain)
    return text


def test_github_annotations_parse_back_to_the_findings(write, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("odd, name: 100%.py", BAD)
    code, out, _ = lint(capsys, "--output-format", "github", ".")
    _, whole, _ = lint(capsys, "--output-format", "json", ".")
    assert code == 1
    parsed = []
    for line in out.splitlines():
        match = re.fullmatch(r"::error (?P<properties>[^:]*)::(?P<message>.*)", line)
        assert match, line
        properties = dict(item.split("=", 1) for item in match["properties"].split(","))
        parsed.append({key: _unescape(value) for key, value in properties.items()}
                      | {"message": _unescape(match["message"])})
    expected = [{"file": "odd, name: 100%.py", "line": str(item["line"]), "col": str(item["column"]),
                 "endLine": str(item["end_line"]), "endColumn": str(item["end_column"]), "title": item["code"],
                 "message": item["message"]} for item in json.loads(whole)]
    assert parsed == expected


def test_gitlab_report_has_code_quality_fields_and_stable_fingerprints(write, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write("src/a.py", BAD + "w.numpy()\n")
    _, out, _ = lint(capsys, "--output-format", "gitlab", "src")
    issues = json.loads(out)
    assert [(issue["check_name"], issue["location"]["lines"]["begin"]) for issue in issues] == [
        ("NPT001", 4), ("NPT010", 5), ("NPT001", 6)]
    assert all(issue["location"]["path"] == "src/a.py" and issue["severity"] == "major"
               and issue["description"].startswith(issue["check_name"]) for issue in issues)
    assert len({issue["fingerprint"] for issue in issues}) == 3  # the two identical lines differ too
    # a line inserted above moves the findings but keeps their fingerprints
    write("src/a.py", "# a comment\n" + BAD + "w.numpy()\n")
    _, moved, _ = lint(capsys, "--output-format", "gitlab", "src")
    assert [issue["fingerprint"] for issue in json.loads(moved)] == [issue["fingerprint"] for issue in issues]


def test_sarif_is_valid_against_the_official_schema_and_describes_every_rule(write, capsys, tmp_path,
                                                                             monkeypatch):
    write("pkg/bad.py", BAD)
    outside = write("elsewhere/float64.py", (FIXTURES / "npt004_float64_default_into_torch.py").read_text())
    monkeypatch.chdir(tmp_path / "pkg")  # so that the second file is outside the current folder
    code, out, _ = lint(capsys, "--output-format", "sarif", "--unsafe-fixes", ".", str(outside))
    assert code == 1
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(log), key=str)
    assert errors == []
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(RULES_BY_CODE)
    for rule in rules:
        assert rule["name"] == RULES_BY_CODE[rule["id"]].name
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["markdown"] == (REPO / "docs" / "rules" / f"{rule['id']}.md").read_text(encoding="utf-8")
        assert rule["defaultConfiguration"]["enabled"] is RULES_BY_CODE[rule["id"]].default
    # no [project.urls] address: no links at all (a file: URI into the installed package opens nowhere else)
    assert "helpUri" not in json.dumps(rules) and "informationUri" not in run["tool"]["driver"]
    assert "file:" not in json.dumps(run["tool"])
    results = run["results"]
    first = results[0]
    assert first["ruleId"] == "NPT001" and rules[first["ruleIndex"]]["id"] == "NPT001"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "bad.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 10}
    replacements = first["fixes"][0]["artifactChanges"][0]["replacements"]
    assert {"deletedRegion": {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 10},
            "insertedContent": {"text": "to_numpy(w)"}} in replacements
    assert any(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("file:///")
               for result in results)


def test_sarif_with_no_findings_is_still_a_valid_log(write, capsys):
    code, out, _ = lint(capsys, "--output-format", "sarif", str(write("clean.py", "import torch\n")))
    log = json.loads(out)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    assert code == 0 and log["runs"][0]["results"] == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("environ", "terminal", "expected"), [
    ({}, True, True),
    ({}, False, False),
    ({"NO_COLOR": "1"}, True, False),
    ({"FORCE_COLOR": "1"}, False, True),
    ({"FORCE_COLOR": ""}, False, False),  # an empty value means unset, in both conventions
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),  # NO_COLOR wins, as in CPython and pytest
    ({"TERM": "dumb"}, True, False),
])
def test_colours_only_on_a_terminal_honouring_no_color_and_force_color(environ, terminal, expected):
    assert wants_color(_Terminal() if terminal else io.StringIO(), environ) is expected


def test_colours_reach_the_output_only_when_forced_and_never_in_machine_formats(write):
    path = str(write("bad.py", BAD))
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}

    def output(*args: str, **extra: str) -> str:
        return subprocess.run([sys.executable, "-m", "np2torch_lint", *args, path], capture_output=True,
                              text=True, env={**env, **extra}).stdout

    assert "\x1b[" not in output()  # a pipe is no terminal
    assert "\x1b[" in output(FORCE_COLOR="1") and "\x1b[" in output("--output-format", "full", FORCE_COLOR="1")
    assert "\x1b[" not in output(FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in output("--output-format", "json", FORCE_COLOR="1")


def test_statistics_replace_the_findings_as_a_table_or_as_json(write, capsys):
    path = str(write("bad.py", BAD + "w.numpy()\n"))
    code, out, err = lint(capsys, "--statistics", path)
    assert code == 1 and err == ""
    assert out.splitlines() == [f"    2  NPT001  {RULES_BY_CODE['NPT001'].summary}",
                                f"    1  NPT010  {RULES_BY_CODE['NPT010'].summary}"]
    code, out, err = lint(capsys, "--statistics", "--output-format", "json", path)
    assert code == 1 and err == ""
    assert json.loads(out) == [
        {"code": "NPT001", "name": "numpy-on-grad-tensor", "count": 2, "fixable": 2,
         "summary": RULES_BY_CODE["NPT001"].summary},
        {"code": "NPT010", "name": "torch-tensor-copies-then-casts", "count": 1, "fixable": 0,
         "summary": RULES_BY_CODE["NPT010"].summary}]
    _, lines, _ = lint(capsys, "--statistics", "--output-format", "json-lines", path)
    assert [json.loads(line) for line in lines.splitlines()] == json.loads(out)


@pytest.mark.parametrize("output_format", [name for name, spec in FORMATS.items() if spec.statistics is None])
def test_statistics_in_a_ci_format_is_a_usage_error(write, capsys, output_format):
    code, out, err = lint(capsys, "--statistics", "--output-format", output_format, str(write("bad.py", BAD)))
    assert code == 2 and out == "" and "--statistics" in err.splitlines()[-1]


@pytest.mark.parametrize("output_format", list(FORMATS))
def test_every_format_prints_nothing_alarming_for_a_clean_run(write, capsys, output_format):
    code, out, err = lint(capsys, "--output-format", output_format, str(write("clean.py", "import torch\n")))
    assert code == 0 and err == ""
    if output_format in ("json", "gitlab"):
        assert json.loads(out) == []
    elif output_format != "sarif":
        assert out == ""


def test_notebook_findings_name_their_cell_in_every_format(capsys, tmp_path: Path):
    # (a copy: under the repository's tests/ folder the notebook is a test module, where NPT004 is silent)
    path = shutil.copy(REPO / "tests" / "data" / "notebooks" / "ipython_syntax.ipynb", tmp_path)
    _, concise, _ = lint(capsys, path)
    _, full, _ = lint(capsys, "--output-format", "full", path)
    # no source snippet: the file's lines are JSON, not the cell's lines
    assert [line for line in full.splitlines() if line.startswith(path)] == [  # NPT001's fix is safe: [*]
        line.replace(" NPT001 ", " NPT001 [*] ") for line in concise.splitlines()]
    assert "|" not in full
    _, sarif, _ = lint(capsys, "--output-format", "sarif", path)
    assert [result["properties"]["cell"] for result in json.loads(sarif)["runs"][0]["results"]] == [5, 8]
    _, lines, _ = lint(capsys, "--output-format", "json-lines", path)
    assert [(item["cell"], item["fix"] and item["fix"]["edits"]) for item in map(json.loads, lines.splitlines())][0] \
        == (5, [])  # edits are not given for notebooks yet
