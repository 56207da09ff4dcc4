"""The formats for people: ``concise`` (flake8's one line per finding) and ``full`` (ruff's look: the source lines,
a caret under the span, the fix), with colours on a terminal."""

from __future__ import annotations

from typing import TextIO

from ..text_edits import source_lines
from .model import Report, Reported, ReportOptions, fix_applies, plural

CONTEXT_LINES = 2  # source lines shown above and below a finding in ``full``
MAX_SPAN_LINES = 8  # a longer span shows its first lines only
TAB_WIDTH = 4

BOLD, RED, CYAN, BLUE = "1", "31", "36", "34"


class _Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m"


def _location(item: Reported, paint: _Painter) -> str:
    d = item.diagnostic
    colon = paint(":", CYAN)
    cell = f"cell {d.cell}{colon}" if d.cell is not None else ""
    return f"{paint(d.filename, BOLD)}{colon}{cell}{d.line}{colon}{d.column}{colon}"


def write_concise(report: Report, stream: TextIO, options: ReportOptions) -> None:
    """``path:line:column: CODE message``; with ``--show-fixes``, each fix on an indented line below."""
    paint = _Painter(options.color)
    for item in report.findings:
        d = item.diagnostic
        stream.write(f"{_location(item, paint)} {paint(d.code, BOLD, RED)} {d.message}\n")
        if options.show_fixes and d.fix is not None:
            stream.write(f"    {paint('fix', BOLD, CYAN)} ({_fix_kind(item, options)}): {d.fix.title}\n")


def _fix_kind(item: Reported, options: ReportOptions) -> str:
    fix = item.diagnostic.fix
    assert fix is not None
    if fix_applies(fix, options):
        return fix.applicability.value
    return f"{fix.applicability.value}, needs --unsafe-fixes"


def write_full(report: Report, stream: TextIO, options: ReportOptions) -> None:
    """Each finding with its source lines and a caret under its span, and its fix as help; then a count."""
    paint = _Painter(options.color)
    lines_of = {name: source_lines(text) for name, text in report.sources.items()}
    for item in report.findings:
        d = item.diagnostic
        marker = paint("[*]", CYAN) + " " if fix_applies(d.fix, options) else ""
        stream.write(f"{_location(item, paint)} {paint(d.code, BOLD, RED)} {marker}{d.message}\n")
        lines = lines_of.get(d.filename)
        if lines:
            stream.write(_snippet(item, lines, paint))
        if d.fix is not None:
            unsafe = "" if fix_applies(d.fix, options) else f" ({d.fix.applicability.value} fix: --unsafe-fixes)"
            stream.write(f"  = {paint('help', BOLD, CYAN)}: {d.fix.title}{unsafe}\n")
        stream.write("\n")
    if report.findings:
        fixable = sum(fix_applies(item.diagnostic.fix, options) for item in report.findings)
        stream.write(f"Found {plural(len(report.findings), 'finding')}.\n")
        if fixable:
            stream.write(f"{paint('[*]', CYAN)} {fixable} fixable with --fix.\n")


def _snippet(item: Reported, lines: list[str], paint: _Painter) -> str:
    d = item.diagnostic
    last_span_line = min(d.end_line, d.line + MAX_SPAN_LINES - 1, len(lines))
    first = max(d.line - CONTEXT_LINES, 1)
    last = min(last_span_line + CONTEXT_LINES, len(lines))
    while first < d.line and not lines[first - 1].strip():  # no blank context at the edges
        first += 1
    while last > last_span_line and not lines[last - 1].strip():
        last -= 1
    width = len(str(last))
    gutter = paint(" " * width + " |", BOLD, BLUE)
    out = [gutter + "\n"]
    for number in range(first, last + 1):
        text = lines[number - 1].rstrip("\r\n")
        shown = text.expandtabs(TAB_WIDTH)
        out.append(paint(f"{number:>{width}} |", BOLD, BLUE) + (" " + shown if shown else "") + "\n")
        if d.line <= number <= last_span_line:
            start = d.column - 1 if number == d.line else len(text) - len(text.lstrip())
            end = d.end_column - 1 if number == d.end_line else len(text)
            before = len(text[:start].expandtabs(TAB_WIDTH))
            carets = max(len(text[:end].expandtabs(TAB_WIDTH)) - before, 1)
            label = " " + paint(d.code, BOLD, RED) if number == last_span_line else ""
            out.append(f"{gutter} {' ' * before}{paint('^' * carets, BOLD, RED)}{label}\n")
    out.append(gutter + "\n")
    return "".join(out)
