"""Fixing a notebook: fix the joined code cells with the fixer, split the result back into cells, move the
imports the fixes added into the first code cell that has imports (or a new first code cell), put the masked
IPython lines back, and write only the "source" of the cells that changed.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Collection

from ..files import SourceError
from ..fixer import FixError, FixOutcome, fix_text
from ..fixes import FixStyle
from .magics import split_lines
from .reading import CELL_BOUNDARY, Notebook, read_notebook
from .writing import JsonStyle, cell_text, source_value

_BOUNDARY = re.compile("^" + re.escape(CELL_BOUNDARY.rstrip("\n")) + r"(?:\r\n|\r|\n)", re.MULTILINE)
NEW_CELL_ID = "np2torch-lint-imports"


@dataclass(frozen=True)
class CellChange:
    cell: int  # 1-based, in the fixed notebook
    before: str  # "" for a new cell
    after: str


@dataclass(frozen=True)
class NotebookFixOutcome(FixOutcome):
    """A fixed notebook's text; ``remaining`` is by cell, and ``changes`` says what each changed cell became."""

    changes: list[CellChange] = field(default_factory=list)

    def diff_lines(self, filename: str) -> list[str]:
        """A unified diff per changed cell, headed ``path:cell N`` as ruff heads them."""
        lines: list[str] = []
        for change in self.changes:
            name = f"{filename}:cell {change.cell}"
            lines += difflib.unified_diff(_with_final_newline(change.before), _with_final_newline(change.after),
                                          fromfile=name, tofile=name)
        return lines


def fix_notebook(raw: str, filename: str, codes: Collection[str] | None = None,
                 style: FixStyle = FixStyle.HELPERS, unsafe: bool = False) -> NotebookFixOutcome:
    """Fix a notebook's text; raises ``SourceError`` when it cannot be read, ``FixError`` if a fix breaks it."""
    from . import lint_notebook, located

    notebook = read_notebook(raw)
    try:
        outcome = fix_text(notebook.python, filename, codes, style, unsafe)
    except SourceError as error:
        raise notebook.locate_error(error) from None
    if outcome.text == notebook.python:
        return NotebookFixOutcome(raw, 0, located(outcome.remaining, notebook))
    *chunks, after_last = _BOUNDARY.split(outcome.text)
    if len(chunks) != len(notebook.code_cells) or after_last:
        raise FixError("a fix moved code across notebook cells")
    new_imports = _move_added_imports(notebook, outcome.text, chunks)  # edits ``chunks``
    text, changes = _write(notebook, chunks, new_imports)
    _check_still_valid(raw, text)
    return NotebookFixOutcome(text, outcome.fixed, lint_notebook(text, filename, codes, style), changes)


def _move_added_imports(notebook: Notebook, fixed: str, chunks: list[str]) -> list[str]:
    """Move the imports the fixes added to the end of the first run of imports of the first code cell that has
    imports (for isort, ``from np2torch_lint.runtime import ...`` is third-party and comes after plain ``import``
    lines); returns them when no cell has imports (they go into a new first code cell)."""
    original_imports = Counter(text for text, _, _ in _top_level_imports(notebook.python))
    fixed_imports = _top_level_imports(fixed)
    kept = Counter(text for text, _, _ in fixed_imports) & original_imports
    added = []
    for text, first, last in fixed_imports:
        if kept[text]:
            kept[text] -= 1
        elif not _merged_into_an_existing_import(text, original_imports - Counter(t for t, _, _ in fixed_imports)):
            added.append((first, last))
    if not added:
        return []
    starts = [sum(len(split_lines(chunk)) + 1 for chunk in chunks[:number]) for number in range(len(chunks))]
    target = next((number for number, cell in enumerate(notebook.code_cells)
                   if _top_level_imports(cell.python)), None)
    moved: list[str] = []
    removed_from: dict[int, set[int]] = {}
    for first, last in added:
        number = max(n for n, start in enumerate(starts) if start < first)
        lines = set(range(first - starts[number] - 1, last - starts[number]))
        removed_from.setdefault(number, set()).update(lines)
        moved += [split_lines(chunks[number])[line] for line in sorted(lines)]
    for number, lines in removed_from.items():
        chunks[number] = _without_lines(chunks[number], lines, notebook.code_cells[number].python)
    if target is None:
        return [line.rstrip("\r\n") for line in moved]
    chunks[target] = _insert_after_imports(chunks[target], moved)
    return []


