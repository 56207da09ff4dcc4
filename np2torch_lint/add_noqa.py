"""``--add-noqa``: a ``# noqa: NPTxxx`` comment for every finding, so a large project can adopt the linter today and
block only new findings.

The comment goes at the end of the finding's line, or, where a comment cannot stand there (inside a multi-line
string, after a backslash), at the end of its statement. A ``# noqa: CODES`` already on the statement gets the new
codes added rather than a second comment. Running the linter afterwards is clean, and running ``--add-noqa`` again
changes nothing.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

from flake8.defaults import NOQA_INLINE_REGEXP
from flake8.utils import parse_comma_separated_list

from .diagnostics import Diagnostic
from .text_edits import source_lines


@dataclass
class _Statement:
    first: int
    last: int  # the line of its NEWLINE token: a comment can always stand there
    noqa_line: int | None = None  # a line of it that has a ``# noqa: CODES`` comment


@dataclass
class _Layout:
    """What tokenizing the file tells: the statement of each line, which lines can take a comment at the end."""

    statement_of: dict[int, _Statement] = field(default_factory=dict)
    commentable: set[int] = field(default_factory=set)
    comments: dict[int, tokenize.TokenInfo] = field(default_factory=dict)


def _layout(text: str) -> _Layout:
    layout = _Layout()
    first, depth = None, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                continue
            if first is None:
                first = token.start[0]
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(depth - 1, 0)
            elif token.type == tokenize.COMMENT:
                layout.comments[token.start[0]] = token
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                layout.commentable.add(token.start[0])
            if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                statement = _Statement(first, token.start[0])
                for number in range(first, token.start[0] + 1):
                    layout.statement_of[number] = statement
                    comment = layout.comments.get(number)
                    if comment is not None and _noqa_codes(comment.string) is not None:
                        statement.noqa_line = number
                first = None
    except (tokenize.TokenError, SyntaxError):  # the file parsed, so this does not happen; add nothing then
        return _Layout()
    return layout


def _noqa_codes(comment: str) -> list[str] | None:
    """The codes of a ``# noqa: CODES`` comment; ``None`` when it is no such comment (or a bare ``# noqa``)."""
    match = NOQA_INLINE_REGEXP.search(comment)
    if match is None or match.group("codes") is None:
        return None
    return list(parse_comma_separated_list(match.group("codes")))


def add_noqa(text: str, diagnostics: list[Diagnostic]) -> tuple[str, int]:
    """``text`` with a noqa comment for each diagnostic's code, and how many comments were added or extended."""
    if not diagnostics:
        return text, 0
    layout = _layout(text)
    wanted: dict[int, set[str]] = {}  # line -> codes its comment must name
    for d in diagnostics:
        statement = layout.statement_of.get(d.line)
        if statement is None:
            continue
        if statement.noqa_line is not None:
            line = statement.noqa_line
        else:
            line = d.line if d.line in layout.commentable else statement.last
        wanted.setdefault(line, set()).add(d.code)
    lines = source_lines(text)
    changed = 0
    for number, codes in wanted.items():
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        comment = layout.comments.get(number)
        existing = _noqa_codes(comment.string) if comment is not None else None
        if comment is not None and existing is not None:
            new_codes = sorted(codes - set(existing))
            if not new_codes:
                continue
            start = comment.start[1]
            body = body[:start] + _with_codes(comment.string, existing + new_codes)
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[number - 1] = body + ending
        changed += 1
    return "".join(lines), changed


def _with_codes(comment: str, codes: list[str]) -> str:
    """The comment with its noqa code list replaced by ``codes``, keeping the text around it."""
    match = NOQA_INLINE_REGEXP.search(comment)
    assert match is not None
    listed = match.group("codes")
    trailing = listed[len(listed.rstrip(", \t")):]  # the separator before any explanation that follows
    return comment[:match.start("codes")] + ", ".join(codes) + trailing + comment[match.end("codes"):]
