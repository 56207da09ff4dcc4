"""SARIF 2.1.0, for code-scanning services: every rule described under ``tool.driver.rules`` (its page's text as
``help``, a link to it only where ``[project.urls]`` gives a public address: ``rule_pages``), each finding a result
with its region and, where it has one, its fix as replacements.

Columns count code points (``columnKind``), as the other formats' do; paths inside the current folder are given
relative to it (``%SRCROOT%``), others as absolute file URIs. A file that could not be parsed is a result without
a rule (as ruff gives its syntax errors), at the place the reason names.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .. import __version__
from ..rules import RULES_BY_CODE
from .model import Report, ReportOptions, Reported, Unparsed, relative_posix_path

if TYPE_CHECKING:
    from ..rule_pages import RuleInfo

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"


def write_sarif(report: Report, stream: TextIO, options: ReportOptions) -> None:
    from ..rule_pages import all_rules, home_url  # the pages, read only for this format

    rules = all_rules()
    index = {rule.code: position for position, rule in enumerate(rules)}
    driver: dict[str, object] = {"name": options.tool_name, "version": __version__}
    if home_url():
        driver["informationUri"] = home_url()
    driver["rules"] = [_rule_descriptor(rule) for rule in rules]
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path.cwd().as_uri() + "/"}},
        "results": [*(_result(item, index) for item in report.findings), *map(_unparsed_result, report.unparsed)],
    }
    json.dump({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, stream, indent=2)
    stream.write("\n")


def _rule_descriptor(rule: RuleInfo) -> dict[str, object]:
    from ..rule_pages import page_url

    descriptor: dict[str, object] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.lead},
        "help": {"text": rule.page, "markdown": rule.page},
        "defaultConfiguration": {"level": "error", "enabled": RULES_BY_CODE[rule.code].default},
    }
    if page_url(rule.code):
        descriptor["helpUri"] = page_url(rule.code)
    return descriptor


def _artifact(filename: str) -> dict[str, str]:
    from urllib.parse import quote

    path = relative_posix_path(filename)
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": SOURCE_ROOT}


def _region(start: tuple[int, int], end: tuple[int, int]) -> dict[str, int]:
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


def _unparsed_result(unparsed: Unparsed) -> dict[str, object]:
    return {"level": "error", "message": {"text": unparsed.message}, "locations": [{"physicalLocation": {
        "artifactLocation": _artifact(unparsed.filename), "region": _region(unparsed.position, unparsed.position)}}]}


def _result(item: Reported, index: dict[str, int]) -> dict[str, object]:
    d = item.diagnostic
    result: dict[str, object] = {
        "ruleId": d.code,
        "ruleIndex": index[d.code],
        "level": "error",
        "message": {"text": d.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": _artifact(d.filename),
            "region": _region((d.line, d.column), (d.end_line, d.end_column)),
        }}],
    }
    if d.fix is not None and item.edits:
        result["fixes"] = [{
            "description": {"text": f"{d.fix.title} ({d.fix.applicability.value} fix)"},
            "artifactChanges": [{
                "artifactLocation": _artifact(d.filename),
                "replacements": [{"deletedRegion": _region(edit.start, edit.end),
                                  "insertedContent": {"text": edit.content}} for edit in item.edits],
            }],
        }]
    properties = dict(item.properties or {})
    if d.cell is not None:
        properties["cell"] = d.cell
    if properties:
        result["properties"] = properties
    return result
