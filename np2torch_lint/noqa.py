"""Suppression comments, with flake8's semantics, for the ``np2torch-lint`` command.

``# noqa`` silences every finding on its logical line, ``# noqa: NPT001,NPT002`` those codes; a comment on any
physical line of a multi-line statement covers the whole statement, as in flake8. The flake8 plugin leaves all of
this to flake8 itself. A file holding ``# np2torch-lint: skip-file`` (or flake8's ``# flake8: noqa``) is skipped.
"""

from __future__ import annotations

import re
import tokenize
from io import StringIO

# flake8's own pattern and list parser, so that both front ends read a comment alike
from flake8.defaults import NOQA_INLINE_REGEXP
from flake8.utils import parse_comma_separated_list

from .diagnostics import Diagnostic

_SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*(?:np2torch-lint[ \t]*:[ \t]*skip-file|flake8[:=][ \t]*noqa)[ \t]*$",
                        re.IGNORECASE | re.MULTILINE)


def skips_file(text: str) -> bool:
    return ("skip-file" in text or "noqa" in text) and _SKIP_FILE.search(text) is not None


def filter_suppressed(diagnostics: list[Diagnostic], text: str) -> list[Diagnostic]:
    if not diagnostics or "noqa" not in text:
        return diagnostics
    logical_line_text = _logical_line_text(text)
    kept = []
    for diagnostic in diagnostics:
        line_text = logical_line_text.get(diagnostic.line, "")
        if not _is_suppressed(diagnostic.code, line_text):
            kept.append(diagnostic)
    return kept


def _is_suppressed(code: str, line_text: str) -> bool:
    match = NOQA_INLINE_REGEXP.search(line_text)  # flake8 reads the first ``# noqa`` only
    if match is None:
        return False
    codes = match.group("codes")
    if codes is None:
        return True
    listed = tuple(parse_comma_separated_list(codes))
    return code in listed or code.startswith(listed)


def _logical_line_text(text: str) -> dict[int, str]:
    """Each physical line number -> the text of every line of its logical line, as flake8 maps them."""
    lines = text.splitlines(keepends=True)
    mapping: dict[int, str] = {}
    min_line, max_line = len(lines) + 2, -1
    try:
        for token in tokenize.generate_tokens(StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            min_line = min(min_line, token.start[0])
            max_line = max(max_line, token.end[0])
            if token.type in (tokenize.NL, tokenize.NEWLINE):
                joined = "".join(lines[min_line - 1:max_line])
                mapping.update(dict.fromkeys(range(min_line, max_line + 1), joined))
                min_line, max_line = len(lines) + 2, -1
    except (tokenize.TokenError, SyntaxError):
        pass
    for number, line in enumerate(lines, start=1):
        mapping.setdefault(number, line)
    return mapping
