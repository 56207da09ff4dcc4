"""The ``np2torch-lint`` and ``np2torch-fix`` commands: arguments, settings, output streams and exit codes.

    np2torch-lint [check] [PATH ...]      lint (``check`` may be left out)
    np2torch-lint rule CODE | --all       a rule's page, or the table of rules
    np2torch-lint server                  the language server, for editors
    np2torch-fix [PATH ...]               np2torch-lint --fix

Every option is declared in ``build_parser``, one group per concern; a subcommand is one entry in
``SUBCOMMANDS``. Exit codes (as ruff and flake8): 0 clean, 1 findings (or, when fixing, files changed or findings
left), 2 a usage or configuration error, or a file that could not be read, parsed or written.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, TextIO

from . import __version__
from .fix_style import FixStyle
from .report import ALIASES, FORMATS, ReportOptions, plural, wants_color
from .rules import RULES_BY_CODE

# What runs a command (``commands``, the settings in ``config``) is imported when a command runs: ``--version``,
# ``--help`` and a usage error answer without it.
if TYPE_CHECKING:
    from .commands import Performance
    from .config import Settings
    from .report import Report

__all__ = ["EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "build_parser", "fix_main", "lint_paths", "main"]  # noqa: F822

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_RULE_RANGE = f"{next(iter(RULES_BY_CODE))}-{next(reversed(RULES_BY_CODE))}"


class _UsageError(Exception):
    """A mistake on the command line: printed as argparse prints its own, with the usage line; exit 2."""


def _usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def build_parser(fixing: bool = False) -> argparse.ArgumentParser:
    prog = "np2torch-fix" if fixing else "np2torch-lint"
    parser = argparse.ArgumentParser(
        prog=prog,
        description=("Fix" if fixing else "Find") + f" NumPy <-> PyTorch conversion pitfalls (rules {_RULE_RANGE}).",
        epilog=(("" if fixing else "commands: 'np2torch-lint rule CODE' or 'rule --all' shows the rules; "
                 "'np2torch-lint server' runs the language server; 'np2torch-lint check PATH' is the default "
                 "command (write './rule' to lint a path named 'rule'). ")
                + "exit status: 0 clean, 1 findings" + (" left or files changed" if fixing else
                                                        " (with --fix: findings left or files changed)")
                + ", 2 usage or configuration error, or a file that could not be read, parsed or written"),
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="files or folders (default: .); '-' reads standard input"
                             + (" and writes the fixed code to standard output" if fixing else ""))

    rules = parser.add_argument_group("rule selection (codes or prefixes, comma-separated)")
    rules.add_argument("--select", metavar="CODES",
                       help="the rules to report, replacing the configuration's select and ignore")
    rules.add_argument("--extend-select", metavar="CODES", help="rules to report on top of the selection")
    rules.add_argument("--ignore", metavar="CODES", help="rules not to report")
    rules.add_argument("--extend-ignore", metavar="CODES", help="the same as --ignore (flake8's and ruff's name)")
    if not fixing:
        rules.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")

    output = parser.add_argument_group("output")
    output.add_argument("--output-format", choices=[*FORMATS, *ALIASES], default="concise", metavar="FORMAT",
                        help="concise (default), full (with source lines), json, json-lines, github, gitlab or "
                             "sarif; colours on a terminal only (NO_COLOR, FORCE_COLOR)")
    output.add_argument("--show-fixes", action="store_true", help="show each finding's fix")
    output.add_argument("--statistics", action="store_true",
                        help="print how many findings each rule has, instead of the findings")
    output.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even when there are findings or files that could not be parsed")

    fixes = parser.add_argument_group("fixing")
    if not fixing:
        fixes.add_argument("--fix", action="store_true", help="fix what can be fixed, as np2torch-fix does")
        fixes.add_argument("--add-noqa", action="store_true",
                           help="add a '# noqa: CODE' comment for every finding (to adopt the linter on a large "
                                "codebase), then exit 0")
    unsafe_help = "also apply fixes that may change aliasing, dtype or shapes (most NPT003-NPT005; docs/fixing.md)"
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help=unsafe_help if fixing else unsafe_help + "; without --fix, mark them fixable")
    fixes.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fixes.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    fixes.add_argument("--fix-style", choices=[style.value for style in FixStyle], default=None,
                       help="helpers: call np2torch_lint.runtime (default); inline: plain torch code")

    files = parser.add_argument_group("files")
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what .gitignore (in a git repository) and .ignore files leave out (default: yes)")
    files.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply exclude to paths given explicitly too, as pre-commit needs (default: no)")
    files.add_argument("--stdin-filename", metavar="NAME", default="stdin",
                       help="the name to report for standard input (default: stdin)")

    running = parser.add_argument_group("running")
    running.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                         help="worker processes (default: the number of CPUs; results are the same with any N)")
    running.add_argument("--no-cache", action="store_true",
                         help="read and write no cache (default: .np2torch_lint_cache/ beside the configuration)")
    running.add_argument("--cache-dir", metavar="PATH", type=Path, help="where the cache lives")
    running.add_argument("-v", "--verbose", action="store_true",
                         help="also say on stderr what the run did not trust (cache entries it ignored and rewrote)")

    configuration = parser.add_argument_group("configuration")
    configuration.add_argument("--config", metavar="PATH", type=Path,
                               help="the pyproject.toml to read (default: the nearest one with "
                                    "[tool.np2torch-lint])")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def build_rule_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="np2torch-lint rule", description="Show a rule's documentation, or "
                                     "the table of every rule.")
    parser.add_argument("code", nargs="?", metavar="CODE", help="a rule code, like NPT004")
    parser.add_argument("--all", action="store_true", help="every rule: a table (or JSON, with their pages)")
    parser.add_argument("--output-format", choices=["text", "json"], default="text")
    return parser


def settings_for(args: argparse.Namespace) -> Settings:
    """The configuration file's settings with the command line's on top; raises ``ConfigError`` for a mistake in
    the file, ``_UsageError`` for one on the command line."""
    from .config import ConfigError, RuleSelection, find_pyproject, load_settings, parse_codes

    if args.config is not None:
        if not args.config.is_file():
            raise _UsageError(f"--config {args.config}: no such file")
        pyproject: Path | None = args.config
    else:
        first = next((p for p in args.paths if p != "-"), ".")
        pyproject = find_pyproject(Path(first) if Path(first).exists() else Path.cwd())
    settings = load_settings(pyproject)
    try:
        select = None if args.select is None else parse_codes(args.select, "--select", command_line=True,
                                                              allow_empty=False)
        extend_select = parse_codes(args.extend_select or "", "--extend-select", command_line=True)
        ignore = (*parse_codes(args.ignore or "", "--ignore", command_line=True),
                  *parse_codes(args.extend_ignore or "", "--extend-ignore", command_line=True))
    except ConfigError as error:
        raise _UsageError("; ".join(error.problems)) from None
    overrides: dict[str, object] = {}
    if select is not None or extend_select or ignore:
        overrides["selections"] = (*settings.selections, RuleSelection(select, extend_select, ignore))
    if args.fix_style is not None:
        overrides["fix_style"] = FixStyle(args.fix_style)
    if args.respect_gitignore is not None:
        overrides["respect_gitignore"] = args.respect_gitignore
    if args.force_exclude is not None:
        overrides["force_exclude"] = args.force_exclude
    return dataclasses.replace(settings, **overrides)


def _rule_main(argv: list[str]) -> int:
    parser = build_rule_parser()
    args = parser.parse_args(argv)
    if args.all == (args.code is not None):
        return _usage_error(parser, "give a rule code, or --all")
    from .commands import write_rule_table

    if args.all:
        from .rule_pages import all_rules

        write_rule_table(all_rules(), sys.stdout, as_json=args.output_format == "json")
        return EXIT_CLEAN
    return _explain(parser, args.code, as_json=args.output_format == "json")


def _explain(parser: argparse.ArgumentParser, code: str, as_json: bool = False) -> int:
    from .commands import write_rule_table
    from .rule_pages import rule_info

    try:
        rule = rule_info(code)
    except KeyError:
        return _usage_error(parser, f"no rule {code!r}; known rules: {', '.join(RULES_BY_CODE)}")
    if as_json:
        write_rule_table([rule], sys.stdout, as_json=True)
    else:
        sys.stdout.write(rule.page if rule.page.endswith("\n") else rule.page + "\n")
    return EXIT_CLEAN


def _server_main(argv: list[str]) -> int:
    from .server import main as serve  # the language server (the [lsp] extra) is imported only when asked for

    return serve(argv)


#: ``np2torch-lint NAME ...`` runs ``SUBCOMMANDS[NAME](rest of the arguments)``; anything else is linting (a folder
#: named like a command is linted as ``./server`` or ``check server``).
SUBCOMMANDS: dict[str, Callable[[list[str]], int]] = {"rule": _rule_main, "server": _server_main}


def _closed_pipe_is_quiet(command: Callable[[list[str] | None], int]) -> Callable[[list[str] | None], int]:
    """``np2torch-lint | head`` ends without a traceback when the reader stops reading (Python's recipe)."""
    @functools.wraps(command)
    def wrapper(argv: list[str] | None = None) -> int:
        try:
            return command(argv)
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so exiting flushes nowhere
            return EXIT_FINDINGS
    return wrapper


@_closed_pipe_is_quiet
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    if argv and argv[0] == "check":
        argv = argv[1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.explain is not None:
        return _explain(parser, args.explain)
    return _run(parser, args, fixing=args.fix or args.diff or args.check)


@_closed_pipe_is_quiet
def fix_main(argv: list[str] | None = None) -> int:
    parser = build_parser(fixing=True)
    return _run(parser, parser.parse_args(argv), fixing=True)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, fixing: bool) -> int:
    with _log_on_stderr(args.verbose):
        return _run_command(parser, args, fixing)


@contextlib.contextmanager
def _log_on_stderr(verbose: bool) -> Iterator[None]:
    """``--verbose``: the package's log lines (``np2torch-lint: ...``) on stderr for this run."""
    if not verbose:
        yield
        return
    import logging  # only for --verbose (start-up time)

    log, handler = logging.getLogger("np2torch_lint"), logging.StreamHandler(sys.stderr)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)


