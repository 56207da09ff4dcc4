"""The README's Neovim snippets, run as written by the Neovim installed here (each where its version fits): a Python
buffer gets the server's diagnostics."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nprint(w.numpy())\n"
# waits for the first diagnostics (at most a minute), writes how many and the first message, and quits
WAIT = """lua local tries = 0
local function check()
  local found = vim.diagnostic.get(0)
  tries = tries + 1
  if #found > 0 or tries > 120 then
    vim.fn.writefile({tostring(#found), found[1] and found[1].message or ""}, "{out}")
    vim.cmd("qa!")
  else
    vim.defer_fn(check, 500)
  end
end
vim.defer_fn(check, 500)"""


def neovim_version() -> tuple[int, int] | None:
    if shutil.which("nvim") is None:
        return None
    printed = subprocess.run(["nvim", "--version"], capture_output=True, text=True).stdout
    found = re.search(r"NVIM v(\d+)\.(\d+)", printed)
    return (int(found.group(1)), int(found.group(2))) if found else None


def readme_lua_blocks() -> list[str]:
    return re.findall(r"```lua\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize(("index", "versions"), [(0, ((0, 10), (99, 0))), (1, ((0, 7), (0, 10)))],
                         ids=["neovim-0.10", "neovim-0.7-0.9"])
def test_the_readme_neovim_snippet_shows_the_findings(tmp_path, index, versions):
    version = neovim_version()
    if version is None or not versions[0] <= version < versions[1]:
        pytest.skip(f"needs Neovim {versions[0]} up to {versions[1]}, not {version}")
    pytest.importorskip("pygls")
    (tmp_path / "init.lua").write_text(readme_lua_blocks()[index], encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    (project / "bad.py").write_text(BAD, encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    subprocess.run(["nvim", "--headless", "-u", str(tmp_path / "init.lua"), "bad.py",
                    "+" + WAIT.replace("{out}", str(out))], cwd=project, env=env, timeout=120, capture_output=True)
    count, message = out.read_text(encoding="utf-8").splitlines()
    assert count == "1" and message.startswith(".numpy() on a tensor that may require grad")