def _merged_into_an_existing_import(statement: str, gone: Counter) -> bool:
    """``from m import a, b`` that replaced the file's ``from m import a`` (LibCST adds names to an import)."""
    module = statement.split(" import ", 1)[0]
    return statement.startswith("from ") and any(old.split(" import ", 1)[0] == module for old in gone)


def _top_level_imports(text: str) -> list[tuple[str, int, int]]:
    """Each top-level import statement: its text, first and last line (1-based)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(text, "<notebook>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                           dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = split_lines(text)
    return [("".join(lines[node.lineno - 1:node.end_lineno]).strip(), node.lineno, node.end_lineno or node.lineno)
            for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


def _without_lines(chunk: str, removed: set[int], original: str) -> str:
    """The chunk without the moved import lines, and without blank lines the fixer put beside them."""
    lines = [line for number, line in enumerate(split_lines(chunk)) if number not in removed]
    old = split_lines(original)
    kept: list[str] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=old, b=lines, autojunk=False).get_opcodes():
        if tag == "insert" and all(not line.strip() for line in lines[j1:j2]):
            continue
        kept += lines[j1:j2]
    return "".join(kept)


def _insert_after_imports(chunk: str, imports: list[str]) -> str:
    """The import lines put after the cell's first run of top-level imports."""
    lines = split_lines(chunk)
    tree = _top_level_statements(chunk)
    run_end = None
    for node in tree:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            run_end = node.end_lineno
        elif run_end is not None:
            break
    at = run_end or 0
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += "\n"
    ending = "\n"
    return "".join(lines[:at] + [line.rstrip("\r\n") + ending for line in imports] + lines[at:])


def _top_level_statements(text: str) -> list[ast.stmt]:
    try:
        return compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                       dont_inherit=True).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []


def _write(notebook: Notebook, chunks: list[str], new_cell_imports: list[str]) -> tuple[str, list[CellChange]]:
    style = JsonStyle.of(notebook.raw)
    raw = notebook.raw
    shift = 1 if new_cell_imports else 0
    edits: list[tuple[int, int, str]] = []
    changes: list[CellChange] = []
    for cell, chunk in zip(notebook.code_cells, chunks):
        source = notebook.masked.unmask(chunk)
        if not cell.source.endswith(("\n", "\r")):  # the newline the joined text gave the cell goes again
            source = source[:-2] if source.endswith("\r\n") else source.removesuffix("\n").removesuffix("\r")
        if source != cell.source:
            span = notebook.source_spans[cell.index]
            edits.append((span[0], span[1], source_value(source, raw, span, style)))
            changes.append(CellChange(cell.index + 1 + shift, cell.source, source))
    if new_cell_imports:
        first_code = next(index for index, cell in enumerate(notebook.cells) if cell["cell_type"] == "code")
        source = "\n".join(new_cell_imports)
        at = notebook.cell_starts[first_code]
        edits.append((at, at, cell_text(_new_code_cell(notebook, source), raw, at, style)))
        changes.append(CellChange(first_code + 1, "", source))
    for start, end, text in sorted(edits, reverse=True):
        raw = raw[:start] + text + raw[end:]
    return raw, sorted(changes, key=lambda change: change.cell)


def _new_code_cell(notebook: Notebook, source: str) -> dict:
    cell: dict = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                  "source": source.splitlines(keepends=True)}
    if notebook.nbformat_minor >= 5:  # cell ids came with nbformat 4.5
        taken = {c.get("id") for c in notebook.cells}
        cell["id"] = next(candidate for candidate in (NEW_CELL_ID, *(f"{NEW_CELL_ID}-{n}" for n in range(2, 10**6)))
                          if candidate not in taken)
    return cell


def _check_still_valid(before: str, after: str) -> None:
    """With nbformat installed (the ``[notebook]`` extra), a notebook that was valid must still be."""
    try:
        from nbformat import ValidationError, validate
    except ImportError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            validate(json.loads(before), version=4)
        except ValidationError:
            return
        try:
            validate(json.loads(after), version=4)
        except ValidationError as error:
            raise FixError(f"the fixed notebook would not validate: {error.message}") from None


def _with_final_newline(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines
