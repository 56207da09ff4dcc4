"""How long the language server takes to publish a finding-dense document, as a ratio to the command line's time on
the same text (goal: at most 3x), and whether a small document opened after it gets its diagnostics first.

Run on demand (not part of the test suite; it needs the test extras, for pytest-lsp's client):

    python benchmarks/server_publish.py                 # 25,000 findings
    python benchmarks/server_publish.py --findings 10000

The server runs as editors run it, ``python -m np2torch_lint server`` over stdio, driven by pytest-lsp's client (a
real LSP client); the command line is a fresh ``np2torch-lint --no-cache`` process on the same file. Each figure is the
median of ``--repeat`` runs (default 3), in wall-clock seconds from the didOpen to the publishDiagnostics.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = [sys.executable, "-m", "np2torch_lint", "server"]
SMALL = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"


def dense(findings: int) -> str:
    return "import torch\nw = torch.ones(2, requires_grad=True)\n" + "w.numpy()\n" * findings


async def publish_times(root: Path, text: str) -> tuple[float, float, bool]:
    """Seconds from didOpen to the big document's diagnostics, to the small one's, and whether the small came
    first."""
    published: dict[str, float] = {}
    counts: dict[str, int] = {}
    config = ClientServerConfig(server_command=SERVER, client_factory=LanguageClient)
    client = await config.start()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if params.diagnostics and params.uri not in published:
            published[params.uri] = time.perf_counter()
            counts[params.uri] = len(params.diagnostics)

    await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                           root_uri=root.as_uri()))
    big, small = (root / "big.py").as_uri(), (root / "small.py").as_uri()
    start = time.perf_counter()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=big, language_id="python", version=1, text=text)))
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=small, language_id="python", version=1, text=SMALL)))
    while big not in published or small not in published:
        await asyncio.sleep(0.01)
    await client.shutdown_session()
    await client.stop()
    if counts[big] != text.count("w.numpy()"):
        raise SystemExit(f"the server published {counts[big]} findings, not {text.count('w.numpy()')}")
    return published[big] - start, published[small] - start, published[small] < published[big]


def command_line_time(path: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "np2torch_lint", "--no-cache", str(path)], capture_output=True,
                            text=True, cwd=path.parent)
    seconds = time.perf_counter() - start
    if result.returncode != 1:  # 1: findings, as expected
        raise SystemExit(f"np2torch-lint exited {result.returncode}: {result.stderr.strip()[-300:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    text = dense(options.findings)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n")
        (root / "big.py").write_text(text)
        server, small, first = [], [], []
        cli = []
        for _ in range(options.repeat):
            big_seconds, small_seconds, small_first = asyncio.run(publish_times(root, text))
            server.append(big_seconds)
            small.append(small_seconds)
            first.append(small_first)
            cli.append(command_line_time(root / "big.py"))
    served, linted = statistics.median(server), statistics.median(cli)
    print(f"{options.findings} findings, median of {options.repeat}:")
    print(f"  command line (np2torch-lint --no-cache):  {linted:.2f} s")
    print(f"  language server, didOpen to publish:      {served:.2f} s   {served / linted:.2f}x the command line "
          f"(goal: <= 3x)")
    print(f"  a small document opened after it:         {statistics.median(small):.2f} s, "
          f"published first in {sum(first)} of {len(first)} runs")


if __name__ == "__main__":
    main()
