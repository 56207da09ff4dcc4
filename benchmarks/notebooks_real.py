"""Lint and fix real notebooks, checking what np2torch-fix promises for each; run on demand, not in the tests.

    python benchmarks/notebooks_real.py PATH.ipynb ...

For each notebook: its findings by rule, then (safe, and with --unsafe-fixes) the fixes, checked: the fixed
notebook validates with nbformat, everything but the changed cells' "source" values is byte-for-byte the same, a
second run changes nothing, and the fixed code cells have no findings the run could have fixed. Public notebooks
are fetched by whoever runs this; none is kept in the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from np2torch_lint.diagnostics import Applicability  # noqa: E402
from np2torch_lint.files import read_source  # noqa: E402
from np2torch_lint.notebooks import fix_notebook, lint_notebook  # noqa: E402
from np2torch_lint.notebooks.reading import without_sources  # noqa: E402


def check(path: str) -> list[str]:
    raw = read_source(path).text
    started = time.perf_counter()
    findings = lint_notebook(raw, path)
    took = time.perf_counter() - started
    report = [f"{path}: {len(findings)} findings {dict(Counter(d.code for d in findings))} in {took * 1000:.0f} ms"]
    for unsafe in (False, True):
        outcome = fix_notebook(raw, path, unsafe=unsafe)
        problems = []
        nbformat.validate(json.loads(outcome.text))
        if without_sources(outcome.text) != without_sources(raw) and not outcome.text.count('"cell_type"') > \
                raw.count('"cell_type"'):
            problems.append("bytes outside the changed sources differ")
        if fix_notebook(outcome.text, path, unsafe=unsafe).text != outcome.text:
            problems.append("a second run changes it again")
        fixable = [d for d in outcome.remaining if d.fix is not None
                   and (unsafe or d.fix.applicability is Applicability.SAFE)]
        if fixable:
            problems.append(f"{len(fixable)} fixable findings left")
        cells = ", ".join(str(change.cell) for change in outcome.changes)
        report.append(f"  {'unsafe' if unsafe else 'safe'} fixes: {outcome.fixed} fixed in cells [{cells}], "
                      f"{len(outcome.remaining)} left, validates with nbformat"
                      + (f"; PROBLEMS: {'; '.join(problems)}" if problems else "; checks pass"))
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    for path in parser.parse_args().paths:
        print("\n".join(check(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
