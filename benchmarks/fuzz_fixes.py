"""Mutation fuzzing at scale: the rules' patterns inserted at random valid places of real-shaped files.

    python benchmarks/fuzz_fixes.py                 # 10,000 programs
    python benchmarks/fuzz_fixes.py --programs 500 --seed 7

Each program is linted and fixed in both styles, safe and unsafe; it fails when anything raises, when the fixed
code does not compile, when a second fix changes it, or when a comment is lost (tests/mutations.py). The test
suite runs the same check with a small budget (tests/test_fuzz_fixes.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from mutations import check_program, compiles, mutate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    failures: list[str] = []
    checked = rejected = 0
    start = time.perf_counter()
    for number in range(args.programs):
        program = mutate(random.Random(args.seed * 1_000_003 + number))
        if not compiles(program.text):
            rejected += 1
            continue
        checked += 1
        try:
            problem = check_program(program)
        except Exception:  # noqa: BLE001 - a crash is what this looks for
            problem = f"{program.host}: crashed\n{traceback.format_exc()}"
        if problem is not None:
            failures.append(f"program {number}: {problem}")
            print(failures[-1], flush=True)
        if (number + 1) % 500 == 0:
            print(f"{number + 1} programs, {len(failures)} failures, {time.perf_counter() - start:.0f} s", flush=True)
    print(f"{checked} programs checked ({rejected} mutations Python rejects skipped), {len(failures)} failures, "
          f"{time.perf_counter() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
