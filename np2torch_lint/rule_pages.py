"""The rules' documentation pages, read from inside the installed package (``--explain``, ``rule``, SARIF).

``np2torch_lint/rule_docs`` is a link to ``docs/rules``, so the pages have one copy: setuptools ships what the
link points to as package data, and an editable install reads them through it.

Links to the pages (SARIF's ``helpUri``, the language server's ``codeDescription``) are given only where they work
on another machine: an http(s) address from ``[project.urls]`` in pyproject.toml, read from the installed package's
metadata. ``Rules = "https://.../docs/rules/"`` there makes ``https://.../docs/rules/NPT001.md`` each rule's link;
the project has no public address yet, so there is none, and SARIF carries each page's text instead.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

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
    return RuleInfo(rule.code, rule.name, rule.summary, page_text(rule.code))


def all_rules() -> list[RuleInfo]:
    return [rule_info(code) for code in RULES_BY_CODE]


def page_text(code: str) -> str:
    return resources.files(PACKAGE).joinpath(f"{code}.md").read_text(encoding="utf-8")


#: the ``[project.urls]`` labels of the project's own page, in the order SARIF's ``informationUri`` takes them
HOME_LABELS = ("homepage", "home", "repository", "source", "documentation")


@functools.cache
def project_urls() -> dict[str, str]:
    """``[project.urls]`` of the installed package, labels in lower case, http(s) addresses only."""
    from importlib import metadata

    try:
        entries = metadata.metadata("np2torch-lint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return {}
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        url = url.strip()
        if url.startswith(("https://", "http://")):
            urls[label.strip().lower()] = url
    return urls


def page_url(code: str) -> str | None:
    """The rule page's public address (``[project.urls]`` ``Rules``, a folder), or None where there is none."""
    rules = project_urls().get("rules")
    return f"{rules.rstrip('/')}/{code}.md" if rules else None


def home_url() -> str | None:
    """The project's public address from ``[project.urls]``, or None."""
    return next((project_urls()[label] for label in HOME_LABELS if label in project_urls()), None)
