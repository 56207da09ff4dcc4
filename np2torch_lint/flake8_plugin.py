"""The flake8 plugin: a thin adapter from flake8's file lines to the engine, and back to flake8's tuples.

``--select``/``--ignore`` and ``# noqa`` are flake8's job. One addition keeps both front ends in agreement:
flake8 7 only reads a ``# noqa`` on the reported line of a bracketed multi-line statement, while
``np2torch-lint`` lets it stand on any line of the statement, so the plugin drops what such a comment covers
(unless flake8 runs with ``--disable-noqa``). A file LibCST cannot parse yields nothing: flake8 reports its
own E999 for syntax errors. A ``[tool.np2torch-lint]`` table np2torch-lint would refuse stops the run the way
flake8 stops for its own configuration errors (``ExecutionError``: its message, no traceback, exit 1), checked
once for the paths flake8 was given before any file is read.

Installed, the plugin is loaded by every flake8 run, so it costs nothing unless an NPT code is selected: this
module imports only flake8 at load time, the engine (LibCST and the analysis) on the first file it lints, and
when flake8's options select no NPT code it returns at once, without parsing.
"""

from __future__ import annotations

import argparse
import ast
from typing import Iterator

from flake8.style_guide import Decision, DecisionEngine

from . import __version__
from .rules import RULES  # the table only: no rule module, no LibCST

CODES = tuple(rule.code for rule in RULES)
#: rules outside the default selection: reported only where flake8's options name their code (``--extend-select
#: NPT009``), not for a prefix (``--select NPT``) nor through flake8's default selection of every plugin, as the CLI
OPT_IN = frozenset(rule.code for rule in RULES if not rule.default)


class Np2TorchChecker:
    name = "np2torch-lint"
    version = __version__
    disable_noqa = False
    any_selected = True  # whether flake8's options select at least one NPT code
    opted_in: frozenset[str] = frozenset()  # the opt-in codes flake8's options select by name or prefix

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.disable_noqa = bool(getattr(options, "disable_noqa", False))
        try:
            decisions = DecisionEngine(options)
        except AttributeError:  # options of another shape (a flake8 we do not know): lint, as before
            cls.any_selected, cls.opted_in = True, frozenset()
            return
        cls.opted_in = frozenset(code for code in OPT_IN if decisions.decision_for(code) is Decision.Selected
                                 and code in decisions.selected_explicitly)
        cls.any_selected = any(decisions.decision_for(code) is Decision.Selected for code in CODES
                               if code not in OPT_IN or code in cls.opted_in)
        if cls.any_selected:
            for name in getattr(options, "filenames", None) or ["."]:
                if name not in ("-", "stdin"):
                    _settings_around(name)

    # flake8 passes plugin arguments by parameter name; keyword-only parameters would be silently ignored.
    def __init__(self, tree: ast.AST, filename: str, lines: list[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if not self.any_selected:
            return
        from .noqa import filter_suppressed

        text = "".join(self.lines)
        linter = _linter_for(self.filename)
        if linter is None:  # standard input, or a file flake8 names but we cannot place: on its own
            from .engine import lint_text
            from .files import SourceError

            try:
                diagnostics = lint_text(text, self.filename, check_syntax=False)
            except SourceError:
                return
        else:  # in its project, with the CLI's cache: the same findings as np2torch-lint
            result = linter.result(self.filename, text, edits=False)
            if result.error is not None:
                return  # flake8 reports its own E999
            key = linter.known(self.filename, text)[0]
            result = result.with_incoming(linter.incoming({key: result}).get(key, []))  # what importers' calls find
            diagnostics = [diagnostic for diagnostic, _ in result.findings(self.filename)]
            diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
        if not self.disable_noqa:
            diagnostics = filter_suppressed(diagnostics, text)
        for diagnostic in diagnostics:
            if diagnostic.code in OPT_IN and diagnostic.code not in self.opted_in:
                continue
            # flake8 wants 0-based columns and prints them 1-based, as np2torch-lint does
            yield diagnostic.line, diagnostic.column - 1, f"{diagnostic.code} {diagnostic.message}", type(self)


_linters: dict[object, object] = {}


def _linter_for(filename: str):  # -> jobs.Linter | None, imported lazily like the engine
    """The linter of the project a file belongs to (its nearest ``[tool.np2torch-lint]``), one per project and
    process; None for standard input."""
    from pathlib import Path

    from .jobs import Linter

    if filename in ("-", "stdin") or not Path(filename).is_file():
        return None
    pyproject, settings = _settings_around(filename)
    if pyproject not in _linters:
        _linters[pyproject] = Linter.for_settings(settings, None, use_cache=True)
    return _linters[pyproject]


def _settings_around(name: str):  # -> (the pyproject.toml or None, config.Settings)
    """The settings of the project around a file or folder; flake8's ``ExecutionError`` for a configuration
    np2torch-lint refuses (flake8 prints it on its own, with no traceback, and exits 1)."""
    from pathlib import Path

    from flake8.exceptions import ExecutionError

    from .config import ConfigError, find_pyproject, load_settings

    path = Path(name)
    try:
        pyproject = find_pyproject(path if path.is_dir() else path.parent)
        return pyproject, load_settings(pyproject)
    except ConfigError as error:
        raise ExecutionError(f"np2torch-lint: {error}") from None
