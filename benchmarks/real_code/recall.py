"""Recall and precision of np2torch-lint on public PyTorch projects, against a ground truth read by hand.

Run on demand (not part of the test suite), from any folder:

    python benchmarks/real_code/recall.py                        # the main table beside this script
    python benchmarks/real_code/recall.py --table DIR            # another table, e.g. benchmarks/real_code/heldout
    python benchmarks/real_code/recall.py --mirror DIR           # mirrors under DIR (or $NP2TORCH_MIRROR)
    python benchmarks/real_code/recall.py --project sfujim/TD3 --list-misses --keep /tmp/real_code

A table is a folder with ``projects.toml`` and ``ground_truth.csv``. The mirror root is ``--mirror``, else the
environment variable ``NP2TORCH_MIRROR``, else ``/work/.mirror``. Each project of ``projects.toml`` is extracted at
its recorded commit (its ``*.py`` files only) from a bare git mirror into a temporary folder, and this checkout's
linter (``python -m np2torch_lint --output-format json``) runs over it. Findings are matched to
``ground_truth.csv`` on (repository, path, line, rule), exactly: the line is where the reported call expression
starts. Several findings of one rule on one line count once.

A finding on a ``bug`` row is right, on a ``not-a-bug`` row it is a false alarm, on an ``unknown`` row it is
neither (the code cannot tell), and anywhere else it is "not in the table": read it by hand and add a row.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
MIRROR_VARIABLE = "NP2TORCH_MIRROR"
FALLBACK_MIRROR = Path("/work/.mirror")  # where the session tool `fetch` puts mirrors; used when nothing else is given
TABLE_FILES = ("projects.toml", "ground_truth.csv")

RULES = ("NPT001", "NPT002", "NPT003", "NPT004", "NPT005", "NPT006", "NPT007", "NPT008",
         "NPT009", "NPT010")  # a row each, even empty
OPT_IN = ("NPT003", "NPT009")  # rules outside the default selection: scored too, so selected for the run
VERDICTS = ("bug", "not-a-bug", "unknown")
# Where the evidence for a verdict sits, from the cheapest for an analysis to follow to the dearest.
EVIDENCE_CATEGORIES = ("local", "call-in-file", "annotation", "module-attribute", "library-model",
                       "legacy-constructor", "guard-or-join", "cross-file", "other")

Key = tuple[str, str, int, str]  # repository, path inside it, line, rule code


@dataclass(frozen=True)
class Project:
    repo: str
    commit: str
    mirror: str


@dataclass(frozen=True)
class TruthRow:
    repo: str
    path: str
    line: int
    rule: str
    verdict: str
    evidence: str
    note: str

    def location(self) -> str:
        return f"{self.repo}/{self.path}:{self.line}"


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: int
    rule: str
    message: str

    @property
    def key(self) -> Key:
        return (self.repo, self.path, self.line, self.rule)


@dataclass
class RuleTally:
    real: int = 0
    reported: int = 0
    findings: int = 0
    on_real: int = 0
    on_not_a_bug: int = 0
    on_unknown: int = 0
    not_in_table: int = 0
    misses_by_evidence: Counter[str] = field(default_factory=Counter)


def load_projects(path: Path) -> list[Project]:
    try:
        with path.open("rb") as stream:
            entries = tomllib.load(stream)["project"]
        return [Project(entry["repo"], entry["commit"], entry.get("mirror", entry["repo"].replace("/", "+")))
                for entry in entries]
    except tomllib.TOMLDecodeError as error:
        raise SystemExit(f"{path}: not valid TOML ({error})")
    except (KeyError, TypeError) as error:
        raise SystemExit(f"{path}: every [[project]] needs repo and commit (missing {error})")


def load_truth(path: Path) -> tuple[list[TruthRow], dict[Key, TruthRow]]:
    """The rows, and every (repo, path, line, rule) they claim, their ``also_lines`` included."""
    rows: list[TruthRow] = []
    by_key: dict[Key, TruthRow] = {}
    with path.open(newline="") as stream:
        for number, record in enumerate(csv.DictReader(stream), start=2):
            try:
                row = TruthRow(record["repo"], record["path"], int(record["line"]), record["rule"],
                               record["verdict"], record["evidence"], record["note"])
            except KeyError as error:
                raise SystemExit(f"{path}: no {error} column (the header is repo, commit, path, line, rule, "
                                 "verdict, evidence, also_lines, note)")
            except (TypeError, ValueError):
                raise SystemExit(f"{path}:{number}: line must be a number, not {record.get('line')!r}")
            if row.verdict not in VERDICTS or row.evidence not in EVIDENCE_CATEGORIES:
                raise SystemExit(f"{path}:{number}: verdict must be one of {VERDICTS} and evidence one of "
                                 f"{EVIDENCE_CATEGORIES}, not {row.verdict!r} / {row.evidence!r}")
            lines = [row.line] + [int(extra) for extra in record.get("also_lines", "").split(";") if extra.strip()]
            for line in lines:
                key = (row.repo, row.path, line, row.rule)
                if key in by_key:
                    raise SystemExit(f"{path}:{number}: {key} is already claimed by another row; one verdict per "
                                     "line and rule")
                by_key[key] = row
            rows.append(row)
    return rows, by_key


def mirror_root(given: Path | None, environ: Mapping[str, str] = os.environ) -> Path:
    """The folder that holds the mirrors: ``--mirror``, else ``$NP2TORCH_MIRROR``, else the fallback."""
    if given is not None:
        return given
    value = environ.get(MIRROR_VARIABLE)
    return Path(value) if value else FALLBACK_MIRROR


def find_git_dir(mirror_root: Path, project: Project) -> Path | None:
    for candidate in (mirror_root / project.mirror / "repo" / ".git", mirror_root / project.mirror / "repo",
                      mirror_root / project.mirror):
        if (candidate / "objects").is_dir():
            return candidate
    return None


def extract_python_files(git_dir: Path, commit: str, destination: Path) -> str | None:
    """Write the commit's ``*.py`` files under ``destination``; a problem comes back as one line, else None."""
    archive = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", "*.py"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert archive.stdout is not None
    try:
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            # the "data" filter refuses absolute paths and links out of the folder (Python >= 3.11.4)
            tar.extractall(destination, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        # tarfile stops at the end-of-archive marker: read the padding git still writes after it, or git may die of
        # SIGPIPE when the pipe closes (exit -13, no message: "git archive failed", and the project is left out)
        while archive.stdout.read(1 << 16):
            pass
    except tarfile.TarError as error:
        archive.kill()
        return f"unreadable archive: {error}"
    finally:
        archive.stdout.close()
    error_text = archive.stderr.read().decode(errors="replace") if archive.stderr else ""
    if archive.wait() != 0:
        return (error_text.strip().splitlines() or ["git archive failed"])[0]
    return None


def run_linter(project_dir: Path) -> tuple[list[dict[str, object]], list[str]]:
    """This checkout's findings as JSON objects, and the lines it wrote on stderr (files it could not read)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "np2torch_lint", "--output-format", "json", "--exit-zero",
                             "--extend-select", ",".join(OPT_IN), "."],
                            cwd=project_dir, env=env, capture_output=True, text=True)
    try:
        parsed = json.loads(result.stdout or "[]")
    except json.JSONDecodeError as error:
        raise SystemExit(f"{project_dir}: the linter's output is not JSON ({error}); stderr: {result.stderr[:500]}")
    if isinstance(parsed, dict):  # a future envelope such as {"diagnostics": [...], ...}
        parsed = next((value for value in parsed.values() if isinstance(value, list)), [])
    return [item for item in parsed if isinstance(item, dict)], result.stderr.splitlines()


def as_finding(repo: str, project_dir: Path, item: dict[str, object]) -> Finding | None:
    code, filename, line = item.get("code"), item.get("filename"), item.get("line")
    if not isinstance(code, str) or not isinstance(filename, str) or not isinstance(line, int):
        return None
    path = Path(filename)
    if path.is_absolute():
        path = path.relative_to(project_dir.resolve()) if path.is_relative_to(project_dir.resolve()) else path
    return Finding(repo, path.as_posix().removeprefix("./"), line, code, str(item.get("message", "")))


def lint_projects(projects: Iterable[Project], mirror_root: Path, keep: Path | None) -> tuple[list[Finding], list[str]]:
    findings: list[Finding] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="np2torch-real-code-") as scratch:
        root = keep if keep is not None else Path(scratch)
        for project in projects:
            git_dir = find_git_dir(mirror_root, project)
            if git_dir is None:
                problems.append(f"{project.repo}: no mirror under {mirror_root / project.mirror}; not linted")
                continue
            project_dir = root / project.mirror
            project_dir.mkdir(parents=True, exist_ok=True)
            problem = extract_python_files(git_dir, project.commit, project_dir)
            if problem is not None:
                problems.append(f"{project.repo}: {problem}")
            items, stderr_lines = run_linter(project_dir)
            problems += [f"{project.repo}: {line}" for line in stderr_lines if line.strip()]
            findings += [found for item in items if (found := as_finding(project.repo, project_dir, item))]
    return findings, problems


def tally(rows: list[TruthRow], by_key: dict[Key, TruthRow],
          findings: list[Finding]) -> tuple[dict[str, RuleTally], list[TruthRow], dict[str, list[Finding]]]:
    """Per rule counts; the bug rows no finding reached; the findings grouped by what the table says of them."""
    tallies: dict[str, RuleTally] = {rule: RuleTally() for rule in RULES}
    tallies = defaultdict(RuleTally, tallies)
    found_rows: set[TruthRow] = set()
    by_outcome: dict[str, list[Finding]] = defaultdict(list)
    unique = {finding.key: finding for finding in findings}
    for key, finding in sorted(unique.items()):
        rule_tally = tallies[finding.rule]
        rule_tally.findings += 1
        row = by_key.get(key)
        if row is None:
            rule_tally.not_in_table += 1
            by_outcome["not in the table"].append(finding)
        elif row.verdict == "bug":
            rule_tally.on_real += 1
            found_rows.add(row)
            by_outcome["right"].append(finding)
        elif row.verdict == "not-a-bug":
            rule_tally.on_not_a_bug += 1
            by_outcome["false alarm"].append(finding)
        else:
            rule_tally.on_unknown += 1
            by_outcome["on an unknown row"].append(finding)
    misses = []
    for row in rows:
        if row.verdict != "bug":
            continue
        rule_tally = tallies[row.rule]
        rule_tally.real += 1
        if row in found_rows:
            rule_tally.reported += 1
        else:
            rule_tally.misses_by_evidence[row.evidence] += 1
            misses.append(row)
    return dict(tallies), misses, by_outcome


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def print_projects(linted: set[str], rows: list[TruthRow], misses: list[TruthRow],
                   by_outcome: dict[str, list[Finding]]) -> None:
    """One line per project: one project with many rows (a file pattern repeated) can dominate a rule's recall."""
    real = Counter(row.repo for row in rows if row.verdict == "bug")
    missed = Counter(row.repo for row in misses)
    outcomes = {outcome: Counter(finding.repo for finding in found) for outcome, found in by_outcome.items()}
    print("\nper project:")
    print(f"{'project':>48}  {'real':>6}  {'reported':>8}  {'findings':>8}  {'false':>6}  {'unlisted':>8}")
    for repo in sorted(linted, key=str.lower):
        findings = sum(counts[repo] for counts in outcomes.values())
        false_alarms = outcomes.get("false alarm", Counter())[repo]
        unlisted = outcomes.get("not in the table", Counter())[repo]
        print(f"{repo:>48}  {real[repo]:>6}  {real[repo] - missed[repo]:>8}  {findings:>8}  {false_alarms:>6}  "
              f"{unlisted:>8}")


def print_report(tallies: dict[str, RuleTally]) -> None:
    total = RuleTally()
    header = ("rule", "real", "reported", "recall", "findings", "right", "false", "unknown", "unlisted",
              "precision", "worst case")
    print("  ".join(f"{name:>10}" for name in header))
    for rule in sorted(tallies) + ["all"]:
        rule_tally = tallies.get(rule, total)
        if rule != "all":
            for name in ("real", "reported", "findings", "on_real", "on_not_a_bug", "on_unknown", "not_in_table"):
                setattr(total, name, getattr(total, name) + getattr(rule_tally, name))
            total.misses_by_evidence.update(rule_tally.misses_by_evidence)
        judged = rule_tally.on_real + rule_tally.on_not_a_bug
        cells = (rule, rule_tally.real, rule_tally.reported, ratio(rule_tally.reported, rule_tally.real),
                 rule_tally.findings, rule_tally.on_real, rule_tally.on_not_a_bug, rule_tally.on_unknown,
                 rule_tally.not_in_table, ratio(rule_tally.on_real, judged),
                 ratio(rule_tally.on_real, judged + rule_tally.not_in_table))
        print("  ".join(f"{cell:>10}" for cell in cells))
    print("\nprecision: right / (right + false), over findings the table judges; worst case also counts every "
          "unlisted finding as false.")

    print("\nmisses by where the evidence is (bug rows no finding reached):")
    categories = [name for name in EVIDENCE_CATEGORIES if total.misses_by_evidence[name]]
    print("  ".join(f"{name:>18}" for name in ["rule"] + categories))
    for rule in sorted(tallies) + ["all"]:
        counts = tallies.get(rule, total).misses_by_evidence
        if rule != "all" and not sum(counts.values()):
            continue
        print("  ".join(f"{cell:>18}" for cell in [rule] + [counts[name] for name in categories]))


def print_details(misses: list[TruthRow], by_outcome: dict[str, list[Finding]], truth: dict[Key, TruthRow],
                  list_misses: bool) -> None:
    """The findings the table does not call right, each with the row's note; the misses when asked."""
    for outcome in ("false alarm", "on an unknown row", "not in the table"):
        if by_outcome.get(outcome):
            print(f"\nfindings: {outcome} ({len(by_outcome[outcome])})")
            for finding in by_outcome[outcome]:
                row = truth.get(finding.key)
                why = f"  [{row.note}]" if row is not None else ""
                print(f"  {finding.repo}/{finding.path}:{finding.line}: {finding.rule} {finding.message}{why}")
    if list_misses and misses:
        print(f"\nmisses ({len(misses)})")
        for row in sorted(misses, key=lambda row: (row.rule, row.evidence, row.location())):
            print(f"  {row.rule} {row.evidence:>18}  {row.location()}  {row.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=HERE, metavar="DIR",
                        help=f"folder with {' and '.join(TABLE_FILES)} (default: the main table, {HERE})")
    parser.add_argument("--mirror", type=Path, metavar="DIR",
                        help=f"root of the git mirrors, one owner+name folder each (default: ${MIRROR_VARIABLE}, "
                             f"else {FALLBACK_MIRROR})")
    parser.add_argument("--projects", type=Path, metavar="FILE", help="a projects.toml other than the table's")
    parser.add_argument("--truth", type=Path, metavar="FILE", help="a ground_truth.csv other than the table's")
    parser.add_argument("--project", action="append", metavar="OWNER/NAME", help="only these projects (repeatable)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="extract the projects here and leave them")
    parser.add_argument("--list-misses", action="store_true", help="also list every bug row no finding reached")
    args = parser.parse_args(argv)
    projects_path = args.projects or args.table / TABLE_FILES[0]
    truth_path = args.truth or args.table / TABLE_FILES[1]
    for path in (projects_path, truth_path):
        if not path.is_file():
            parser.error(f"{path}: no such file (a table is a folder with {' and '.join(TABLE_FILES)})")
    mirrors = mirror_root(args.mirror)
    if not mirrors.is_dir():
        parser.error(f"mirror root {mirrors} is not a folder: pass --mirror DIR or set {MIRROR_VARIABLE}")

    projects = load_projects(projects_path)
    if args.project:
        unknown = set(args.project) - {project.repo for project in projects}
        if unknown:
            parser.error(f"not in {projects_path}: {', '.join(sorted(unknown))}")
        projects = [project for project in projects if project.repo in args.project]
    rows, by_key = load_truth(truth_path)
    chosen = {project.repo for project in projects}
    rows = [row for row in rows if row.repo in chosen]

    print(f"table: {projects_path} and {truth_path}; mirrors under {mirrors}")
    findings, problems = lint_projects(projects, mirrors, args.keep)
    linted = {project.repo for project in projects} - {problem.split(":")[0] for problem in problems
                                                       if problem.endswith("not linted")}
    rows = [row for row in rows if row.repo in linted]
    print(f"{len(linted)} of {len(projects)} projects linted, {len(rows)} table rows, {len(findings)} findings")
    for problem in problems:
        print(f"  note: {problem}")
    print()
    tallies, misses, by_outcome = tally(rows, by_key, findings)
    print_report(tallies)
    print_projects(linted, rows, misses, by_outcome)
    print_details(misses, by_outcome, by_key, args.list_misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
