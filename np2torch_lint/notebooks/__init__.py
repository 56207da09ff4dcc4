"""Jupyter notebooks: lint and fix the code cells of an nbformat 4 ``.ipynb`` as one program, report by cell.

Pipeline: ``reading`` (JSON -> joined, masked Python text and a map back to cells; ``magics`` masks IPython
syntax) -> the engine and the fixer, unchanged -> ``fixing`` (fixed text -> cells, imports into place) ->
``writing`` (new "source" values in the file's own JSON style). Only the standard library is needed; with
nbformat installed (the ``[notebook]`` extra) a fixed notebook is checked against the schema before it is written.
"""

from __future__ import annotations

import dataclasses
from typing import Collection

from ..diagnostics import Diagnostic
from ..engine import lint_text
from ..files import NOTEBOOK_SUFFIX, SourceError, is_notebook
from ..fixes import FixStyle
from ..noqa import filter_suppressed
from .fixing import NotebookFixOutcome, fix_notebook
from .reading import Notebook, read_notebook

__all__ = ["NOTEBOOK_SUFFIX", "NotebookFixOutcome", "fix_notebook", "is_notebook", "lint_notebook"]


def lint_notebook(raw: str, filename: str, codes: Collection[str] | None = None,
                  style: FixStyle = FixStyle.HELPERS) -> list[Diagnostic]:
    """The diagnostics of a notebook's code cells, with ``cell`` set and lines counted within the cell, after
    ``# noqa``; raises ``SourceError`` when the notebook cannot be read or its code does not parse."""
    notebook = read_notebook(raw)
    try:
        found = lint_text(notebook.python, filename, codes, style)
    except SourceError as error:
        raise notebook.locate_error(error) from None
    return located(filter_suppressed(found, notebook.python), notebook)


def located(diagnostics: list[Diagnostic], notebook: Notebook) -> list[Diagnostic]:
    """Diagnostics of the joined text -> by cell (a span that would leave its cell ends where it starts)."""
    result = []
    for diagnostic in diagnostics:
        start = notebook.cell_position(diagnostic.line)
        if start is None:
            continue
        end = notebook.cell_position(diagnostic.end_line)
        if end is None or end[0] != start[0]:
            end = (start[0], start[1])
            end_column = diagnostic.column
        else:
            end_column = diagnostic.end_column
        result.append(dataclasses.replace(diagnostic, cell=start[0], line=start[1], end_line=end[1],
                                          end_column=end_column))
    return result
