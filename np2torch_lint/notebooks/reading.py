"""A notebook's JSON -> its code cells as one Python text, with a map from that text's lines back to cells.

The cells are read with the standard library's ``json``; a second pass over the same text records where each
cell's ``source`` value starts and ends, so that a fix can replace those characters and nothing else.
Code cells are joined in order, each followed by a boundary comment, so that a name bound in cell 2 is known in
cell 5, as when the notebook runs top to bottom, and so that fixed text splits back into its cells.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ..files import SourceError, line_and_column
from .magics import MaskedLines, split_lines

CELL_BOUNDARY = "# np2torch-lint-cell-boundary\n"
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_POSITION = re.compile(r" at (\d+):(\d+)$")
#: what JSON can hold and no Python source can: NUL, and a surrogate that pairs with nothing ("\\ud800")
_NOT_IN_SOURCE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class CodeCell:
    index: int  # in the notebook's list of cells, 0-based (markdown cells count, as in ruff's "cell N")
    source: str  # as the notebook holds it, the list of lines joined
    python: str  # masked, ending with a newline unless empty
    first_line: int  # where ``python`` starts in the joined text, 0-based


@dataclass
class Notebook:
    raw: str  # the file's text
    cells: list[dict]
    cell_starts: list[int]  # where each cell's object starts in ``raw`` (its "{")
    source_spans: dict[int, tuple[int, int]]  # cell index -> [start, end) of its "source" value in ``raw``
    nbformat_minor: int = 0
    code_cells: list[CodeCell] = field(default_factory=list)
    masked: MaskedLines = field(default_factory=lambda: MaskedLines([]))
    python: str = ""
    line_to_cell: list[tuple[int, int] | None] = field(default_factory=list)  # text line -> (cell, line), 0-based

    def cell_position(self, line: int) -> tuple[int, int] | None:
        """A 1-based line of the joined text -> (1-based cell number, 1-based line in that cell)."""
        if 1 <= line <= len(self.line_to_cell) and (where := self.line_to_cell[line - 1]) is not None:
            return where[0] + 1, where[1] + 1
        return None

    def locate_error(self, error: SourceError) -> SourceError:
        """A parse error's ``at line:column`` of the joined text, said as ``at cell N:line:column``."""
        found = _POSITION.search(str(error))
        where = self.cell_position(int(found.group(1))) if found else None
        if found is None or where is None:
            return error
        return SourceError(f"{str(error)[:found.start()]} at cell {where[0]}:{where[1]}:{found.group(2)}")


def read_notebook(raw: str) -> Notebook:
    """Parse and check a notebook; raises ``SourceError`` with one line saying what is wrong."""
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise SourceError(f"not a Jupyter notebook: not valid JSON: {error.msg} at {error.lineno}:{error.colno}"
                          ) from None
    except RecursionError:
        raise SourceError("not a Jupyter notebook: JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise SourceError("not a Jupyter notebook: no list of \"cells\" in its JSON")
    if "cells" in document or "nbformat" in document:  # an older format keeps its cells elsewhere ("worksheets")
        if document.get("nbformat") != 4:
            raise SourceError(f"not an nbformat 4 notebook (nbformat: {document.get('nbformat')!r}); convert it "
                              "with `jupyter nbconvert --to notebook --nbformat 4`")
    if not isinstance(document.get("cells"), list):
        raise SourceError("not a Jupyter notebook: no list of \"cells\" in its JSON")
    cells = document["cells"]
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise SourceError(f"not a valid notebook: cell {number} has no \"cell_type\"")
        source = cell.get("source")
        if not isinstance(source, str) and not (isinstance(source, list) and all(isinstance(s, str) for s in source)):
            raise SourceError(f"not a valid notebook: the source of cell {number} is not text or a list of lines")
        if cell["cell_type"] == "code":
            _refuse_what_no_source_holds(cell_source(cell), number)
    minor = document.get("nbformat_minor")
    notebook = Notebook(raw, cells, *_cell_spans(raw), nbformat_minor=minor if isinstance(minor, int) else 0)
    if _is_python(document.get("metadata")):
        _join_code_cells(notebook)
    return notebook