def _run_command(parser: argparse.ArgumentParser, args: argparse.Namespace, fixing: bool) -> int:
    from .config import ConfigError

    output_format = ALIASES.get(args.output_format, args.output_format)
    if args.statistics and FORMATS[output_format].statistics is None:
        return _usage_error(parser, f"--statistics cannot be shown as {output_format}: "
                                    "use concise, full, json or json-lines")
    if getattr(args, "add_noqa", False):
        if fixing:
            return _usage_error(parser, "--add-noqa cannot be combined with --fix, --diff or --check")
        if "-" in args.paths:
            return _usage_error(parser, "--add-noqa changes files; it cannot read standard input")
    try:
        settings = settings_for(args)
    except _UsageError as error:
        return _usage_error(parser, str(error))
    except ConfigError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return EXIT_ERROR
    if getattr(args, "add_noqa", False):
        return _add_noqa(settings, args)
    if fixing:
        return _fix(settings, args, output_format)
    return _lint(settings, args, output_format)


def _write_report(report: Report, args: argparse.Namespace, output_format: str, stream: TextIO) -> None:
    spec = FORMATS[output_format]
    options = ReportOptions(color=spec.for_terminal and wants_color(stream), show_fixes=args.show_fixes,
                            unsafe_fixes=args.unsafe_fixes)
    write = spec.statistics if args.statistics else spec.write
    assert write is not None
    write(report, stream, options)


