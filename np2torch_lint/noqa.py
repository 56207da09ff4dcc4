"""Suppression comments, read with flake8's own pattern.

``# noqa`` silences every finding of its statement, ``# noqa: NPT001,NPT002`` (or a prefix, ``# noqa: NPT``)
those codes. A comment on any physical line of a multi-line statement covers the whole statement. A file holding
``# np2torch-lint: skip-file`` (or flake8's ``# flake8: noqa``) is skipped.
"""

from __future__ import annotations

import re
import tokenize
from io import StringIO

from .diagnostics import Diagnostic
from .text_edits import source_lines  # not positions: LibCST is for analysing only (start-up time)

_SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*(?:np2torch-lint[ \t]*:[ \t]*skip-file|flake8[:=][ \t]*noqa)[ \t]*$",
                        re.IGNORECASE | re.MULTILINE)


def skips_file(text: str) -> bool:
    return ("skip-file" in text or "noqa" in text) and _SKIP_FILE.search(text) is not None


def filter_suppressed(diagnostics: list[Diagnostic], text: str) -> list[Diagnostic]:
    if not diagnostics or "noqa" not in text:
        return diagnostics
    statement_text = _statement_text(text)
    # each statement's comments are read once, however many findings it has (a huge literal can have many)
    suppressions: dict[str, tuple[str, ...] | None] = {}
    kept = []
    for diagnostic in diagnostics:
        statement = statement_text.get(diagnostic.line, "")
        if statement not in suppressions:
            suppressions[statement] = _suppressed_codes(statement)
        codes = suppressions[statement]
        if codes is None or not (codes == _ALL or diagnostic.code.startswith(codes)):
            kept.append(diagnostic)
    return kept


_ALL: tuple[str, ...] = ("",)  # a bare ``# noqa``: every code starts with ""


def _suppressed_codes(statement_text: str) -> tuple[str, ...] | None:
    """The code prefixes a statement's ``# noqa`` comments silence (``_ALL`` for a bare one), or None."""
    # flake8's own pattern and list parser, so that both front ends read a comment alike (imported only when a
    # statement with a finding has a comment to read: flake8 costs start-up time)
    from flake8.defaults import NOQA_INLINE_REGEXP
    from flake8.utils import parse_comma_separated_list

    found: list[str] = []
    for match in NOQA_INLINE_REGEXP.finditer(statement_text):
        codes = match.group("codes")
        if codes is None:
            return _ALL
        found.extend(parse_comma_separated_list(codes))  # flake8 matches listed codes as prefixes too
    return tuple(found) if found else None


def _statement_text(text: str) -> dict[int, str]:
    """Each physical line number -> the text of every line of its statement (its logical line).

    flake8 7 joins only lines it sees as one token run (multi-line strings, backslashes): inside brackets it
    splits at each line. Here a logical line ends at a NEWLINE token, or at a blank or comment line outside
    brackets, so a ``# noqa`` on the closing line of a bracketed call covers the whole call.
    """
    lines = source_lines(text)  # as the tokenizer counts them: a form feed ends no line
    mapping: dict[int, str] = {}
    first, last, depth = len(lines) + 2, -1, 0
    try:
        for token in tokenize.generate_tokens(StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT):
                continue
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(depth - 1, 0)
            first = min(first, token.start[0])
            last = max(last, token.end[0])
            if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                joined = "".join(lines[first - 1:last])
                mapping.update(dict.fromkeys(range(first, last + 1), joined))
                first, last = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError):
        pass
    for number, line in enumerate(lines, start=1):
        mapping.setdefault(number, line)
    return mapping
