"""Helpers shared by the linter tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"


def run_command(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """Run a console command of this environment (``np2torch-lint``, ``flake8``) as a user would."""
    executable = Path(sys.executable).with_name(args[0])
    command = [str(executable), *args[1:]] if executable.exists() else [sys.executable, "-m", *args]
    return subprocess.run(command, cwd=cwd or REPO, input=stdin, capture_output=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


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
