"""``python -m np2torch_lint.audit [options] script.py [ARGS...]`` (or ``np2torch-audit``): run a script, or a
module with ``-m``, under the audit, as ``python -m cProfile`` does, and report what it found.

The report goes to standard error (the script's standard output stays its own), or to ``--output FILE``. Exit
status: the script's own when it fails (1 for an uncaught exception, whose traceback is printed as Python prints
it); otherwise 1 when there are findings (0 with ``--exit-zero``), 0 when there are none; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from types import TracebackType
from typing import TextIO

from .output import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
#: the options that take a value (the first other word is the script; everything after it is the script's)
_VALUED = {"--output-format", "-o", "--output"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="np2torch-audit",
        usage="%(prog)s [options] (script.py | -m module) [ARGS ...]",
        description="Run a Python script (or module) and report the NumPy <-> PyTorch pitfalls it hits "
                    "(NPT001-NPT007), each at its line in your code, with how often and how many bytes.",
        epilog="The report goes to standard error unless --output names a file. Exit status: the script's own when "
               "it fails; else 1 when there are findings (0 with --exit-zero), 0 when there are none; 2 for a "
               "usage error.")
    parser.add_argument("-m", dest="module", metavar="MODULE", help="run a module, as python -m does")
    parser.add_argument("--output-format", choices=FORMATS, default="concise", metavar="FORMAT",
                        help=f"{', '.join(FORMATS)} (as np2torch-lint's; default: concise)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    parser.add_argument("--compare", action="store_true",
                        help="lint the files of the findings with np2torch-lint and mark each finding 'also found "
                             "by np2torch-lint' or 'not found statically'")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    return parser


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """The audit's options, and the target with its arguments: the first word that is not an option (or the
    value of ``-m``) starts the target."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "-m":
            return argv[:index + 2], argv[index + 2:]
        if word == "--":
            return argv[:index], argv[index + 1:]
        if not word.startswith("-") or word == "-":
            return argv[:index], argv[index:]
        index += 2 if word in _VALUED else 1
    return argv, []


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    options, target = _split(argv)
    args = parser.parse_args(options)
    if args.module is None and not target:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: give a script to run (or -m module)", file=sys.stderr)
        return EXIT_ERROR
    if args.module is None and not os.path.isfile(target[0]):
        print(f"{parser.prog}: error: can't open file {target[0]!r}: no such file", file=sys.stderr)
        return EXIT_ERROR
    if args.output is not None:
        try:
            stream: TextIO = open(args.output, "w", encoding="utf-8")
        except OSError as error:
            print(f"{parser.prog}: error: cannot write --output {args.output}: {error.strerror}", file=sys.stderr)
            return EXIT_ERROR
    else:
        stream = sys.stderr
    try:
        status, report = _run(args.module, target)
        if args.compare:
            report.compare()
        sys.stdout.flush()
        report.write(stream, args.output_format, color=_colors(stream))
    finally:
        if stream is not sys.stderr:
            stream.close()
    if status:
        return status
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_CLEAN


def _colors(stream: TextIO) -> bool:
    from ..report import wants_color  # NO_COLOR, FORCE_COLOR and a terminal, as np2torch-lint decides

    return wants_color(stream)


def _run(module: str | None, target: list[str]) -> tuple[int, object]:
    """Run the script or module under the audit, as ``python`` would run it; returns its exit status and the
    report."""
    from .session import audit

    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    if module is not None:
        sys.argv = [module, *target]
        sys.path.insert(0, os.getcwd())
    else:
        sys.argv = list(target)
        sys.path.insert(0, os.path.dirname(os.path.abspath(target[0])))
    status = 0
    try:
        with audit() as report:
            try:
                if module is not None:
                    runpy.run_module(module, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(target[0], run_name="__main__")
            except SystemExit as exit:
                status = _exit_status(exit.code)
            except BaseException as error:  # the script's own failure: shown as Python shows it, status kept
                traceback.print_exception(type(error), error, _from_the_script(error.__traceback__))
                status = 130 if isinstance(error, KeyboardInterrupt) else 1
    finally:
        sys.argv = saved_argv
        if sys.path and saved_path0 is not None:
            sys.path.pop(0)
    return status, report


def _from_the_script(frames: TracebackType | None) -> TracebackType | None:
    """A traceback without this runner's frames and runpy's, which Python would not show either."""
    while frames is not None and frames.tb_frame.f_code.co_filename in (__file__, runpy.__file__, "<frozen runpy>"):
        frames = frames.tb_next
    return frames


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as Python prints it
    return 1
