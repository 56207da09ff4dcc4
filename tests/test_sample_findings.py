"""benchmarks/real_code/sample_findings.py draws its seeded sample from saved findings (``--load``) as it does from
a fresh lint: nothing is extracted or linted here."""

from __future__ import annotations

import importlib.util
import json
import sys

from helpers import REPO

_FOLDER = REPO / "benchmarks" / "real_code"
_SPEC = importlib.util.spec_from_file_location("real_code_sample_findings", _FOLDER / "sample_findings.py")
assert _SPEC is not None and _SPEC.loader is not None
sample_findings = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = sample_findings
_SPEC.loader.exec_module(sample_findings)


def finding(repo: str, line: int) -> dict:
    return {"repo": repo, "commit": "0123456789abcdef", "path": "train.py", "line": line, "code": "NPT006",
            "message": "a list of ndarrays", "first_line": line - 1, "lines": ["before", "the line", "after"]}


def saved(tmp_path) -> str:
    findings = [finding("big/one", line) for line in range(10, 20)]
    findings += [finding("small/two", 5), finding("small/three", 7)]
    path = tmp_path / "all.json"
    path.write_text(json.dumps({"repositories": ["big/one", "small/two", "small/three", "quiet/four"],
                                "findings": findings}))
    return str(path)


def drawn(out: str) -> list[str]:
    return [line.split()[1].split("@")[0] for line in out.splitlines() if line.startswith("#")]


def test_per_repo_takes_from_every_repository_first_and_a_seed_draws_the_same_again(tmp_path, capsys):
    path = saved(tmp_path)
    assert sample_findings.main(["--load", path, "--count", "3", "--per-repo", "1", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "12 default findings in 3 of 4 repositories; 3 drawn (seed 5) from 3"
    assert sorted(drawn(out)) == ["big/one", "small/three", "small/two"]
    assert "\n#" in out and "small/two@0123456789ab train.py:5 NPT006 a list of ndarrays\n" in out
    sample_findings.main(["--load", path, "--count", "3", "--per-repo", "1", "--seed", "5"])
    assert capsys.readouterr().out == out


def test_a_uniform_draw_shows_each_finding_with_its_line_marked(tmp_path, capsys):
    sample_findings.main(["--load", saved(tmp_path), "--count", "4", "--seed", "24"])
    out = capsys.readouterr().out
    assert len(drawn(out)) == 4 and out.count(">") == 4 and out.count("the line") == 4
