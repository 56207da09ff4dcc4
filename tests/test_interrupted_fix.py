"""np2torch-fix killed (SIGKILL) at random moments: every file is its original or its fully fixed version,
never truncated or mixed, and the next run leaves no temporary file behind."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from np2torch_lint.fixer import fix_text
from np2torch_lint.fixes import FixStyle
from np2torch_lint.writing import TEMPORARY_PREFIX

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

TEMPLATE = ("import numpy as np\nimport torch\n\nw = torch.ones({n}, requires_grad=True)\n"
            "values = w.numpy()  # file {n}\nbatch = torch.from_numpy(np.random.rand({n}, 3))\n"
            + "padding = {n!r}\n" * 40)


def test_a_killed_fix_leaves_each_file_whole_and_the_next_run_cleans_up(tmp_path):
    rng = random.Random(13)
    originals: dict[Path, str] = {}
    for n in range(300):
        path = tmp_path / f"pkg{n % 6}" / f"module_{n}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(TEMPLATE.format(n=n))
        originals[path] = path.read_text()
    fixed = {path: fix_text(text, str(path), style=FixStyle.HELPERS, unsafe=True).text
             for path, text in originals.items()}
    command = [sys.executable, "-m", "np2torch_lint", "--fix", "--unsafe-fixes", str(tmp_path)]
    interrupted_mid_tree = False
    for _ in range(4):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 3.0))
        process.send_signal(signal.SIGKILL)
        process.wait()
        for path in originals:
            assert path.read_text() in (originals[path], fixed[path]), path
        done = sum(path.read_text() == fixed[path] for path in originals)
        interrupted_mid_tree |= 0 < done < len(originals)
    assert interrupted_mid_tree, "no kill landed while files were being written: the test proved nothing"
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert finished.returncode in (0, 1), finished.stderr
    assert all(path.read_text() == fixed[path] for path in originals)
    assert not [name for name in os.listdir(tmp_path) if name.startswith(TEMPORARY_PREFIX)]
    assert not list(tmp_path.rglob(f"{TEMPORARY_PREFIX}*"))


def test_the_next_run_removes_only_temporary_files_of_runs_no_longer_running(tmp_path):
    target = tmp_path / "bad.py"
    target.write_text("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{TEMPORARY_PREFIX}{int(dead.stdout)}-abc.tmp"
    alive = tmp_path / f"{TEMPORARY_PREFIX}{os.getpid()}-def.tmp"  # this process still runs
    unrelated = tmp_path / ".np2torch-fix-notes.txt"
    for path in (stale, alive, unrelated):
        path.write_text("partial")
    subprocess.run([sys.executable, "-m", "np2torch_lint", "--fix", str(tmp_path)], capture_output=True, timeout=120)
    assert not stale.exists() and alive.exists() and unrelated.exists()
