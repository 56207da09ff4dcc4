"""The ``np2torch-lint`` and ``np2torch-fix`` commands: arguments, files, reporting, writing and exit codes.

Exit codes (as ruff and flake8): 0 clean, 1 findings (or, when fixing, files changed or findings left), 2 a usage
error or a file that could not be read, parsed or written.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from . import __version__
from .config import ConfigError, Settings, find_pyproject, load_settings, parse_codes
from .diagnostics import Diagnostic
from .engine import LintContext, lint_text
from .files import (PathProblem, Source, SourceError, decode_source, is_notebook, iter_python_files, read_source,
                    relative_to)
from .fixer import FixError, FixOutcome, fix_text
from .fixes import FixStyle
from .noqa import filter_suppressed
from .project import Project
from .report import FORMATS, write_diagnostics, write_statistics
from .writing import StaleTemporaries, write_atomically

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser(fixing: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="np2torch-fix" if fixing else "np2torch-lint",
        description=("Fix" if fixing else "Find") + " NumPy <-> PyTorch conversion pitfalls (rules NPT001-NPT005).",
        epilog="exit status: 0 clean, 1 findings" + (
            " left or files changed (as --check: a commit hook stops so that you can look)" if fixing else
            " (with --fix: findings left or files changed)") + ", 2 usage error or unreadable file",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or folders (default: .); '-' reads standard input"
                             + (" and writes the fixed code to standard output" if fixing else ""))
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes not to report")
    if not fixing:
        parser.add_argument("--output-format", choices=FORMATS, default="text", help="how to print findings")
        parser.add_argument("--statistics", action="store_true", help="print how many findings each rule has")
        parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
        parser.add_argument("--fix", action="store_true", help="fix what can be fixed, as np2torch-fix does")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply fixes that may change aliasing, dtype or shapes (most NPT003-NPT005 "
                             "fixes; see docs/fixing.md)")
    parser.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    parser.add_argument("--fix-style", choices=[style.value for style in FixStyle], default=None,
                        help="helpers: call np2torch_lint.runtime (default); inline: plain torch code")
    parser.add_argument("--config", metavar="PATH", type=Path,
                        help="the pyproject.toml to read (default: the nearest one with [tool.np2torch-lint])")
    parser.add_argument("--stdin-filename", metavar="NAME", default="stdin",
                        help="the name to report for standard input (default: stdin)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def load_run_settings(args: argparse.Namespace) -> Settings:
    if args.config is not None:
        if not args.config.is_file():
            raise ConfigError(f"--config {args.config}: no such file")
        pyproject: Path | None = args.config
    else:
        first = next((p for p in args.paths if p != "-"), ".")
        pyproject = find_pyproject(Path(first) if Path(first).exists() else Path.cwd())
    settings = load_settings(pyproject)
    overrides = {}
    if args.select is not None:
        overrides["select"] = parse_codes(args.select, "--select")
    if args.ignore is not None:
        overrides["ignore"] = parse_codes(args.ignore, "--ignore")
    if args.fix_style is not None:
        overrides["fix_style"] = FixStyle(args.fix_style)
    if overrides:
        settings = Settings(**{**settings.__dict__, **overrides})
    return settings


@dataclass(frozen=True)
class Input:
    name: str
    source: Source
    codes: frozenset[str]
    is_stdin: bool = False


def iter_inputs(paths: list[str], settings: Settings, stdin_filename: str, errors: list[str],
                stdin_bytes: list[bytes] | None = None) -> Iterator[Input]:
    """Each readable input once, decoded, with the codes enabled for it; what cannot be read goes to ``errors``.

    Standard input's raw bytes are appended to ``stdin_bytes`` when given, so a filter can pass them through.
    """
    if "-" in paths:
        data = sys.stdin.buffer.read()
        if stdin_bytes is not None:
            stdin_bytes.append(data)
        try:
            yield Input(stdin_filename, decode_source(data), settings.enabled_codes(stdin_filename), True)
        except SourceError as error:
            errors.append(f"{stdin_filename}: could not parse: {error}")
    for item in iter_python_files([p for p in paths if p != "-"], settings.exclude, settings.root, settings.include):
        if isinstance(item, PathProblem):
            errors.append(f"{item.path}: could not read: {item.reason}")
            continue
        try:
            source = read_source(item)
        except SourceError as error:
            errors.append(f"{item}: could not parse: {error}")
            continue
        yield Input(item, source, settings.enabled_codes(relative_to(item, settings.root)))


def lint_paths(paths: list[str], settings: Settings, stdin_filename: str = "stdin"
               ) -> tuple[list[Diagnostic], list[str]]:
    """Lint files and folders; returns the diagnostics and one message per file that could not be linted."""
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    context = LintContext(project=Project.at(settings.root, exclude=settings.exclude))
    for each in iter_inputs(paths, settings, stdin_filename, errors):
        try:
            diagnostics.extend(lint_input(each, context))
        except SourceError as error:
            errors.append(f"{each.name}: could not parse: {error}")
    return diagnostics, errors


def lint_input(each: Input, context: LintContext | None = None) -> list[Diagnostic]:
    """One input's diagnostics after ``# noqa``; a notebook's are by cell (the notebook code is imported here only)."""
    if is_notebook(each.name):
        from .notebooks import lint_notebook

        return lint_notebook(each.source.text, each.name, each.codes)
    found = lint_text(each.source.text, each.name, each.codes, context=None if each.is_stdin else context)
    return filter_suppressed(found, each.source.text)


def fix_input(each: Input, settings: Settings, unsafe: bool) -> FixOutcome:
    if is_notebook(each.name):
        from .notebooks import fix_notebook

        return fix_notebook(each.source.text, each.name, each.codes, settings.fix_style, unsafe)
    return fix_text(each.source.text, each.name, each.codes, settings.fix_style, unsafe)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["server"]:  # a folder named "server" is linted as ./server
        from .server import main as serve

        return serve(argv[1:])
    args = build_parser().parse_args(argv)
    if args.fix or args.diff or args.check or args.unsafe_fixes:
        return run_fixes(args)
    try:
        settings = load_run_settings(args)
    except ConfigError as error:
        print(f"np2torch-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    diagnostics, errors = lint_paths(args.paths, settings, args.stdin_filename)
    for message in errors:
        print(message, file=sys.stderr)
    write_diagnostics(diagnostics, args.output_format, sys.stdout)
    if args.statistics:
        write_statistics(diagnostics, args.output_format, sys.stdout if args.output_format == "text" else sys.stderr)
    if errors:
        return EXIT_ERROR
    if diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def fix_main(argv: list[str] | None = None) -> int:
    return run_fixes(build_parser(fixing=True).parse_args(argv))


def run_fixes(args: argparse.Namespace) -> int:
    """Fix files (or stdin), writing each changed file atomically, or printing a diff with ``--diff``."""
    try:
        settings = load_run_settings(args)
    except ConfigError as error:
        print(f"np2torch-fix: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    writes = not (args.diff or args.check)
    fixed = changed_files = left = 0
    errors: list[str] = []
    stdin_bytes: list[bytes] = []
    stdin_written = False
    stale = StaleTemporaries()
    for each in iter_inputs(args.paths, settings, args.stdin_filename, errors, stdin_bytes):
        try:
            outcome = fix_input(each, settings, args.unsafe_fixes)
        except SourceError as error:
            errors.append(f"{each.name}: could not parse: {error}")
            continue
        except FixError as error:
            errors.append(f"{each.name}: internal error, file left unchanged: {error}")
            continue
        fixed += outcome.fixed
        left += len(outcome.remaining)
        changed = outcome.text != each.source.text
        changed_files += changed
        if args.diff and changed and is_notebook(each.name):
            sys.stdout.writelines(outcome.diff_lines(each.name))  # a NotebookFixOutcome: a diff per cell
        elif args.diff and changed:
            sys.stdout.writelines(difflib.unified_diff(
                each.source.text.splitlines(keepends=True), outcome.text.splitlines(keepends=True),
                fromfile=each.name, tofile=each.name))
        if not writes:
            continue
        if not each.is_stdin:
            stale.clean_beside(each.name)  # temporary files a killed run left in this folder
        if each.is_stdin:
            sys.stdout.buffer.write(outcome.text.encode(each.source.encoding))
            stdin_written = True
        elif changed:
            try:
                write_atomically(each.name, outcome.text.encode(each.source.encoding))
            except (OSError, UnicodeEncodeError) as error:
                errors.append(f"{each.name}: could not write, left unchanged: {error}")
    if writes and stdin_bytes and not stdin_written:
        sys.stdout.buffer.write(stdin_bytes[0])  # a filter never loses its input: pass it through unchanged
    for message in errors:
        print(message, file=sys.stderr)
    verb = "fixed" if writes else "would fix"
    print(f"{verb} {fixed} findings in {changed_files} files, {left} left", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if changed_files or left else EXIT_CLEAN
