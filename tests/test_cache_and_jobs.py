"""The cache and -j: the same findings warm or cold, with one process or many; a changed module re-lints only
the files that used its summary; a corrupt, foreign or unwritable cache is never trusted and never a crash."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from np2torch_lint import jobs
from np2torch_lint.project import cache as cache_module
from np2torch_lint.cli import main
from np2torch_lint.commands import Performance, lint
from np2torch_lint.config import load_settings

from helpers import REPO, run_command, run_main

PROJECTS = REPO / "tests" / "data" / "projects"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of a small package whose train module needs its data module's summary."""
    root = tmp_path / "relative"
    shutil.copytree(PROJECTS / "relative", root)
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    return root


def findings(root: Path, performance: Performance) -> list[tuple[str, int, str]]:
    report, errors = lint([str(root)], load_settings(root / "pyproject.toml"), performance=performance)
    assert errors == []
    return sorted((Path(item.diagnostic.filename).name, item.diagnostic.line, item.diagnostic.code)
                  for item in report.findings)


@pytest.fixture
def analysed(monkeypatch) -> list[str]:
    """The files a run analyses (the others come from the cache)."""
    seen: list[str] = []
    original = jobs.Linter._analysed

    def counting(self, path, text, edits):
        seen.append(Path(path).name)
        return original(self, path, text, edits)

    monkeypatch.setattr(jobs.Linter, "_analysed", counting)
    return seen


