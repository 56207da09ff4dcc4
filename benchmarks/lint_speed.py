"""How fast is np2torch-lint, as a ratio to a bare ``libcst.parse_module`` loop over the same files?

Run on demand, single process (not part of the test suite):

    python benchmarks/lint_speed.py                      # torch's and numpy's installed sources
    python benchmarks/lint_speed.py --limit 300 PATH...  # a sample, or other folders
    python benchmarks/lint_speed.py --torchfix-python /path/to/venv/bin/python
    python benchmarks/lint_speed.py --project --limit 1000 .venv/lib/python3.11/site-packages/torch

``--project`` copies the files into one project (a folder with its own ``pyproject.toml``, imports between the
files resolving to its modules) and measures project mode: cold (no cache) against the bare parse, warm (nothing
changed) against the bare parse, one file changed against cold, and ``-j 2`` cold against ``-j 1`` cold.

On a shared machine the speed of the same work drifts by 20% within minutes, and a ratio of two measures taken
side by side drifts much less than either. So each ratio is taken in ``--rounds`` rounds (default 3) and the
median is reported, with each round's ratio: in a round of the plain measure the bare parse and the linter take
turns over chunks of ``--chunk`` files (default 40), so both see the same minutes; a round of the cold project
measure (which needs the whole project at once) takes the mean of a bare parse right before and one right after.

TorchFix 0.7.0 (``pip install torchfix==0.7.0``) runs in its lint-only mode (``python -m torchfix --jobs 1``,
without ``--fix``) on the same files, in a subprocess of the interpreter given, or of this one if it can import
``torchfix``. TorchFix pins ``libcst<1.6``; installing it with ``--no-deps`` next to a newer LibCST works and
keeps both tools on the same parser, which is what a fair ratio needs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from np2torch_lint.cli import lint_paths  # noqa: E402
from np2torch_lint.commands import Performance, lint  # noqa: E402
from np2torch_lint.config import Settings, load_settings  # noqa: E402
from np2torch_lint.files import iter_python_files  # noqa: E402


def default_corpus() -> list[str]:
    folders = []
    for package in ("torch", "numpy"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            folders.append(str(Path(spec.origin).parent))
    return folders


def collect_files(paths: list[str], limit: int | None, seed: int) -> list[str]:
    files = sorted(item for item in iter_python_files(paths, include=("*.py", "*.pyi")) if isinstance(item, str))
    parsable = []
    for path in files:  # keep the files LibCST parses, so that every tool sees the same work
        try:
            text = Path(path).read_bytes().decode("utf-8")
            libcst.parse_module(text)
        except Exception:  # noqa: BLE001 - a file the bare loop cannot parse is left out of every measure
            continue
        parsable.append(path)
    if limit is not None and limit < len(parsable):
        parsable = sorted(random.Random(seed).sample(parsable, limit))
    return parsable


def time_bare_parse(files: list[str], only_mentioning_torch: bool = False) -> float:
    start = time.perf_counter()
    for path in files:
        text = Path(path).read_bytes().decode("utf-8")
        if only_mentioning_torch and "torch" not in text:
            continue
        libcst.parse_module(text)
    return time.perf_counter() - start


def interleaved_plain_round(files: list[str], chunk: int) -> tuple[float, float, int]:
    """One round of the plain measure: (bare parse seconds, np2torch-lint seconds, findings), the two taking turns
    over chunks of the files."""
    bare = lint = 0.0
    found = 0
    for start in range(0, len(files), chunk):
        part = files[start:start + chunk]
        bare += time_bare_parse(part)
        elapsed, part_found = time_np2torch_lint(part)
        lint += elapsed
        found += part_found
    return bare, lint, found


#: the plain measure lints each file on its own: its settings' project is an empty folder no linted file lies in
#: (with the default, the current folder, files under it, such as an installed torch in ``.venv``, would be
#: linted as one project, and each chunk of a round would work out the same summaries again)
_PLAIN_ROOT = Path(tempfile.mkdtemp(prefix="np2torch-lint-plain-"))


def time_np2torch_lint(files: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    diagnostics, errors = lint_paths(files, Settings(root=_PLAIN_ROOT))
    elapsed = time.perf_counter() - start
    if errors:
        print(f"  np2torch-lint could not lint {len(errors)} files, e.g. {errors[0]}")
    return elapsed, len(diagnostics)


def time_torchfix(files: list[str], python: str) -> float | None:
    # one process, as the other measures; file names are passed in chunks below the argument-size limit
    start = time.perf_counter()
    chunk: list[str] = []
    size = 0
    for path in [*files, None]:
        if path is not None and size + len(path) < 100_000:
            chunk.append(path)
            size += len(path) + 1
            continue
        result = subprocess.run([python, "-m", "torchfix", "--jobs", "1", *chunk], capture_output=True, text=True)
        if result.returncode not in (0, 1):
            print(f"  TorchFix failed ({result.returncode}): {result.stderr.strip()[-300:]}")
            return None
        chunk, size = ([path], len(path) + 1) if path is not None else ([], 0)
    return time.perf_counter() - start


def median_ratio(pairs: list[tuple[float, float]]) -> float:
    """The median of ``measure / bare`` over rounds of (bare, measure)."""
    return statistics.median(measure / bare for bare, measure in pairs)


def rounds_text(pairs: list[tuple[float, float]]) -> str:
    return ", ".join(f"{measure / bare:.2f}" for bare, measure in pairs)


def project_measures(files: list[str], rounds: int) -> None:
    """Cold, warm, one file changed, and -j 2: the files copied into one project (with its own pyproject.toml,
    keeping their paths under the package root, so that imports between them resolve to its modules)."""
    common = Path(os.path.commonpath([str(Path(path).resolve().parent) for path in files]))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        for path in files:
            target = root / Path(path).resolve().relative_to(common.parent)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
        settings = load_settings(root / "pyproject.toml")
        cache = Path(folder) / "cache"

        def run(jobs: int) -> float:
            start = time.perf_counter()
            lint([str(root)], settings, performance=Performance(jobs=jobs, cache=True, cache_dir=cache))
            return time.perf_counter() - start

        colds = []
        for _ in range(rounds):
            shutil.rmtree(cache, ignore_errors=True)
            before = time_bare_parse(files)
            cold = run(1)
            colds.append(((before + time_bare_parse(files)) / 2, cold))
        bare, cold = colds[-1]
        warm = run(1)
        changed = root / Path(sorted(files)[len(files) // 2]).resolve().relative_to(common.parent)
        changed.write_text(changed.read_text(encoding="utf-8") + "\nCHANGED_BY_THE_BENCHMARK = 1\n",
                           encoding="utf-8")
        one_changed = run(1)
        shutil.rmtree(cache)
        cold_two = run(2)
        print(f"project mode, {len(files)} files under {common.name}/ (imports between them followed):")
        print(f"  cold, -j 1 (no cache):                {cold:8.2f} s   {median_ratio(colds):.2f}x the bare parse "
              f"(median of rounds: {rounds_text(colds)})")
        print(f"  warm, nothing changed:                {warm:8.2f} s   {warm / bare:.3f}x the bare parse")
        print(f"  one file changed ({changed.name}):    {one_changed:8.2f} s   {one_changed / cold:.3f}x cold")
        print(f"  cold, -j 2:                           {cold_two:8.2f} s   {cold_two / cold:.2f}x cold -j 1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="folders or files to lint (default: installed torch and numpy)")
    parser.add_argument("--limit", type=int, help="lint a random sample of this many files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torchfix-python", help="an interpreter that has torchfix 0.7.0 installed")
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--project", action="store_true",
                        help="also measure project mode: cold, warm, one file changed, -j 2 (a copy of the files)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of (bare parse, measure) for the ratios; the median is reported")
    parser.add_argument("--chunk", type=int, default=40,
                        help="files per turn of the bare parse and the linter in a round of the plain measure")
    args = parser.parse_args()

    files = collect_files(args.paths or default_corpus(), args.limit, args.seed)
    lines = sum(Path(path).read_bytes().count(b"\n") for path in files)
    print(f"corpus: {len(files)} files, {lines} lines")

    plain = []
    for _ in range(args.rounds):
        bare, lint, found = interleaved_plain_round(files, args.chunk)
        plain.append((bare, lint))
    bare_torch = time_bare_parse(files, only_mentioning_torch=True)
    print(f"bare libcst.parse_module loop:        {bare:8.2f} s   1.00x")
    print(f"  (only the files that mention torch:  {bare_torch:8.2f} s   {bare_torch / bare:.2f}x)")
    print(f"np2torch-lint (read, parse, analyse):  {lint:8.2f} s   {median_ratio(plain):.2f}x  "
          f"(median of rounds: {rounds_text(plain)}; {found} findings)")

    if args.project:
        project_measures(files, args.rounds)
    if not args.skip_torchfix:
        python = args.torchfix_python
        if python is None and importlib.util.find_spec("torchfix") is not None:
            python = sys.executable
        if python is None:
            print("TorchFix: not installed; pip install --no-deps torchfix==0.7.0 pyyaml, or pass --torchfix-python")
        else:
            torchfix = time_torchfix(files, python)
            if torchfix is not None:
                print(f"TorchFix 0.7.0 lint-only (--jobs 1):   {torchfix:8.2f} s   {torchfix / bare:.2f}x  "
                      f"(np2torch-lint is {torchfix / lint:.1f}x faster)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
