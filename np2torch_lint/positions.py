"""Where nodes are in the text: offsets, line/column ranges, indentation and parents, from one printing pass.

LibCST's ``PositionProvider`` builds a range for every node of the module (a batched visit and a printing pass,
together about 1.7x a parse); a file with findings needs a handful. LibCST prints exactly the text it parsed,
so printing the module while counting characters, and noting only the nodes asked for, gives the same ranges
for about a fifth of a parse.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from dataclasses import dataclass
from typing import Collection, Iterator, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

from .parsing import indentation_has_tabs

_NEWLINE = re.compile(r"\r\n?|\n")  # LibCST's own idea of a line break
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True, slots=True)
class Span:
    """Where one node is. Offsets index the module's text; ``range`` is ``PositionProvider``'s."""

    start: int  # the first character the node prints, whitespace it owns included (where a replacement goes)
    end: int
    range: CodeRange  # without the blank lines, comments and trailing whitespace a statement owns
    syntactic_start: int  # ``range`` as offsets
    syntactic_end: int
    indent: str  # the enclosing blocks' indentation: a replacement's own line breaks continue at it
    parent: cst.CSTNode | None
    grandparent: cst.CSTNode | None


class LineIndex:
    """Offsets <-> (line, column) of one text, as LibCST counts them (1-based lines, 0-based columns)."""

    def __init__(self, text: str) -> None:
        self.line_starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self.line_starts, offset)
        return CodePosition(line, offset - self.line_starts[line - 1])

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column


def locate(module: cst.Module, text: str, nodes: Collection[cst.CSTNode],
           parents: dict[int, cst.CSTNode] | None = None) -> dict[cst.CSTNode, Span]:
    """The span of each of ``nodes`` (nodes of ``module``, which was parsed from ``text``); ``parents``, when
    given, gets the parent of each of them and of each of their ancestors but the module (by the child's ``id``).

    Recursion follows the tree's depth, as LibCST's own printing does: call it where parsing was called (the
    deep-stack thread for deep code).
    """
    state = _LocatingState(module, {id(node) for node in nodes}, parents)
    module._codegen(state)
    lines = LineIndex(text)
    limit = len(text)  # a module without a final newline prints one and takes it back at the very end
    # LibCST prints a line's indentation as its block's: where a form feed sits in it, the text differs; so where
    # the module was parsed with its indentation's tabs expanded (parsing.parse)
    to_text = _PrintedToText(module.code, text) if "\f" in text or indentation_has_tabs(text) else None
    spans = {}
    for node in nodes:
        found = state.found.get(id(node))
        if found is None:
            continue  # not in this module
        start, end, indent, parent, grandparent = found
        syntactic_start, syntactic_end = state.syntactic.get(id(node), (start, end))
        if to_text is not None:
            start, end = to_text.start(start), to_text.end(end)
            syntactic_start, syntactic_end = to_text.start(syntactic_start), to_text.end(syntactic_end)
        syntactic_start, syntactic_end = min(syntactic_start, limit), min(syntactic_end, limit)
        spans[node] = Span(min(start, limit), min(end, limit),
                           CodeRange(lines.position(syntactic_start), lines.position(syntactic_end)),
                           syntactic_start, syntactic_end, indent, parent, grandparent)
    return spans


def source_lines(text: str) -> list[str]:
    """The lines as Python and LibCST count them (``\\n``, ``\\r\\n`` or ``\\r`` ends a line; a form feed does not,
    unlike ``str.splitlines``), each with its line ending."""
    return _LINE.findall(text)


def ranges(spans: Mapping[cst.CSTNode, Span]) -> dict[cst.CSTNode, CodeRange]:
    return {node: span.range for node, span in spans.items()}


_NOT_RECORDED = contextlib.nullcontext()


class _LocatingState(CodegenState):
    """Prints nothing: counts characters, and notes where the wanted nodes start and end."""

    def __init__(self, module: cst.Module, wanted: set[int], parents: dict[int, cst.CSTNode] | None) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.parents = parents
        self.offset = 0
        self.indent_width = 0
        self.ancestors: list[cst.CSTNode] = []
        self.opened: dict[int, tuple[int, str, cst.CSTNode | None, cst.CSTNode | None]] = {}
        self.found: dict[int, tuple[int, int, str, cst.CSTNode | None, cst.CSTNode | None]] = {}
        self.syntactic: dict[int, tuple[int, int]] = {}

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)
        self.indent_width += len(value)

    def decrease_indent(self) -> None:
        self.indent_width -= len(self.indent_tokens.pop())

    def add_indent_tokens(self) -> None:
        self.offset += self.indent_width

    def add_token(self, value: str) -> None:
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        pass  # only the end of the last statement moves, and ``locate`` clamps offsets to the text

    def before_codegen(self, node: cst.CSTNode) -> None:
        ancestors = self.ancestors
        ancestors.append(node)
        if id(node) in self.wanted:
            self.opened[id(node)] = (self.offset, "".join(self.indent_tokens),
                                     ancestors[-2] if len(ancestors) > 1 else None,
                                     ancestors[-3] if len(ancestors) > 2 else None)
            parents = self.parents
            if parents is not None:  # up to the first ancestor linked already: each link is made once
                index = len(ancestors) - 1
                while index > 0 and id(ancestors[index]) not in parents:
                    parents[id(ancestors[index])] = ancestors[index - 1]
                    index -= 1

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.ancestors.pop()
        opened = self.opened.pop(id(node), None)
        if opened is not None:
            start, indent, parent, grandparent = opened
            self.found[id(node)] = (start, self.offset, indent, parent, grandparent)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> contextlib.AbstractContextManager:
        if id(node) not in self.wanted:
            return _NOT_RECORDED
        # the nodes the range is taken from are printed inside this block: note them too
        for part in (start_node, end_node):
            if part is not None:
                self.wanted.add(id(part))
        return self._recording(node, start_node, end_node)

    @contextlib.contextmanager
    def _recording(self, node: cst.CSTNode, start_node: cst.CSTNode | None,
                   end_node: cst.CSTNode | None) -> Iterator[None]:
        start = self.offset
        yield
        end = self.offset
        if start_node is not None:
            start = self._syntactic_or_printed(start_node)[0]
        if end_node is not None:
            end = self._syntactic_or_printed(end_node)[1]
        self.syntactic[id(node)] = (start, end)

    def _syntactic_or_printed(self, node: cst.CSTNode) -> tuple[int, int]:
        recorded = self.syntactic.get(id(node))
        if recorded is not None:
            return recorded
        start, end = self.found[id(node)][:2]
        return start, end


_INDENTATION = re.compile(r"[ \t\f]*")


class _PrintedToText:
    """Offsets in the module as LibCST prints it -> offsets in the text it was parsed from.

    LibCST keeps one indentation per block: it drops a form feed from a line's indentation (Python's tokenizer
    counts columns afresh after one), or repeats the block's first line's on every line. So only the indentation
    at the start of a line can differ; if anything else does, the offsets stay as printed.
    """

    def __init__(self, printed: str, text: str) -> None:
        printed_lines, text_lines = source_lines(printed), source_lines(text)
        self.printed_starts: list[int] = []  # of the lines that differ
        self.lines: list[tuple[int, int, int]] = []  # their text start, printed indentation, text indentation
        if len(printed_lines) != len(text_lines):
            return
        printed_start = text_start = 0
        for printed_line, text_line in zip(printed_lines, text_lines):
            if printed_line != text_line:
                printed_indent = _INDENTATION.match(printed_line).end()  # type: ignore[union-attr]
                text_indent = _INDENTATION.match(text_line).end()  # type: ignore[union-attr]
                if printed_line[printed_indent:] != text_line[text_indent:]:
                    self.printed_starts, self.lines = [], []
                    return
                self.printed_starts.append(printed_start)
                self.lines.append((text_start, printed_indent, text_indent))
            printed_start += len(printed_line)
            text_start += len(text_line)

    def _map(self, offset: int, is_end: bool) -> int:
        index = bisect.bisect_right(self.printed_starts, offset) - 1
        if index < 0:
            return offset
        text_start, printed_indent, text_indent = self.lines[index]
        into = offset - self.printed_starts[index]
        if into == 0 and (printed_indent > 0 or is_end):
            return text_start  # the line's start: a statement starts, the one before it ends
        if into >= printed_indent:  # after the indentation, or on a later line that is the same in both
            return text_start + text_indent + into - printed_indent
        return text_start + min(into, text_indent)

    def start(self, offset: int) -> int:
        return self._map(offset, is_end=False)

    def end(self, offset: int) -> int:
        return self._map(offset, is_end=True)
