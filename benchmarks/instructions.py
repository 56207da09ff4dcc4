"""Instructions (valgrind's callgrind) np2torch-lint executes against the bare LibCST parse of the same files: a
measure of speed that does not move with the load of a shared machine. Run on demand, with valgrind installed:

    python benchmarks/instructions.py FOLDER                  # cold project run, and the plain run
    python benchmarks/instructions.py --mode cold FOLDER

Each measure runs in a process of its own under callgrind, about 50 times slower than natively, so take a folder
of a few hundred files. Every process starts the same way (imports, the library models, one tiny file linted,
the folder copied into a project of its own); then the start-up measure stops, the bare one parses every file,
and np2torch-lint runs (cold: the folder as one project with an empty cache, as ``lint_speed.py --project``
measures it; plain: each file on its own). Ratios are of the counts above start-up.

Instruction counts leave out what memory and the disk cost, so the wall-clock figures of ``lint_speed.py`` stay
the reference for the goals; this one tells apart changes of a few hundredths that the wall clock cannot on a
busy machine (its rounds there spread by 0.1x or more).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_COLLECTED = re.compile(r"Collected : (\d+)")
MODES = ("startup", "bare", "cold", "plain")


def run_child(mode: str, folder: Path) -> None:
    """One measure, in this process (run under callgrind by ``count``)."""
    import libcst

    from np2torch_lint.cli import lint_paths
    from np2torch_lint.commands import Performance, lint
    from np2torch_lint.config import Settings, load_settings

    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "project"
        shutil.copytree(folder, root)
        (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
        files = sorted(str(path) for path in root.rglob("*.py"))
        # what every process pays once, counted in the start-up: imports made on first use, the library models
        warm_up = Path(temporary) / "warm_up.py"
        warm_up.write_text("import torch\nx = torch.ones(3)\n", encoding="utf-8")
        lint_paths([str(warm_up)], Settings(root=Path(temporary) / "empty"))
        if mode == "bare":
            for path in files:
                try:
                    libcst.parse_module(Path(path).read_bytes().decode("utf-8"))
                except Exception:  # noqa: BLE001 - a file LibCST cannot parse costs what it cost
                    pass
        elif mode == "cold":
            lint([str(root)], load_settings(root / "pyproject.toml"),
                 performance=Performance(jobs=1, cache=True, cache_dir=Path(temporary) / "cache"))
        elif mode == "plain":  # settings rooted in an empty folder: each file on its own
            lint_paths(files, Settings(root=Path(temporary) / "empty"))


def count(mode: str, folder: Path) -> int:
    """Instructions executed by one measure's process."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", mode, str(folder)]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}  # the same hashes, so the same work, in every run
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    found = _COLLECTED.search(result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"callgrind failed for {mode} ({result.returncode}): {result.stderr.strip()[-500:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--mode", choices=("cold", "plain"), action="append")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        run_child(args.child, args.folder)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt install valgrind)")
    startup = count("startup", args.folder)
    bare = count("bare", args.folder) - startup
    print(f"{args.folder}: bare parse {bare / 1e9:.2f} G instructions above start-up ({startup / 1e9:.2f} G)")
    for mode in args.mode or ["cold", "plain"]:
        measured = count(mode, args.folder) - startup
        print(f"  {mode:5s} {measured / 1e9:7.2f} G   {measured / bare:.3f}x the bare parse")


if __name__ == "__main__":
    main()
