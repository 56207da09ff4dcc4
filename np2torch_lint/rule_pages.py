"""The rules' documentation pages, read from inside the installed package (``--explain``, ``rule``, SARIF).

``np2torch_lint/rule_docs`` is a link to ``docs/rules``, so the pages have one copy: setuptools ships what the
link points to as package data, and an editable install reads them through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .rules import RULES_BY_CODE

PACKAGE = "np2torch_lint.rule_docs"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    code: str
    name: str  # named after the bad pattern, as ruff names rules
    summary: str  # one line
    page: str  # the whole page, in Markdown

    @property
    def lead(self) -> str:
        """The page's first paragraph below its title: what the rule finds, in a sentence."""
        paragraphs = [part.strip() for part in self.page.split("\n\n")]
        return next((part for part in paragraphs if part and not part.startswith("#")), self.summary)


def rule_info(code: str) -> RuleInfo:
    """The rule ``code`` (any case); ``KeyError`` when there is no such rule."""
    rule = RULES_BY_CODE[code.upper()]
    return RuleInfo(rule.CODE, rule.NAME, rule.SUMMARY, page_text(rule.CODE))


def all_rules() -> list[RuleInfo]:
    return [rule_info(code) for code in RULES_BY_CODE]


def page_text(code: str) -> str:
    return resources.files(PACKAGE).joinpath(f"{code}.md").read_text(encoding="utf-8")


def page_uri(code: str) -> str:
    """A URI of the rule's page: the file inside the installed package (the project has no public address yet)."""
    with resources.as_file(resources.files(PACKAGE).joinpath(f"{code}.md")) as path:
        return Path(path).resolve().as_uri()
