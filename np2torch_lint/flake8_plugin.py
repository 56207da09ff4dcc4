"""The flake8 plugin: a thin adapter from flake8's file lines to the engine, and back to flake8's tuples.

``# noqa`` and ``--select``/``--ignore`` are flake8's job here; a file that LibCST cannot parse yields nothing,
because flake8 reports its own E999 for syntax errors.
"""

from __future__ import annotations

import ast
from typing import Iterator

from . import __version__
from .engine import lint_text
from .files import SourceError


class Np2TorchChecker:
    name = "np2torch-lint"
    version = __version__

    # flake8 passes plugin arguments by parameter name; keyword-only parameters would be silently ignored.
    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            diagnostics = lint_text("".join(self.lines), self.filename)
        except SourceError:
            return
        for diagnostic in diagnostics:
            # flake8 wants 0-based columns and prints them 1-based, as np2torch-lint does
            yield diagnostic.line, diagnostic.column - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
