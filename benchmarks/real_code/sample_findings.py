"""A seeded random sample of what a newcomer sees: the default findings on real projects, to be read by hand.

Run on demand (not part of the test suite):

    python benchmarks/real_code/sample_findings.py --seed 24 --count 40               # every project of projects.toml
    python benchmarks/real_code/sample_findings.py --per-repo 2 --count 32 --repo openai/CLIP@d05afc4...
    python benchmarks/real_code/sample_findings.py --projects benchmarks/real_code/projects.toml \
        --projects benchmarks/real_code/heldout/projects.toml --other-mirrors --save all.json   # every mirror
    python benchmarks/real_code/sample_findings.py --load all.json --seed 24 --count 40       # draw again, no lint

Each project is extracted at its commit (its ``*.py`` files, as ``recall.py`` does; ``--repo owner/name@commit``
adds one that no ``--projects`` list names, ``@commit`` defaulting to the mirror's HEAD, and ``--other-mirrors``
adds every such mirror under the root) and linted by this checkout with the default settings (``python -m
np2torch_lint --output-format json .``: no configuration, as a newcomer runs it). The findings are sorted, then
sampled with ``random.Random(seed)``: uniformly, or with ``--per-repo N`` at most N from each repository first (so
that a few repositories do not fill the sample), then at random from the rest until ``--count``. Each finding is
printed with the lines before it, for a verdict by hand: worth acting on or not, and why. ``--save`` keeps every
finding with its commit and source lines, so that ``--load`` draws again without linting.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from recall import (CHECKOUT, FALLBACK_MIRROR, MIRROR_VARIABLE, Project, extract_python_files,  # noqa: E402
                    find_git_dir, load_projects, mirror_root)

Found = tuple[str, str, int, str, str]  # repository, path, line, code, message


def default_findings(project_dir: Path) -> list[dict]:
    env = dict(os.environ, PYTHONSAFEPATH="1")  # the project's own modules must not shadow the linter's imports
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "np2torch_lint", "--output-format", "json", "--exit-zero",
                             "--no-cache", "."], cwd=project_dir, env=env, capture_output=True, text=True)
    return json.loads(result.stdout or "[]")


def extra_project(spec: str, mirrors: Path) -> Project:
    repo, _, commit = spec.partition("@")
    mirror = repo.replace("/", "+")
    if not commit:
        git_dir = find_git_dir(mirrors, Project(repo, "HEAD", mirror))
        if git_dir is None:
            raise SystemExit(f"{repo}: no mirror under {mirrors / mirror}")
        commit = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    return Project(repo, commit, mirror)


def sample(found: list[Found], count: int, seed: int, per_repo: int | None) -> list[Found]:
    rng = random.Random(seed)
    ordered = sorted(found)
    if per_repo is None:
        return rng.sample(ordered, min(count, len(ordered)))
    chosen: list[Found] = []
    for repo in sorted({item[0] for item in ordered}):
        mine = [item for item in ordered if item[0] == repo]
        chosen += rng.sample(mine, min(per_repo, len(mine)))
    rest = [item for item in ordered if item not in chosen]
    if len(chosen) < count:
        chosen += rng.sample(rest, min(count - len(chosen), len(rest)))
    return rng.sample(chosen, min(count, len(chosen))) if len(chosen) > count else chosen


def lint_all(projects: list[Project], mirrors: Path, context: int) -> list[dict]:
    """Every default finding of every project, each with its commit and the source lines around it."""
    found: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="np2torch-sample-") as scratch:
        for project in projects:
            git_dir = find_git_dir(mirrors, project)
            if git_dir is None:
                print(f"{project.repo}: no mirror under {mirrors / project.mirror}; left out", file=sys.stderr)
                continue
            folder = Path(scratch) / project.mirror
            folder.mkdir(parents=True)
            extract_python_files(git_dir, project.commit, folder)
            for item in default_findings(folder):
                path, line = item["filename"].removeprefix("./"), item["line"]
                lines = (folder / path).read_text(errors="replace").splitlines()
                first = max(1, line - context)
                found.append({"repo": project.repo, "commit": project.commit, "path": path, "line": line,
                              "code": item["code"], "message": item["message"], "first_line": first,
                              "lines": lines[first - 1:line + 1]})
    return found


def other_mirrors(mirrors: Path, listed: list[Project]) -> list[Project]:
    """The mirrors under the root that no project list names, each at its HEAD."""
    named = {project.mirror for project in listed}
    others = []
    for folder in sorted(mirrors.iterdir()):
        if folder.name in named or "+" not in folder.name or not folder.is_dir():
            continue
        try:
            others.append(extra_project(folder.name.replace("+", "/", 1), mirrors))
        except SystemExit as problem:
            print(problem, file=sys.stderr)
    return others


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path,
                        help=f"where the mirrors are (default: ${MIRROR_VARIABLE}, else {FALLBACK_MIRROR})")
    parser.add_argument("--projects", type=Path, action="append",
                        help="a projects.toml (repeatable; default: the one beside this script)")
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME[@COMMIT]",
                        help="another repository to lint (repeatable)")
    parser.add_argument("--other-mirrors", action="store_true",
                        help="also every mirror under the root that no project list names, at its HEAD")
    parser.add_argument("--only-extra", action="store_true", help="lint only the --repo repositories")
    parser.add_argument("--save", type=Path, metavar="FILE", help="also write every finding (JSON) to FILE")
    parser.add_argument("--load", type=Path, metavar="FILE", help="draw from the findings --save wrote; lint nothing")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--per-repo", type=int, help="at most this many from each repository, first")
    parser.add_argument("--context", type=int, default=6, help="source lines shown before each finding")
    args = parser.parse_args(argv)
    args.mirror = mirror_root(args.mirror)

    if args.load is not None:
        saved = json.loads(args.load.read_text(encoding="utf-8"))
        repositories, found = saved["repositories"], saved["findings"]
    else:
        projects = [] if args.only_extra else [
            project for listed in (args.projects or [HERE / "projects.toml"]) for project in load_projects(listed)]
        projects += [extra_project(spec, args.mirror) for spec in args.repo]
        if args.other_mirrors:
            projects += other_mirrors(args.mirror, projects)
        repositories = [project.repo for project in projects]
        found = lint_all(projects, args.mirror, args.context)
        if args.save is not None:
            args.save.write_text(json.dumps({"repositories": repositories, "findings": found}), encoding="utf-8")
    by_key = {(item["repo"], item["path"], item["line"], item["code"], item["message"]): item for item in found}
    drawn = sample(list(by_key), args.count, args.seed, args.per_repo)
    print(f"{len(found)} default findings in {len({item['repo'] for item in found})} of {len(repositories)} "
          f"repositories; {len(drawn)} drawn (seed {args.seed}) from {len({key[0] for key in drawn})}")
    for number, key in enumerate(drawn, start=1):
        item = by_key[key]
        print(f"\n#{number} {item['repo']}@{item['commit'][:12]} {item['path']}:{item['line']} {item['code']} "
              f"{item['message']}")
        for at, text in enumerate(item["lines"], start=item["first_line"]):
            print(f"{at:6}{'>' if at == item['line'] else ' '} {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
