"""Helpers shared by the linter tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from np2torch_lint.text_edits import source_lines

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
#: a trailing ``# NPT001`` (or ``# NPT001, NPT003``) marks the findings expected on a fixture's line
EXPECTATION = re.compile(r"#\s*(NPT\d{3}(?:\s*,\s*NPT\d{3})*)\s*$")


def expected_findings(path: Path) -> Counter:
    """(line, code) -> how many findings the file's trailing comments expect there."""
    expected: Counter = Counter()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECTATION.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group(1)):
                expected[(number, code)] += 1
    return expected


def run_command(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run a console command of this environment (``np2torch-lint``, ``flake8``) as a user would."""
    executable = Path(sys.executable).with_name(args[0])
    command = [str(executable), *args[1:]] if executable.exists() else [sys.executable, "-m", *args]
    return subprocess.run(command, cwd=cwd or REPO, input=stdin, capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def run_main(main, capsys, *argv: str) -> tuple[int, str, str]:
    """Call a command's ``main(argv)`` in this process; returns (exit status, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def apply_edits(text: str, edits: list[dict]) -> str:
    """Apply ruff-shaped edits (positions in ``text``, 1-based) from the last to the first."""
    starts = [0]
    for line in source_lines(text):
        starts.append(starts[-1] + len(line))

    def offset(where: dict) -> int:
        return starts[where["row"] - 1] + where["column"] - 1

    for edit in sorted(edits, key=lambda e: (e["location"]["row"], e["location"]["column"]), reverse=True):
        text = text[:offset(edit["location"])] + edit["content"] + text[offset(edit["end_location"]):]
    return text


_RUN_PROGRAMS = """
import contextlib, io, json, runpy, sys, traceback
results = {}
for path in sys.argv[1:]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        results[path] = [True, out.getvalue(), ""]
    except BaseException:  # noqa: BLE001 - reported back to the test
        results[path] = [False, out.getvalue(), traceback.format_exc()]
print(json.dumps(results))
"""


def run_programs(paths: list[Path]) -> dict[str, tuple[bool, str, str]]:
    """Run each program as ``__main__`` in one fresh interpreter (torch is imported once): path -> (ran without
    an exception, its output, the traceback)."""
    result = subprocess.run([sys.executable, "-c", _RUN_PROGRAMS, *map(str, paths)], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return {path: (ok, out, error) for path, (ok, out, error) in json.loads(result.stdout.splitlines()[-1]).items()}