def test_a_warm_run_reads_every_result_from_the_cache_and_finds_the_same(project, tmp_path, analysed):
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    cold = findings(project, cached)
    assert ("train.py", 7, "NPT004") in cold and sorted(set(analysed)) == ["__init__.py", "data.py", "train.py"]
    analysed.clear()
    assert findings(project, cached) == cold
    assert analysed == []
    assert (tmp_path / "cache" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"


def test_the_cache_lives_beside_the_configuration_by_default(project, analysed):
    findings(project, Performance(cache=True))
    assert (project / ".np2torch_lint_cache" / ".gitignore").is_file()


def test_a_change_that_keeps_a_summary_relints_only_that_module(project, tmp_path, analysed):
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    before = findings(project, cached)
    data = project / "pkg" / "data.py"
    data.write_text(data.read_text(encoding="utf-8").replace(
        "def load():\n", "def load():\n    seed = 0  # what it returns is the same\n"), encoding="utf-8")
    analysed.clear()
    assert findings(project, cached) == before
    assert analysed == ["data.py"]  # train.py used data's summary, which did not change


def test_a_change_to_what_a_module_gives_relints_the_files_that_used_it(project, tmp_path, analysed):
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    findings(project, cached)
    data = project / "pkg" / "data.py"
    data.write_text(data.read_text(encoding="utf-8").replace(
        "return np.random.rand(3)\n", "return np.random.rand(3).astype(np.float32)\n"), encoding="utf-8")
    analysed.clear()
    after = findings(project, cached)
    assert sorted(set(analysed)) == ["data.py", "train.py"]
    assert ("train.py", 7, "NPT004") not in after  # load() now gives float32


@pytest.mark.parametrize("damage", ["not json", '{"format": 1}', "[1, 2]", ""])
def test_a_corrupt_cache_entry_is_ignored_and_rewritten(project, tmp_path, analysed, damage):
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    cold = findings(project, cached)
    entries = list((tmp_path / "cache").glob("*/*.json"))
    assert entries
    for entry in entries:
        entry.write_text(damage, encoding="utf-8")
    analysed.clear()
    assert findings(project, cached) == cold
    assert sorted(set(analysed)) == ["__init__.py", "data.py", "train.py"]
    assert all(isinstance(json.loads(entry.read_text(encoding="utf-8")), dict) for entry in entries)


def _damaged(change):
    """A damage done to the parsed entry, written back whole (its check digest right), as another program or build
    might write it."""
    def damage(text: str) -> str:
        entry = json.loads(text)
        change(entry)
        return cache_module.entry_file(entry).decode()
    return damage


def _checked(rest: str) -> str:
    """A file whose check digest holds for whatever JSON text follows it."""
    body = rest.encode()
    return (b'{"check":"' + hashlib.sha256(b"{" + body).hexdigest()[:32].encode() + b'",' + body).decode()


def _first_finding(entry: dict) -> dict:
    return entry["result"]["diagnostics"][0]


@pytest.mark.parametrize(("damage", "problem"), [
    (_damaged(lambda e: e["result"].update(diagnostics=[5])), "entry.result.diagnostics[0]: expected an object, got 5"),
    (_damaged(lambda e: _first_finding(e).pop("message")), "entry.result.diagnostics[0]: no 'message'"),
    (_damaged(lambda e: _first_finding(e)["fix"].update(applicability="maybe")),
     "entry.result.diagnostics[0].fix.applicability: expected one of 'safe', 'unsafe', got a string ('maybe')"),
    (_damaged(lambda e: e["result"].update(dependencies=[1, 2, 3])),
     "entry.result.dependencies: expected an object, got a list"),
    (_damaged(lambda e: _first_finding(e).update(line=0)),
     "entry.result.diagnostics[0].line: expected a line or column (a positive integer), got 0"),
    (_damaged(lambda e: e["summary"].update(w={"k": "tensor"})), "its summary does not match its digest"),
    (_damaged(lambda e: e.update(result_of_another_build=[])), "entry: unknown key 'result_of_another_build'"),
    (lambda text: _checked('"x":' + "[" * 100_000), "cannot read it (RecursionError)"),
    (lambda text: text.replace("float64", "floȝt64", 1), "its check digest does not match what it holds"),
    (lambda text: text[:len(text) // 2], "its check digest does not match what it holds"),
])
def test_an_entry_that_does_not_fit_is_logged_once_ignored_and_rewritten(
        project, tmp_path, capsys, analysed, damage, problem):
    arguments = ["--verbose", "--cache-dir", str(tmp_path / "cache"), str(project)]
    cold = run_main(main, capsys, *arguments)
    assert cold[0] == 1 and cold[2] == ""
    entry = next(path for path in (tmp_path / "cache").glob("*/*.json")
                 if json.loads(path.read_text(encoding="utf-8"))["path"].endswith("train.py"))
    entry.write_text(damage(entry.read_text(encoding="utf-8")), encoding="utf-8")
    analysed.clear()
    assert run_main(main, capsys, *arguments) == (1, cold[1], (
        f"np2torch-lint: ignored the cache entry of {project / 'pkg' / 'train.py'} ({entry}): {problem}; "
        "it is written anew\n"))
    assert analysed == ["train.py"]
    analysed.clear()
    assert run_main(main, capsys, *arguments) == cold  # rewritten: used again, nothing logged
    assert analysed == []


def test_a_cache_written_by_another_build_of_the_same_version_is_not_used(project, tmp_path):
    """Every checkout says version 0.1.0: a build whose code differs (here NPT001's message) keeps its own results."""
    build = tmp_path / "build"
    shutil.copytree(REPO / "np2torch_lint", build / "np2torch_lint", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    rule = build / "np2torch_lint" / "rules" / "npt004_float64_default_into_torch.py"
    text = rule.read_text(encoding="utf-8")
    rule.write_text(text.replace('"this float64 comes', '"(another build) this float64 comes'), encoding="utf-8")
    arguments = ["--cache-dir", str(tmp_path / "cache"), "."]
    ours = run_command("np2torch-lint", *arguments, cwd=project)
    assert ours.returncode == 1 and b"NPT004" in ours.stdout
    theirs = subprocess.run([sys.executable, "-m", "np2torch_lint", *arguments], cwd=project, capture_output=True,
                            env={**os.environ, "PYTHONPATH": str(build)})
    assert theirs.returncode == 1 and b"NPT004 (another build) " in theirs.stdout
    assert run_command("np2torch-lint", *arguments, cwd=project).stdout == ours.stdout


def test_an_entry_written_for_another_file_is_not_trusted(project, tmp_path, analysed):
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    cold = findings(project, cached)
    entries = sorted((tmp_path / "cache").glob("*/*.json"))
    contents = [entry.read_bytes() for entry in entries]
    for entry, content in zip(entries, contents[1:] + contents[:1]):  # each file gets another file's entry
        entry.write_bytes(content)
    analysed.clear()
    assert findings(project, cached) == cold
    assert sorted(set(analysed)) == ["__init__.py", "data.py", "train.py"]


def test_a_cache_folder_that_cannot_be_written_is_no_error(project, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    assert findings(project, Performance(cache=True, cache_dir=blocker / "cache")) == findings(project, Performance())


def test_the_command_line_gives_the_same_output_with_any_jobs_warm_or_cold(tmp_path):
    root = tmp_path / "many"
    for n in range(12):  # enough files for worker processes to start
        package = root / f"pkg{n % 3}"
        package.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECTS / "relative" / "pkg" / "data.py", package / "data.py")
        (package / "__init__.py").write_text("", encoding="utf-8")
        (package / f"train{n}.py").write_text(
            "import torch\nfrom .data import load, load_ints\n"
            f"torch.from_numpy(load())  # {n}\ntorch.FloatTensor(load_ints())\n", encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.np2torch-lint]\nselect = ["NPT", "NPT009"]\n', encoding="utf-8")
    outputs = set()
    for arguments in (["-j", "1", "--no-cache"], ["-j", "2", "--no-cache"], ["-j", "2"], ["-j", "2"], ["-j", "1"]):
        result = run_command("np2torch-lint", *arguments, "--output-format", "json", ".", cwd=root)
        assert result.returncode == 1, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == 24
    fixed = {}
    for jobs_count in ("1", "2"):
        copy = tmp_path / f"fix{jobs_count}"
        shutil.copytree(root, copy)
        run_command("np2torch-fix", "--unsafe-fixes", "-j", jobs_count, "--no-cache", ".", cwd=copy)
        fixed[jobs_count] = {path.relative_to(copy): path.read_bytes() for path in copy.rglob("*.py")}
    originals = {path.relative_to(root): path.read_bytes() for path in root.rglob("*.py")}
    assert fixed["1"] == fixed["2"] and fixed["1"] != originals


def test_flake8_with_two_jobs_reports_what_the_command_line_reports_in_a_project(project):
    cli = run_command("np2torch-lint", "--no-cache", ".", cwd=project)
    flake8 = run_command("flake8", "--select", "NPT", "-j", "2", ".", cwd=project)
    assert sorted(cli.stdout.decode().splitlines()) == sorted(flake8.stdout.decode().splitlines())
    assert b"NPT004" in flake8.stdout  # a finding that needs the data module's summary


def test_one_file_passed_alone_is_linted_with_its_project_around_it(project):
    """What pre-commit does: only the changed files are passed; their imports are still followed."""
    alone = run_command("np2torch-lint", "--no-cache", "pkg/train.py", cwd=project)
    whole = run_command("np2torch-lint", "--no-cache", ".", cwd=project)
    train_lines = [line for line in whole.stdout.decode().splitlines() if "train.py" in line]
    assert [line.replace("./", "") for line in train_lines] == alone.stdout.decode().splitlines()
    assert train_lines


def attribute_project(tmp_path: Path) -> Path:
    """main.py reaches pkg.sub through `import pkg` (the import scan sees only pkg), and sub imports main back:
    sub is summarised while main is linted, before its own turn."""
    root = tmp_path / "attribute"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "sub.py").write_text(
        "import numpy as np\nimport torch\nfrom main import scale\n\n\n"
        "def make():\n    return np.zeros(3) * scale()\n\n\nt = torch.tensor(make())\n", encoding="utf-8")
    (root / "main.py").write_text(
        "import numpy as np\nimport torch\nimport pkg\n\n\ndef scale():\n    return np.ones(3)\n\n\n"
        "x = torch.tensor(pkg.sub.make())\n", encoding="utf-8")
    return root


def test_a_submodule_reached_as_an_attribute_is_summarised_once_so_a_warm_run_analyses_nothing(tmp_path, analysed):
    # its findings must not be analysed again
    root = attribute_project(tmp_path)
    cached = Performance(cache=True, cache_dir=tmp_path / "cache")
    cold = findings(root, cached)
    assert sorted(set(analysed)) == ["__init__.py", "main.py", "sub.py"]
    analysed.clear()
    assert findings(root, cached) == cold
    assert analysed == []


def copied_project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root)
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    return root


def test_a_file_parsed_for_an_importer_is_not_parsed_again_to_be_linted(tmp_path, parsed):
    root = attribute_project(tmp_path)
    findings(root, Performance(cache=False))
    sub = (root / "pkg" / "sub.py").read_text(encoding="utf-8")
    assert parsed.count(sub) == 1  # summarised while main.py is linted, then linted from the same tree


def test_a_file_parsed_for_the_project_facts_is_not_parsed_again_to_be_linted(tmp_path, parsed):
    root = copied_project(tmp_path, "defaults")
    findings(root, Performance(cache=False))
    run = (root / "run.py").read_text(encoding="utf-8")
    assert parsed.count(run) == 1  # it sets the default dtype: read for the facts, then linted from that tree


@pytest.mark.parametrize("name", ["relative", "defaults"])
def test_a_cold_run_writes_the_entry_of_each_analysed_file_once(name, tmp_path, monkeypatch):
    root = copied_project(tmp_path, name)
    written: list[Path] = []
    original = cache_module.replace_file

    def counting(path, *args, **kwargs):
        written.append(Path(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(cache_module, "replace_file", counting)
    findings(root, Performance(cache=True, cache_dir=tmp_path / "cache"))
    analysed = [target for target in set(written)  # (a file skipped as clean is written again if an importer
                if "torch" in Path(json.loads(target.read_text(encoding="utf-8"))["path"]).read_text(  # needs it)
                    encoding="utf-8")]
    assert analysed and all(written.count(target) == 1 for target in analysed)  # summary and findings together


def cached_entries(folder: Path) -> dict[str, dict]:
    """The cache's entries by the file name they are for."""
    entries = (json.loads(path.read_text(encoding="utf-8")) for path in folder.rglob("*.json"))
    return {Path(entry["path"]).name: entry for entry in entries}


def reexport_project(tmp_path: Path) -> Path:
    """pkg/__init__.py re-exports a helper and says nothing a rule looks for, so it is skipped as clean."""
    root = tmp_path / "reexport"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text("from .sub import make\n", encoding="utf-8")
    (root / "pkg" / "sub.py").write_text("import numpy as np\n\n\ndef make():\n    return np.zeros(3)\n",
                                         encoding="utf-8")
    (root / "main.py").write_text("import torch\nfrom pkg import make\n\nx = torch.tensor(make())\n", encoding="utf-8")
    return root


def test_a_module_skipped_as_clean_still_has_its_summary_cached(tmp_path):
    root = reexport_project(tmp_path)
    findings(root, Performance(cache=True, cache_dir=tmp_path / "cache"))
    entries = cached_entries(tmp_path / "cache")
    assert "result" in entries["__init__.py"] and "summary" in entries["__init__.py"]


def test_linting_one_text_in_a_project_caches_its_summary(tmp_path):
    # as the language server does: no jobs.Linter.analysed around it to write the entry afterwards
    from np2torch_lint.engine import lint_text

    root = reexport_project(tmp_path)
    linter = jobs.Linter.for_settings(load_settings(root / "pyproject.toml"), tmp_path / "cache")
    sub = root / "pkg" / "sub.py"
    lint_text(sub.read_text(encoding="utf-8"), str(sub), context=linter.context)
    assert "summary" in cached_entries(tmp_path / "cache")["sub.py"]


@pytest.fixture
def analyses(monkeypatch) -> list[str]:
    """The module texts the analysis reads (for an importer, for the project facts or to be linted)."""
    from np2torch_lint.analysis.interpreter import Analyzer

    texts: list[str] = []
    original = Analyzer.analyze

    def counting(self, module):
        texts.append(module.code)
        return original(self, module)

    monkeypatch.setattr(Analyzer, "analyze", counting)
    return texts


@pytest.mark.parametrize("name, reused", [("attribute", "pkg/sub.py"), ("defaults", "run.py")])
def test_a_file_analysed_before_its_turn_is_not_analysed_again_to_be_linted(name, reused, tmp_path, analyses):
    # sub.py is summarised while main.py is linted; run.py is analysed for the project facts
    root = attribute_project(tmp_path) if name == "attribute" else copied_project(tmp_path, name)
    found = findings(root, Performance(cache=False))
    text = (root / reused).read_text(encoding="utf-8")
    assert analyses.count(text) == 1
    analyses.clear()
    assert findings(root, Performance(cache=False, jobs=2)) == found  # workers that do not reuse agree


def test_what_one_file_assigns_to_an_object_of_another_modules_class_does_not_reach_other_files(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    (root / "holder.py").write_text("class Holder:\n    def __init__(self):\n        self.value = None\n",
                                    encoding="utf-8")
    (root / "a_writer.py").write_text(
        "import torch\nfrom holder import Holder\n\nh = Holder()\nh.value = torch.zeros(3, requires_grad=True)\n",
        encoding="utf-8")
    (root / "b_reader.py").write_text(
        "import torch\nfrom holder import Holder\n\nHolder().value.numpy()\n", encoding="utf-8")
    assert findings(root, Performance(cache=False)) == []


def test_files_outside_the_project_do_not_work_out_its_facts(project, tmp_path, monkeypatch):
    from np2torch_lint.project.index import Project

    worked_out: list[Path] = []
    facts = Project.facts

    def noting(self):
        worked_out.append(self.root)
        return facts(self)

    monkeypatch.setattr(Project, "facts", noting)
    outside = tmp_path / "elsewhere" / "script.py"
    outside.parent.mkdir()
    outside.write_text("import numpy as np\nimport torch\nt = torch.tensor(np.zeros(3))\n", encoding="utf-8")
    settings = load_settings(project / "pyproject.toml")
    report, errors = lint([str(outside)], settings, performance=Performance(jobs=1, cache=False))
    assert errors == [] and [item.diagnostic.code for item in report.findings] == ["NPT004"]
    assert worked_out == []  # the project at the configuration's folder is not this file's
    lint([str(project)], settings, performance=Performance(jobs=1, cache=False))
    assert worked_out != []


def test_the_collector_is_on_after_a_run_and_stays_off_for_a_host_that_turned_it_off(project):
    import gc

    settings = load_settings(project / "pyproject.toml")
    assert findings(project, Performance(jobs=1, cache=False))  # the run found something: it did analyse
    assert gc.isenabled()
    gc.disable()
    try:
        lint([str(project)], settings, performance=Performance(jobs=1, cache=False))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_a_run_leaves_alive_joins_the_oldest_generation_unwalked():
    import gc

    from np2torch_lint.parsing import collector_paused_for_files

    class Kept:  # an object the run leaves alive, in a cycle
        def __init__(self):
            self.me = self

    gc.collect()
    with collector_paused_for_files():
        kept = Kept()
        assert not gc.isenabled()
    assert gc.isenabled()
    assert any(each is kept for each in gc.get_objects(generation=2))  # not walked by a young collection first
    del kept
    assert gc.collect() >= 1  # the cycle is still garbage a full collection frees


def test_worker_processes_start_in_a_project_with_a_folder_named_like_a_standard_module(tmp_path):
    """The forkserver starts as ``python -c`` in the linted folder: its ``signal/`` must not shadow the standard
    module (torch's own sources have one)."""
    (tmp_path / "signal").mkdir()
    (tmp_path / "signal" / "__init__.py").write_text("raise ImportError('the project folder, not the module')\n")
    for n in range(10):  # enough files for worker processes to start
        (tmp_path / f"m{n}.py").write_text("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n")
    result = run_command("np2torch-lint", "-j", "2", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1 and b"Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(result.stdout.splitlines()) == 10


def test_a_source_checkouts_cache_key_follows_edited_and_added_modules_not_bytecode(tmp_path, monkeypatch):
    package = tmp_path / "np2torch_lint"
    (package / "__pycache__").mkdir(parents=True)
    module = package / "rule.py"
    module.write_text("LIMIT = 1\n")
    monkeypatch.setattr(cache_module, "_CODE_PACKAGE", package)

    def key() -> str:
        cache_module.code_digest.cache_clear()
        return cache_module.settings_key("settings")

    first = key()
    (package / "__pycache__" / "rule.cpython-311.pyc").write_bytes(b"\0")
    assert key() == first
    module.write_text("LIMIT = 2\n")  # the same size: an edit is told by its time
    os.utime(module, ns=(module.stat().st_atime_ns, module.stat().st_mtime_ns + 1_000_000_000))
    edited = key()
    (package / "models.toml").write_text("")
    assert len({first, edited, key()}) == 3
    cache_module.code_digest.cache_clear()


def test_a_file_that_does_not_parse_is_cached_as_its_reason_and_reported_alike_warm_or_cold(
        project, tmp_path, capsys, analysed):
    """The formats for programs show such a file as one more finding with no code; the cache keeps only the reason
    (``error``: an entry's findings all have a code, as its schema says), so a warm run reads it back without a
    complaint and reports the same."""
    legacy = project / "pkg" / "legacy.py"
    legacy.write_text('import torch\nprint "loss", loss\n', encoding="utf-8")
    arguments = ["--verbose", "--exit-zero", "--output-format", "json", "--cache-dir", str(tmp_path / "cache"),
                 str(project)]
    cold = run_main(main, capsys, *arguments)
    assert cold[0] == 0
    assert [(Path(item["filename"]).name, item["code"]) for item in json.loads(cold[1]) if item["code"] is None] == [
        ("legacy.py", None)]
    entry = next(json.loads(path.read_text(encoding="utf-8")) for path in (tmp_path / "cache").glob("*/*.json")
                 if json.loads(path.read_text(encoding="utf-8"))["path"].endswith("legacy.py"))
    cache_module.check(cache_module.ENTRY, entry)
    assert entry["result"]["diagnostics"] == []
    assert entry["result"]["error"].startswith("Missing parentheses in call to 'print'")
    analysed.clear()
    assert run_main(main, capsys, *arguments) == cold  # nothing logged as ignored: the entry fits
    assert analysed == []
