"""``-j N`` worker processes, the forkserver and the resource tracker end with the command: killed (SIGKILL),
terminated (SIGTERM) or interrupted (SIGINT, sent to it alone)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")

BLOCK = "if flag == {i}:\n    a{i} = w.numpy()\n    t{i} = torch.tensor(np.zeros(3, dtype=np.float32))\n"


def _parents() -> dict[int, int]:
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as stream:
                fields = stream.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        if fields[0] != "Z":  # a zombie has ended; only its parent's wait is missing
            parents[int(name)] = int(fields[1])
    return parents


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found, added = set(), {pid}
    while added:
        added = {child for child, parent in parents.items() if parent in added and child not in found}
        found |= added
    return found


@pytest.mark.parametrize(("fixing", "sent"), [
    (False, signal.SIGKILL), (False, signal.SIGTERM), (False, signal.SIGINT), (True, signal.SIGKILL),
], ids=["lint-kill", "lint-term", "lint-int", "fix-kill"])
def test_workers_and_helper_processes_end_with_their_parent(tmp_path, fixing, sent):
    for n in range(32):  # minutes of work on two cores: the run must not end by finishing it
        text = "import numpy as np\nimport torch\n\nw = torch.ones(2, requires_grad=True)\n"
        (tmp_path / f"module_{n}.py").write_text(text + "".join(BLOCK.format(i=i) for i in range(400)))
    argv = [sys.executable, "-m", "np2torch_lint", *(["--fix", "--unsafe-fixes"] if fixing else []),
            "-j", "2", "--no-cache", str(tmp_path)]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        # the resource tracker, the forkserver and its two workers
        while len(children) < 4 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            children = _descendants(process.pid)
        assert len(children) >= 4 and process.poll() is None, "the run ended before its workers were seen"
        process.send_signal(sent)
        process.wait(timeout=10)  # Ctrl-C ends the run now, not once the work queued is done
        deadline = time.monotonic() + 10
        while (left := children & set(_parents())) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"still running 10 s after the parent ended: {sorted(left)}"
    finally:  # what is left (the test failed): also the processes seen, which the parent's end orphaned
        if process.poll() is None:
            process.kill()
        for pid in (_descendants(process.pid) | children) & set(_parents()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
