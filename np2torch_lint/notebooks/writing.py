"""New JSON text for what a fix changes (a cell's "source", a new cell), in the file's own style.

Everything else keeps its characters: the new text replaces the old "source" value only, laid out as the file
lays out its values (indentation unit, line endings, separators, escaped or literal non-ASCII), so a notebook
written by Jupyter (``json.dumps(indent=1, sort_keys=True, ensure_ascii=False)``) gets what Jupyter would write.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_INDENT_UNIT = re.compile(r"\s*\{[ \t]*\r?\n([ \t]+)\"")
_KEY_SEPARATOR = re.compile(r"\"[ \t]*:([ \t]?)")
_FIRST_ITEM_INDENT = re.compile(r"\[[ \t]*\r?\n([ \t]*)")
_CLOSING_INDENT = re.compile(r"\r?\n([ \t]*)\]$")


@dataclass(frozen=True)
class JsonStyle:
    indent_unit: str | None  # None: everything on one line
    newline: str
    key_separator: str
    item_separator: str
    ensure_ascii: bool

    @classmethod
    def of(cls, raw: str) -> JsonStyle:
        indent = _INDENT_UNIT.match(raw)
        key = _KEY_SEPARATOR.search(raw)
        spaced = key is not None and key.group(1) == " "
        return cls(
            indent_unit=indent.group(1) if indent else None,
            newline="\r\n" if "\r\n" in raw else "\n",
            key_separator=": " if spaced else ":",
            item_separator=", " if spaced and indent is None else ",",
            # a file that spells non-ASCII as \uXXXX escapes is kept that way
            ensure_ascii=raw.isascii() and "\\u" in raw,
        )

    def dumps(self, value: object) -> str:
        return json.dumps(value, ensure_ascii=self.ensure_ascii)


def source_value(source: str, raw: str, span: tuple[int, int], style: JsonStyle) -> str:
    """The JSON text for a cell's new ``source``: a string stays a string, a list of lines stays a list laid out as
    the old one was (or, for an empty one, as the file lays out lists)."""
    old = raw[span[0]:span[1]]
    if old.startswith('"'):
        return style.dumps(source)
    lines = source.splitlines(keepends=True)  # as nbformat splits a cell's source
    if not lines:
        return "[]"
    first, closing = _FIRST_ITEM_INDENT.match(old), _CLOSING_INDENT.search(old)
    if first is None or closing is None:
        if old != "[]" or style.indent_unit is None:
            return "[" + style.item_separator.join(map(style.dumps, lines)) + "]"
        key_indent = line_indent(raw, span[0])
        item_indent, closing_indent = key_indent + style.indent_unit, key_indent
    else:
        item_indent, closing_indent = first.group(1), closing.group(1)
    between = "," + style.newline + item_indent
    return f"[{style.newline}{item_indent}{between.join(map(style.dumps, lines))}{style.newline}{closing_indent}]"


def cell_text(cell: dict, raw: str, before: int, style: JsonStyle) -> str:
    """A new cell's JSON text with the separator after it, to insert at ``before`` (the start of another cell)."""
    if style.indent_unit is None:
        return json.dumps(cell, sort_keys=True, ensure_ascii=style.ensure_ascii,
                          separators=(style.item_separator, style.key_separator)) + style.item_separator
    indent = line_indent(raw, before)
    text = json.dumps(cell, indent=style.indent_unit, sort_keys=True, ensure_ascii=style.ensure_ascii,
                      separators=(",", style.key_separator))
    return text.replace("\n", style.newline + indent) + "," + style.newline + indent


def line_indent(raw: str, position: int) -> str:
    """The spaces and tabs that start the line holding ``position``."""
    start = max(raw.rfind("\n", 0, position), raw.rfind("\r", 0, position)) + 1
    end = start
    while end < position and raw[end] in " \t":
        end += 1
    return raw[start:end]
