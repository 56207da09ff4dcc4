"""Lint one source text: (cheap prefilter) -> parse once -> analyse once -> every rule -> diagnostics.

Positions are computed only for files that have findings: LibCST's ``PositionProvider`` walks the whole tree
again (about 3.5x a parse, measured on torch's sources), and most files have no findings.
"""

from __future__ import annotations

from typing import Collection

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .diagnostics import Diagnostic, Finding
from .files import SourceError
from .inference import analyze
from .noqa import skips_file
from .rules import ALL_RULES


def could_have_findings(text: str) -> bool:
    """Every rule needs a tensor, and a tensor needs torch imported: a file that never says "torch" is clean."""
    return "torch" in text


def parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        message = error.message.rstrip(".")
        raise SourceError(f"{message} at {error.raw_line}:{error.raw_column + 1}") from None
    except (RecursionError, MemoryError) as error:  # pathological nesting or size
        raise SourceError(f"too deeply nested or too large to parse ({type(error).__name__})") from None


def findings_for(module: cst.Module, codes: Collection[str] | None = None) -> list[Finding]:
    facts = analyze(module)
    return [finding for rule in ALL_RULES if codes is None or rule.CODE in codes for finding in rule.check(facts)]


def lint_text(text: str, filename: str, codes: Collection[str] | None = None) -> list[Diagnostic]:
    """The diagnostics of one file's text, sorted by position; raises ``SourceError`` when it does not parse.

    ``# noqa`` comments are not applied here (the flake8 plugin leaves them to flake8); ``skip-file`` is.
    """
    if not could_have_findings(text) or skips_file(text) or (codes is not None and not codes):
        return []
    module = parse(text)
    findings = findings_for(module, codes)
    if not findings:
        return []
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    diagnostics = []
    for finding in findings:
        where = positions[finding.node]
        diagnostics.append(Diagnostic(
            finding.code, finding.message, filename, where.start.line, where.start.column + 1, where.end.line,
            where.end.column + 1, finding.fix))
    diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
    return diagnostics