def _refuse_what_no_source_holds(source: str, number: int) -> None:
    found = _NOT_IN_SOURCE.search(source)
    if found is None:
        return
    line, column = line_and_column(source, found.start())
    what = "a NUL character" if found.group() == "\0" else f"a lone surrogate (\\u{ord(found.group()):04x})"
    raise SourceError(f"cell {number}: {what} at {line}:{column}, which Python source cannot hold")


def without_sources(raw: str) -> str:
    """The notebook's text with each cell's "source" value cut out: what fixing must keep byte for byte."""
    _, spans = _cell_spans(raw)
    parts, position = [], 0
    for start, end in sorted(spans.values()):
        parts.append(raw[position:start])
        position = end
    return "<source>".join(parts + [raw[position:]])


def cell_source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _is_python(metadata: object) -> bool:
    """A notebook for another kernel (R, Julia) has nothing for us; one that does not say is taken as Python."""
    if not isinstance(metadata, dict):
        return True
    for key, name_key in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(name_key), str):
            return table[name_key].lower() == "python"
    return True


def _join_code_cells(notebook: Notebook) -> None:
    parts: list[str] = []
    line = 0
    for index, cell in enumerate(notebook.cells):
        if cell["cell_type"] != "code":
            continue
        source = cell_source(cell)
        python = notebook.masked.mask(source)
        if python is None:  # a cell of shell, HTML, ... (``%%bash``)
            continue
        if python and not python.endswith(("\n", "\r")):
            python += "\n"
        count = len(split_lines(python))
        notebook.code_cells.append(CodeCell(index, source, python, line))
        notebook.line_to_cell.extend((index, number) for number in range(count))
        notebook.line_to_cell.append(None)  # the boundary line
        parts += [python, CELL_BOUNDARY]
        line += count + 1
    notebook.python = "".join(parts)


def _cell_spans(raw: str) -> tuple[list[int], dict[int, tuple[int, int]]]:
    """Where each cell and its "source" value are in the text (known to be valid JSON); the last key wins, as in
    ``json.loads``."""
    scan = json.JSONDecoder().scan_once
    starts: list[int] = []
    spans: dict[int, tuple[int, int]] = {}
    position = _skip(raw, 0) + 1  # past the top-level "{"
    while True:
        position = _skip(raw, position)
        if raw[position] == "}":
            return starts, spans
        key, position = json.decoder.scanstring(raw, position + 1)
        position = _skip(raw, _skip(raw, position) + 1)  # past ":"
        if key != "cells":
            _, position = scan(raw, position)
        else:
            starts, spans = [], {}
            position = _skip(raw, position + 1)  # past "["
            while raw[position] != "]":
                starts.append(position)
                position = _skip(raw, _source_span(raw, position, scan, spans, len(starts) - 1))
                if raw[position] == ",":
                    position = _skip(raw, position + 1)
            position += 1
        position = _skip(raw, position)
        if raw[position] == ",":
            position += 1


def _source_span(raw: str, position: int, scan, spans: dict[int, tuple[int, int]], index: int) -> int:
    position = _skip(raw, position + 1)  # past the cell's "{"
    while raw[position] != "}":
        key, position = json.decoder.scanstring(raw, position + 1)
        start = _skip(raw, _skip(raw, position) + 1)
        _, position = scan(raw, start)
        if key == "source":
            spans[index] = (start, position)
        position = _skip(raw, position)
        if raw[position] == ",":
            position = _skip(raw, position + 1)
    return position + 1


def _skip(raw: str, position: int) -> int:
    return _WHITESPACE.match(raw, position).end()  # type: ignore[union-attr]
