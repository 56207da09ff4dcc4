"""The ``np2torch-lint`` command: arguments, files, reporting and exit codes. No analysis lives here.

Exit codes (as ruff and flake8): 0 clean, 1 findings, 2 usage error or a file that could not be read or parsed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .config import ConfigError, Settings, find_pyproject, load_settings, parse_codes
from .diagnostics import Diagnostic
from .engine import lint_text
from .files import PathProblem, SourceError, decode_source, iter_python_files, read_source
from .noqa import filter_suppressed
from .report import FORMATS, write_diagnostics, write_statistics

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="np2torch-lint",
        description="Find NumPy <-> PyTorch conversion pitfalls (rules NPT001-NPT005).",
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or folders to lint (default: .); '-' reads standard input")
    parser.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report")
    parser.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes not to report")
    parser.add_argument("--output-format", choices=FORMATS, default="text", help="how to print findings")
    parser.add_argument("--statistics", action="store_true", help="print how many findings each rule has")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
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
    if overrides:
        settings = Settings(**{**settings.__dict__, **overrides})
    return settings


def relative_to_root(path: str, settings: Settings) -> str:
    try:
        return Path(path).resolve().relative_to(settings.root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def lint_paths(paths: list[str], settings: Settings, stdin_filename: str = "stdin"
               ) -> tuple[list[Diagnostic], list[str]]:
    """Lint files and folders; returns the diagnostics and one message per file that could not be linted."""
    diagnostics: list[Diagnostic] = []
    errors: list[str] = []
    file_paths = [p for p in paths if p != "-"]
    if "-" in paths:
        try:
            source = decode_source(sys.stdin.buffer.read())
            codes = settings.enabled_codes(stdin_filename)
            found = lint_text(source.text, stdin_filename, codes)
            diagnostics.extend(filter_suppressed(found, source.text))
        except SourceError as error:
            errors.append(f"{stdin_filename}: could not parse: {error}")
    for item in iter_python_files(file_paths, settings.exclude, settings.root):
        if isinstance(item, PathProblem):
            errors.append(f"{item.path}: could not read: {item.reason}")
            continue
        try:
            source = read_source(item)
            codes = settings.enabled_codes(relative_to_root(item, settings))
            found = lint_text(source.text, item, codes)
        except SourceError as error:
            errors.append(f"{item}: could not parse: {error}")
            continue
        diagnostics.extend(filter_suppressed(found, source.text))
    return diagnostics, errors


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
    print("np2torch-fix: the autofixer is not built yet; run np2torch-lint to see the findings", file=sys.stderr)
    return EXIT_ERROR