def _print_errors(errors: list[str]) -> None:
    for message in errors:
        print(message, file=sys.stderr)


def _fails(errors: list[str], report: Report, exit_zero: bool) -> bool:
    """Whether the run exits 2: an input could not be read or written, or one could not be parsed and there is no
    --exit-zero (ruff reports a syntax error as a finding, which --exit-zero lets pass; the file is still named)."""
    could_not_parse = len(report.unparsed)  # each of them has its line among ``errors``
    return len(errors) > could_not_parse or (could_not_parse > 0 and not exit_zero)


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes (1 or more), got {text!r}")
    return jobs


def _performance(args: argparse.Namespace) -> Performance:
    from .commands import Performance

    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    return Performance(jobs=jobs, cache=not args.no_cache, cache_dir=args.cache_dir)


def _lint(settings: Settings, args: argparse.Namespace, output_format: str) -> int:
    from .commands import lint

    shows_edits = FORMATS[output_format].shows_edits and not args.statistics
    report, errors = lint(args.paths, settings, args.stdin_filename, shows_edits, _performance(args))
    _print_errors(errors)
    _write_report(report, args, output_format, sys.stdout)
    if _fails(errors, report, args.exit_zero):
        return EXIT_ERROR
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_CLEAN


def _fix(settings: Settings, args: argparse.Namespace, output_format: str) -> int:
    """Fix, then list what is left in the chosen format (on standard error when standard output carries a stdin
    filter's fixed code; not at all with --diff, whose output is a patch), and a summary on standard error that
    counts only what was written."""
    from .commands import fix

    writes = not (args.diff or args.check)
    shows_edits = FORMATS[output_format].shows_edits and not args.statistics
    run = fix(args.paths, settings, stdin_filename=args.stdin_filename, unsafe=args.unsafe_fixes, writes=writes,
              diff=sys.stdout if args.diff else None, shows_edits=shows_edits, performance=_performance(args))
    _print_errors(run.errors)
    if not args.diff:
        _write_report(run.report, args, output_format, sys.stderr if run.filtered_stdin else sys.stdout)
    verb = "fixed" if writes else "would fix"
    print(f"{verb} {plural(run.fixed, 'finding')} in {plural(run.changed_files, 'file')}, {run.left} left",
          file=sys.stderr)
    if run.undeclared_runtime_import:
        from .dependencies import NOTICE

        print(NOTICE, file=sys.stderr)
    if _fails(run.errors, run.report, args.exit_zero):
        return EXIT_ERROR
    return EXIT_FINDINGS if (run.changed_files or run.left) and not args.exit_zero else EXIT_CLEAN


def _add_noqa(settings: Settings, args: argparse.Namespace) -> int:
    from .commands import add_noqa_comments

    run = add_noqa_comments(args.paths, settings)
    _print_errors(run.errors + run.notes)
    print(f"added {plural(run.added, 'noqa comment')} to {plural(run.files, 'file')}", file=sys.stderr)
    return EXIT_ERROR if run.errors else EXIT_CLEAN


def __getattr__(name: str) -> object:
    if name == "lint_paths":  # part of this module's interface, from the commands (imported when asked for)
        from .commands import lint_paths

        return lint_paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
