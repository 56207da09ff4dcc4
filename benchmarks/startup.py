"""Start-up: what np2torch-lint costs before it lints anything, as editors and pre-commit pay it on every call.

Run on demand (not part of the test suite):

    python benchmarks/startup.py                    # 190 files sampled from the installed torch
    python benchmarks/startup.py --files 190 PATH   # another folder to sample the tree from

Each command runs as a user runs it, a fresh ``np2torch-lint`` process, and each figure is the median of
``--repeat`` runs (default 7), in wall-clock seconds and in CPU seconds (the latter drifts less on a busy machine):

- ``python -c pass``, the bare interpreter;
- ``np2torch-lint --version``, and a warm one-file run (its result read from the cache), each as seconds over the
  bare interpreter (goal: at most 0.1 s);
- a tree of ``--files`` files copied into a project of its own: a cold run (empty cache, the default ``-j``) and a
  warm run (nothing changed), and warm as a ratio of cold (goal: at most 0.05x).

``--instructions`` also counts the instructions of the three start-up commands under valgrind's callgrind, which
the load of a shared machine does not move (as ``instructions.py`` does for linting), as multiples of
``python -c pass``.

Python's bytecode files are written on the first run (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's
environment), as an installed package has them, and one run of each command is made before the timed ones.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
#: the console script, as users run it (``python -m`` would put the linted folder first on ``sys.path``)
_SCRIPT = Path(sys.executable).with_name("np2torch-lint")
LINTER = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "np2torch_lint"]
ONE_FILE = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    return env


def seconds(command: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall-clock seconds, and CPU seconds (user and system, the command's worker processes included): on a busy
    machine the second drifts much less than the first."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1) or b"Traceback" in result.stderr:
        raise SystemExit(f"{' '.join(command)} failed: {result.stderr.decode(errors='replace')[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median(command: list[str], repeat: int, cwd: Path | None = None) -> tuple[float, float]:
    seconds(command, cwd)  # bytecode written, caches warm
    return medians([seconds(command, cwd) for _ in range(repeat)])


def medians(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs)


def instructions(command: list[str], cwd: Path | None = None) -> int:
    result = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command], cwd=cwd,
                            env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count for {' '.join(command)}: {result.stderr[-500:]}")
    return int(found.group(1))


def sample_tree(source: Path, count: int, destination: Path, seed: int) -> int:
    files = sorted(path for path in source.rglob("*.py") if "__pycache__" not in path.parts)
    chosen = random.Random(seed).sample(files, min(count, len(files)))
    for path in chosen:
        target = destination / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (destination / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    return len(chosen)


def default_tree_source() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("torch is not installed: give a folder to sample the tree from")
    return Path(spec.origin).parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", nargs="?", type=Path, help="a folder to sample the tree from (default: torch)")
    parser.add_argument("--files", type=int, default=190, help="files in the tree (default: 190)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure, of which the median (default: 7)")
    parser.add_argument("--cold-repeat", type=int, default=3, help="cold runs of the tree (default: 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--instructions", action="store_true", help="also count instructions under callgrind")
    args = parser.parse_args()

    bare = median([sys.executable, "-c", "pass"], args.repeat)
    version = median([*LINTER, "--version"], args.repeat)
    with tempfile.TemporaryDirectory(prefix="np2torch-startup-") as scratch:
        one = Path(scratch) / "one"
        one.mkdir()
        (one / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
        (one / "train.py").write_text(ONE_FILE, encoding="utf-8")
        warm_one = median([*LINTER, "train.py"], args.repeat, one)  # the first run fills the cache
        if args.instructions:
            counts = {name: instructions(command, one) for name, command in (
                ("python -c pass", [sys.executable, "-c", "pass"]), ("--version", [*LINTER, "--version"]),
                ("warm one-file run", [*LINTER, "train.py"]))}

        tree = Path(scratch) / "tree"
        tree.mkdir()
        count = sample_tree(args.source or default_tree_source(), args.files, tree, args.seed)
        cache = tree / ".np2torch_lint_cache"
        colds = []
        for _ in range(args.cold_repeat):
            shutil.rmtree(cache, ignore_errors=True)
            colds.append(seconds([*LINTER, "."], tree))
        cold = medians(colds)
        warm = median([*LINTER, "."], args.repeat, tree)

    def over_bare(name: str, figure: tuple[float, float]) -> None:
        print(f"{name:<30}{figure[0]:.3f} s wall, {figure[0] - bare[0]:+.3f} s over bare; "
              f"{figure[1]:.3f} s CPU, {figure[1] - bare[1]:+.3f} s over bare (goal: <= +0.1 s)")

    print(f"{'python -c pass:':<30}{bare[0]:.3f} s wall, {bare[1]:.3f} s CPU (medians of {args.repeat})")
    over_bare("np2torch-lint --version:", version)
    over_bare("warm one-file run (cached):", warm_one)
    # (CPU time leaves out the cold run's workers, children of the forkserver: the tree is measured by the clock)
    print(f"{f'{count}-file tree, cold:':<30}{cold[0]:.3f} s wall (median of {len(colds)}, empty cache, default -j)")
    print(f"{f'{count}-file tree, warm:':<30}{warm[0]:.3f} s wall, {warm[0] / cold[0]:.3f}x the cold run "
          "(goal: <= 0.05x)")
    if args.instructions:
        bare_count = counts["python -c pass"]
        for name, counted in counts.items():
            print(f"{'instructions, ' + name + ':':<42}{counted:>14,} ({counted / bare_count:.2f}x bare)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
