"""How fast is np2torch-lint, as a ratio to a bare ``libcst.parse_module`` loop over the same files?

Run on demand, single process (not part of the test suite):

    python benchmarks/lint_speed.py                      # torch's and numpy's installed sources
    python benchmarks/lint_speed.py --limit 300 PATH...  # a sample, or other folders
    python benchmarks/lint_speed.py --torchfix-python /path/to/venv/bin/python

TorchFix 0.7.0 (``pip install torchfix==0.7.0``) runs in its lint-only mode (``python -m torchfix --jobs 1``,
without ``--fix``) on the same files, in a subprocess of the interpreter given, or of this one if it can import
``torchfix``. TorchFix pins ``libcst<1.6``; installing it with ``--no-deps`` next to a newer LibCST works and
keeps both tools on the same parser, which is what a fair ratio needs.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import time
from pathlib import Path

import libcst

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from np2torch_lint.cli import lint_paths  # noqa: E402
from np2torch_lint.config import Settings  # noqa: E402
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


def time_np2torch_lint(files: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    diagnostics, errors = lint_paths(files, Settings())
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="folders or files to lint (default: installed torch and numpy)")
    parser.add_argument("--limit", type=int, help="lint a random sample of this many files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torchfix-python", help="an interpreter that has torchfix 0.7.0 installed")
    parser.add_argument("--skip-torchfix", action="store_true")
    args = parser.parse_args()

    files = collect_files(args.paths or default_corpus(), args.limit, args.seed)
    lines = sum(Path(path).read_bytes().count(b"\n") for path in files)
    print(f"corpus: {len(files)} files, {lines} lines")

    bare = time_bare_parse(files)
    bare_torch = time_bare_parse(files, only_mentioning_torch=True)
    lint, found = time_np2torch_lint(files)
    print(f"bare libcst.parse_module loop:        {bare:8.2f} s   1.00x")
    print(f"  (only the files that mention torch:  {bare_torch:8.2f} s   {bare_torch / bare:.2f}x)")
    print(f"np2torch-lint (read, parse, analyse):  {lint:8.2f} s   {lint / bare:.2f}x  "
          f"({lint / bare_torch:.2f}x the torch-only parse; {found} findings)")

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
