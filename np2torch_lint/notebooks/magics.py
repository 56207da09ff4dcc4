"""IPython syntax in code cells, masked so that the cell parses as Python and gives no findings, and unmasked after.

A line magic (``%timeit f(x)``), a shell escape (``!pip install torch``), help (``?obj``, ``obj?``) and an
assignment from either (``files = !ls``, ``t = %time f()``) are only IPython syntax at the start of a statement,
never inside a string or brackets; each such line becomes a placeholder of the same indentation that names the
masked line, so the original comes back wherever the fixer moved it. A cell magic on the first line (``%%bash``)
makes the whole cell something else than Python, except the few that run their body as Python (``%%time``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Cell magics whose body is Python (ruff's list): the ``%%`` line is masked, the rest is analysed.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})

PLACEHOLDER_TAG = "np2torch-lint-masked"
# the value a masked assignment binds: a name nothing defines, so the analysis knows nothing about it
_UNKNOWN_VALUE = "__np2torch_lint_magic__"
_ESCAPED_COMMAND = re.compile(r"[ \t]*[%!?]")
_MAGIC_ASSIGNMENT = re.compile(r"[ \t]*(?P<target>[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*[%!]")
_PLACEHOLDER = re.compile(rf"#[ ]{PLACEHOLDER_TAG}[ ](\d+)[ \t]*$")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer splits them (not at form feeds, as str.splitlines)."""
    return _LINE.findall(text)


@dataclass
class MaskedLines:
    """The original text of every masked line of a notebook, by the number its placeholder carries."""

    originals: list[str]

    def mask(self, source: str) -> str | None:
        """The cell's source as Python with IPython syntax masked, or None when the cell is not Python at all."""
        lines = split_lines(source)
        if lines and lines[0].startswith("%%"):
            magic = lines[0][2:].split(maxsplit=1)
            if not magic or magic[0] not in PYTHON_CELL_MAGICS:
                return None
            lines[0] = self._placeholder(lines[0], "")
            start = 1
        else:
            start = 0
        scanner = _Scanner()
        masking_continuation = False
        indent = ""
        for number in range(start, len(lines)):
            line = lines[number]
            if masking_continuation:
                lines[number] = self._placeholder(line, indent + "pass")
                masking_continuation = _ends_with_backslash(line)
                continue
            if scanner.at_statement_start and _is_ipython_syntax(line):
                indent = line[:len(line) - len(line.lstrip(" \t"))]
                assignment = _MAGIC_ASSIGNMENT.match(line)
                target = f"{assignment.group('target')} = {_UNKNOWN_VALUE}" if assignment else "pass"
                lines[number] = self._placeholder(line, indent + target)
                masking_continuation = _ends_with_backslash(line)
                continue
            scanner.feed(line)
        return "".join(lines)

    def _placeholder(self, original: str, statement: str) -> str:
        content = original.rstrip("\r\n")
        self.originals.append(content)
        statement = statement or content[:len(content) - len(content.lstrip(" \t"))] + "pass"
        return f"{statement}  # {PLACEHOLDER_TAG} {len(self.originals) - 1}{original[len(content):]}"

    def unmask(self, text: str) -> str:
        """Put every masked line back, with the line ending the placeholder has now."""
        if PLACEHOLDER_TAG not in text:
            return text
        lines = split_lines(text)
        for number, line in enumerate(lines):
            content = line.rstrip("\r\n")
            found = _PLACEHOLDER.search(content)
            if found is not None:
                lines[number] = self.originals[int(found.group(1))] + line[len(content):]
        return "".join(lines)


def _is_ipython_syntax(line: str) -> bool:
    if _ESCAPED_COMMAND.match(line) or _MAGIC_ASSIGNMENT.match(line):
        return True
    scanner = _Scanner()
    scanner.feed(line)
    return scanner.saw_question_mark  # ``obj?``: a question mark is never Python outside a string


def _ends_with_backslash(line: str) -> bool:
    return line.rstrip("\r\n").endswith("\\")


class _Scanner:
    """Just enough of Python's tokenizer to know where statements start: strings, comments, brackets, backslashes."""

    def __init__(self) -> None:
        self.depth = 0
        self.open_string = ""  # the closing quote(s) of a string that goes on past the line, if any
        self.continued = False
        self.saw_question_mark = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and not self.open_string and not self.continued

    def feed(self, line: str) -> None:
        text = line.rstrip("\r\n")
        position, length = 0, len(text)
        in_comment = False
        while position < length:
            char = text[position]
            if self.open_string:
                if char == "\\":
                    position += 2
                elif text.startswith(self.open_string, position):
                    position += len(self.open_string)
                    self.open_string = ""
                else:
                    position += 1
                continue
            if char == "#":
                in_comment = True
                break
            if char in "'\"":
                self.open_string = char * 3 if text.startswith(char * 3, position) else char
                position += len(self.open_string)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(self.depth - 1, 0)
            elif char == "?":
                self.saw_question_mark = True
            position += 1
        self.continued = not in_comment and text.endswith("\\") and (not self.open_string or len(self.open_string) == 1)
        if len(self.open_string) == 1 and not self.continued:
            self.open_string = ""  # an unterminated one-line string: a syntax error Python will report
