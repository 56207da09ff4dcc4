"""The flake8 plugin: a thin adapter from flake8's file lines to the engine, and back to flake8's tuples.

``--select``/``--ignore`` and ``# noqa`` are flake8's job. One addition keeps both front ends in agreement:
flake8 7 only reads a ``# noqa`` on the reported line of a bracketed multi-line statement, while
``np2torch-lint`` lets it stand on any line of the statement, so the plugin drops what such a comment covers
(unless flake8 runs with ``--disable-noqa``). A file LibCST cannot parse yields nothing: flake8 reports its
own E999 for syntax errors.
"""

from __future__ import annotations

import ast
from typing import Iterator

from . import __version__
from .engine import lint_text
from .files import SourceError
from .noqa import filter_suppressed


class Np2TorchChecker:
    name = "np2torch-lint"
    version = __version__
    disable_noqa = False

    @classmethod
    def parse_options(cls, options: object) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))

    # flake8 passes plugin arguments by parameter name; keyword-only parameters would be silently ignored.
    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        text = "".join(self.lines)
        try:
            diagnostics = lint_text(text, self.filename)
        except SourceError:
            return
        if not self.disable_noqa:
            diagnostics = filter_suppressed(diagnostics, text)
        for diagnostic in diagnostics:
            # flake8 wants 0-based columns and prints them 1-based, as np2torch-lint does
            yield diagnostic.line, diagnostic.column - 1, f"{diagnostic.code} {diagnostic.message}", type(self)
