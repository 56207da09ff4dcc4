"""A progress line on standard error for a run that takes more than about a second, on a terminal only: never in a
pipe, a file or a CI log. The terminal here is a real pseudo-terminal (the pty module)."""

from __future__ import annotations

import io
import os
import pty
import select
import sys

import pytest

from np2torch_lint import progress
from np2torch_lint.cli import main
from np2torch_lint.progress import Progress

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")


@pytest.fixture
def terminal():
    """A pseudo-terminal: what is written to ``stream`` is read back from ``read()``."""
    controller, terminal_end = pty.openpty()
    stream = os.fdopen(terminal_end, "w", encoding="utf-8")

    def read() -> str:
        stream.flush()
        chunks = []
        while select.select([controller], [], [], 0.2)[0]:  # what is there, without waiting for more
            chunks.append(os.read(controller, 65536))
        return b"".join(chunks).decode()

    yield stream, read
    stream.close()
    os.close(controller)


def lint_tree(tmp_path, monkeypatch, stream, count: int = 4) -> int:
    for n in range(count):
        (tmp_path / f"m{n}.py").write_text(BAD)
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)  # as if the run took longer than a second
    monkeypatch.setattr(progress, "_EVERY", 0.0)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    return main(["--no-cache", "-j", "1", "--output-format", "json", str(tmp_path)])


def test_a_long_run_on_a_terminal_shows_progress_and_erases_it(tmp_path, monkeypatch, terminal, capsys):
    stream, read = terminal
    assert lint_tree(tmp_path, monkeypatch, stream) == 1
    shown = read()
    assert "\rlinted 1 of 4 files\x1b[K" in shown and "\rlinted 4 of 4 files\x1b[K" in shown
    assert shown.endswith("\r\x1b[K")  # erased before the report
    assert len(__import__("json").loads(capsys.readouterr().out)) == 4  # standard output holds the report only


def test_no_progress_in_a_pipe_or_a_ci_log(tmp_path, monkeypatch, terminal):
    piped = io.StringIO()
    assert lint_tree(tmp_path, monkeypatch, piped) == 1
    assert piped.getvalue() == ""
    stream, read = terminal
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(sys, "stderr", stream)
    main(["--no-cache", "-j", "1", str(tmp_path)])
    assert read() == ""


def test_a_run_shorter_than_a_second_prints_nothing(terminal, monkeypatch):
    stream, read = terminal
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    now = [0.0]
    line = Progress(100, stream=stream, clock=lambda: now[0])
    for done, at in ((10, 0.3), (50, 0.9)):
        now[0] = at
        line(done)
    line.close()
    assert read() == ""
    line = Progress(100, stream=stream, clock=lambda: now[0])
    now[0] += 1.2
    line(60)
    line.close()
    assert read() == "\rlinted 60 of 100 files\x1b[K\r\x1b[K"
