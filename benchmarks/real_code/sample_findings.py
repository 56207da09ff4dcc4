"""A seeded random sample of what a newcomer sees: the default findings on real projects, to be read by hand.

Run on demand (not part of the test suite):

    python benchmarks/real_code/sample_findings.py --seed 24 --count 40               # every project of projects.toml
    python benchmarks/real_code/sample_findings.py --per-repo 2 --count 32 --repo openai/CLIP@d05afc4...

Each project is extracted at its commit (its ``*.py`` files, as ``recall.py`` does; ``--repo owner/name@commit``
adds one that ``projects.toml`` does not list, ``@commit`` defaulting to the mirror's HEAD) and linted by this
checkout with the default settings (``python -m np2torch_lint --output-format json .``: no configuration, as a
newcomer runs it). The findings are sorted, then sampled with ``random.Random(seed)``: uniformly, or with
``--per-repo N`` at most N from each repository first (so that a few repositories do not fill the sample), then at
random from the rest until ``--count``. Each finding is printed with the lines before it, for a verdict by hand:
worth acting on or not, and why.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path,
                        help=f"where the mirrors are (default: ${MIRROR_VARIABLE}, else {FALLBACK_MIRROR})")
    parser.add_argument("--projects", type=Path, default=HERE / "projects.toml")
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME[@COMMIT]",
                        help="another repository to lint (repeatable)")
    parser.add_argument("--only-extra", action="store_true", help="lint only the --repo repositories")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--per-repo", type=int, help="at most this many from each repository, first")
    parser.add_argument("--context", type=int, default=6, help="source lines shown before each finding")
    args = parser.parse_args()
    args.mirror = mirror_root(args.mirror)

    projects = [] if args.only_extra else load_projects(args.projects)
    projects += [extra_project(spec, args.mirror) for spec in args.repo]
    found: list[Found] = []
    sources: dict[tuple[str, str], list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="np2torch-sample-") as scratch:
        for project in projects:
            git_dir = find_git_dir(args.mirror, project)
            if git_dir is None:
                print(f"{project.repo}: no mirror under {args.mirror / project.mirror}; left out", file=sys.stderr)
                continue
            folder = Path(scratch) / project.mirror
            folder.mkdir(parents=True)
            extract_python_files(git_dir, project.commit, folder)
            for item in default_findings(folder):
                path = item["filename"].removeprefix("./")
                found.append((project.repo, path, item["line"], item["code"], item["message"]))
                if (project.repo, path) not in sources:
                    sources[(project.repo, path)] = (folder / path).read_text(errors="replace").splitlines()
        drawn = sample(found, args.count, args.seed, args.per_repo)
        print(f"{len(found)} default findings in {len({item[0] for item in found})} of {len(projects)} "
              f"repositories; {len(drawn)} drawn (seed {args.seed}) from {len({item[0] for item in drawn})}")
        commits = {project.repo: project.commit for project in projects}
        for number, (repo, path, line, code, message) in enumerate(drawn, start=1):
            print(f"\n#{number} {repo}@{commits[repo][:12]} {path}:{line} {code} {message}")
            lines = sources[(repo, path)]
            for at in range(max(1, line - args.context), min(len(lines), line + 1) + 1):
                print(f"{at:6}{'>' if at == line else ' '} {lines[at - 1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
