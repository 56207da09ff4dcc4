"""Does the cost of linting and fixing grow linearly? Time and peak memory as ratios to a bare LibCST parse.

Run on demand (not part of the test suite):

    python benchmarks/scaling.py                    # every shape at 1x, 2x, 4x and 8x
    python benchmarks/scaling.py --shapes elif --sizes 1 2 4 8 16 --scale 2
    python benchmarks/scaling.py --clock wall       # wall-clock time instead of CPU time
    python benchmarks/scaling.py --repeat 5         # the least time of 5 processes per measure (default 3)

The shapes are those that broke linearity once (issues 13 and 22): many flat ``if`` blocks with two findings each,
one function of many statements, a huge literal with one finding, a long ``if/elif`` chain, and a finding on every
line. Each measure runs in a fresh process (one file, ``lint_text``/``fix_text`` as the commands call them, and the
findings with each fix's edits as the JSON formats and SARIF compute them), after a tiny file was fixed there (what
a process pays once stays out), so that peak memory (``ru_maxrss``, less the process's before the measure) is its
own. Time is the process's CPU time (all its threads) by default, the least of a few processes: on a shared machine
the wall clock spreads by 2x and more, and even CPU time by 1.5x. Goals: lint within 2x the parse, fix and edits
within 3x, ratios roughly constant as the size grows (the cost per finding does not grow), and no traceback at any
size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def flat_ifs(blocks: int) -> str:
    lines = ["import numpy as np", "import torch", "", "w = torch.ones(2, requires_grad=True)", ""]
    for i in range(blocks):
        lines += [f"if flag == {i}:", f"    a{i} = w.numpy()",
                  f"    t{i} = torch.tensor(np.zeros(3, dtype=np.float32))"]
    return "\n".join(lines) + "\n"


def one_function(statements: int) -> str:
    lines = ["import numpy as np", "import torch", "", "", "def run(flag):",
             "    w = torch.ones(2, requires_grad=True)"]
    for i in range(statements):
        lines.append(f"    a{i} = w.numpy()" if i % 33 == 0 else f"    x{i} = flag + {i} * np.pi")
    return "\n".join(lines) + "\n"


def huge_literal(numbers: int) -> str:
    data = ",\n    ".join(", ".join(str((i + j) % 97) for j in range(10)) for i in range(0, numbers, 10))
    return f"import torch\n\nw = torch.ones(2, requires_grad=True)\nDATA = [\n    {data},\n]\nw.numpy()\n"


def dense(findings: int) -> str:
    lines = ["import torch", "", "w = torch.ones(2, requires_grad=True)"]
    lines += [f"a{i} = w.numpy()" for i in range(findings)]
    return "\n".join(lines) + "\n"


def elif_chain(branches: int) -> str:
    lines = ["import torch", "", "w = torch.ones(2, requires_grad=True)", "if flag == 0:", "    a = w.numpy()"]
    for i in range(1, branches):
        lines += [f"elif flag == {i}:", "    a = w.numpy()"]
    return "\n".join(lines) + "\n"


#: shape -> (generator, size at 1x, what the size counts)
SHAPES = {
    "flat": (flat_ifs, 1000, "if blocks, 2 findings each"),
    "function": (one_function, 5000, "statements in one function, 1 finding in 33"),
    "literal": (huge_literal, 100_000, "numbers in one literal list, 1 finding"),
    "elif": (elif_chain, 1000, "if/elif branches, 1 finding each"),
    "dense": (dense, 1000, "module-level statements, each a finding"),
}

_MEASURE = r"""
import json, resource, sys, time
import libcst
from np2torch_lint.edits import FixEdits
from np2torch_lint.engine import analyse_text, lint_text, run_with_deep_stack
from np2torch_lint.files import SourceError
from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle
from np2torch_lint.noqa import filter_suppressed
what, path, clock = sys.argv[1], sys.argv[2], getattr(time, sys.argv[3])
text = open(path, encoding="utf-8").read()
# what a process pays once (the parser's and the library models' first use) stays out of every measure
warm_up = ("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"
           "t = torch.tensor(np.ones(2))\n")
run_with_deep_stack(libcst.parse_module, warm_up)
fix_text(warm_up, "warm_up.py", unsafe=True)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = clock()
outcome = ""
try:
    if what == "parse":
        run_with_deep_stack(libcst.parse_module, text)
    elif what == "lint":
        outcome = f"{len(filter_suppressed(lint_text(text, path), text))} findings"
    elif what == "fix":
        fixed = fix_text(text, path, unsafe=True)
        outcome = f"{fixed.fixed} fixed, {len(fixed.remaining)} left"
    elif what == "edits":  # as commands.lint does for the formats that show each fix's edits
        analysis = analyse_text(text, path)
        kept = set(map(id, filter_suppressed(analysis.diagnostics, text)))
        edits = FixEdits(text, analysis.module, analysis.spans, FixStyle.HELPERS, analysis.facts.module_names)
        shown = sum(len(edits.of(finding)) for finding, diagnostic in zip(analysis.findings, analysis.diagnostics)
                    if id(diagnostic) in kept)
        outcome = f"{shown} edits"
except SourceError as error:
    outcome = f"refused: {error}"
elapsed = clock() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": elapsed, "peak_kib": peak, "baseline_kib": before, "outcome": outcome}))
"""


def measure(what: str, path: Path, clock: str = "process_time", repeat: int = 1) -> dict:
    """One measure in fresh processes: the run that took least time of ``repeat``."""
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", _MEASURE, what, str(path), clock], capture_output=True,
                                text=True, cwd=REPO)
        if result.returncode != 0:
            return {"seconds": float("nan"), "peak_kib": 0, "baseline_kib": 0,
                    "outcome": "CRASH: " + (result.stderr.strip().splitlines() or ["no output"])[-1]}
        runs.append(json.loads(result.stdout.splitlines()[-1]))
    return min(runs, key=lambda run: run["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="*", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--sizes", nargs="*", type=int, default=[1, 2, 4, 8], help="multiples of the 1x size")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every 1x size (issue 13's table: "
                                                                 "function 4, literal 10)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="the process's CPU time (default) or the wall clock")
    parser.add_argument("--repeat", type=int, default=3, help="processes per measure; the least time is shown")
    args = parser.parse_args()
    clock = "process_time" if args.clock == "cpu" else "perf_counter"
    print(f"{'shape':9} {'size':>9} {'parse s':>8} {'lint/parse':>10} {'fix/parse':>9} {'edits/parse':>11} "
          f"{'lint mem':>8} {'fix mem':>8}  outcome")
    with tempfile.TemporaryDirectory() as folder:
        for shape in args.shapes:
            generate, base, unit = SHAPES[shape]
            print(f"# {shape}: {unit}")
            for multiple in args.sizes:
                size = int(base * args.scale * multiple)
                path = Path(folder) / f"{shape}_{size}.py"
                path.write_text(generate(size), encoding="utf-8")
                parse, lint, fix, edits = (measure(what, path, clock, args.repeat)
                                           for what in ("parse", "lint", "fix", "edits"))
                grown = [max(m["peak_kib"] - m["baseline_kib"], 1) for m in (parse, lint, fix)]
                print(f"{shape:9} {size:>9} {parse['seconds']:8.2f} {lint['seconds'] / parse['seconds']:10.2f} "
                      f"{fix['seconds'] / parse['seconds']:9.2f} {edits['seconds'] / parse['seconds']:11.2f} "
                      f"{grown[1] / grown[0]:8.2f} {grown[2] / grown[0]:8.2f}"
                      f"  lint: {lint['outcome']}; fix: {fix['outcome']}; {edits['outcome']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
