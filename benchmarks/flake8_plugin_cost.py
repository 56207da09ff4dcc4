"""What does installing np2torch-lint cost a flake8 run that selects no NPT code?

Run on demand (not part of the test suite); it needs pip to reach the package index or its cache:

    python benchmarks/flake8_plugin_cost.py                  # 50 files of torch's installed sources
    python benchmarks/flake8_plugin_cost.py --files 50 --runs 10 --select E,F,W PATH...
    python benchmarks/flake8_plugin_cost.py --revision main      # the plugin as committed in a revision

Two fresh virtual environments get the same flake8, LibCST and pathspec; only the second gets np2torch-lint (a
wheel built from a copy of this checkout, or of a git revision, installed as users install it, not editable).
``flake8 --select E,F,W`` then runs on the same files in each, alternately, and the medians are compared: the
plugin is truly absent from the first, rather than disabled.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def sample_files(paths: list[str], count: int, seed: int) -> list[str]:
    files = sorted(str(path) for folder in paths for path in Path(folder).rglob("*.py") if path.stat().st_size)
    return sorted(random.Random(seed).sample(files, min(count, len(files))))


def copy_source(target: Path, revision: str | None) -> Path:
    """The sources to build, copied so that building leaves nothing behind in the checkout."""
    if revision is not None:
        target.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", revision], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        return target
    shutil.copytree(REPO, target, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".*cache"))
    return target


def make_environment(folder: Path, packages: list[str]) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    return python


def time_flake8(python: Path, options: list[str], files: list[str]) -> float:
    # the flake8 script, from a neutral folder: ``python -m`` would put the current folder first on sys.path,
    # where a checkout's np2torch_lint could stand in for the installed one
    start = time.perf_counter()
    result = subprocess.run([str(python.with_name("flake8")), *options, *files], capture_output=True, text=True,
                            cwd=python.parents[1])
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1) or result.stderr or "NPT" in result.stdout:
        raise SystemExit(f"flake8 failed or reported NPT codes: {result.stderr[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="folders to sample files from (default: installed torch)")
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--select", default="E,F,W")
    parser.add_argument("--jobs", default=None, help="flake8's -j (default: flake8's, one per CPU)")
    parser.add_argument("--revision", help="build np2torch-lint as committed in this git revision (default: the "
                                           "working tree as it is)")
    args = parser.parse_args()

    spec = importlib.util.find_spec("torch")
    corpus = args.paths or ([str(Path(spec.origin).parent)] if spec and spec.origin else [])
    files = sample_files(corpus, args.files, args.seed)
    lines = sum(Path(path).read_bytes().count(b"\n") for path in files)
    options = ["--select", args.select] + (["-j", args.jobs] if args.jobs else [])
    print(f"corpus: {len(files)} files, {lines} lines; flake8 {' '.join(options)}")

    shared = [f"flake8=={importlib.metadata.version('flake8')}", f"libcst=={importlib.metadata.version('libcst')}",
              f"pathspec=={importlib.metadata.version('pathspec')}"]
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        source = copy_source(root / "source", args.revision)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(root / "wheel"), str(source)], check=True, cwd=root)
        [wheel] = (root / "wheel").glob("*.whl")
        without = make_environment(root / "without", shared)
        with_plugin = make_environment(root / "with", [*shared, str(wheel)])
        check = subprocess.run([str(with_plugin.with_name("flake8")), "--version"], capture_output=True, text=True)
        assert "np2torch-lint" in check.stdout, check.stdout
        times: dict[str, list[float]] = {"without": [], "with": []}
        time_flake8(without, options, files)  # warm the file cache once
        for _ in range(args.runs):
            times["without"].append(time_flake8(without, options, files))
            times["with"].append(time_flake8(with_plugin, options, files))
    before, after = statistics.median(times["without"]), statistics.median(times["with"])
    print(f"without the plugin: median {before:.3f} s  (runs: {', '.join(f'{t:.2f}' for t in times['without'])})")
    print(f"with the plugin:    median {after:.3f} s  (runs: {', '.join(f'{t:.2f}' for t in times['with'])})")
    print(f"ratio with/without: {after / before:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
