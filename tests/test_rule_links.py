"""Rule links only where they open anywhere: an http(s) address from [project.urls]; without one, SARIF carries each
rule page's text and no link, and the language server gives no code description."""

from __future__ import annotations

import json
from email.message import Message

import pytest

from np2torch_lint import rule_pages
from np2torch_lint.cli import main
from np2torch_lint.server import rule_page_uri

from helpers import run_main

BAD = "import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n"


@pytest.fixture
def metadata_urls(monkeypatch):
    """Make the installed package's metadata say these ``Project-URL`` entries."""
    def install(*entries: str) -> None:
        metadata = Message()
        for entry in entries:
            metadata["Project-URL"] = entry
        monkeypatch.setattr("importlib.metadata.metadata", lambda name: metadata)
        rule_pages.project_urls.cache_clear()

    yield install
    rule_pages.project_urls.cache_clear()


def sarif_driver(capsys, write) -> dict:
    _, out, _ = run_main(main, capsys, "--no-cache", "--output-format", "sarif", str(write("bad.py", BAD)))
    return json.loads(out)["runs"][0]["tool"]["driver"]


def test_without_a_public_address_there_are_no_links_only_the_pages_text(metadata_urls, capsys, write):
    metadata_urls()
    driver = sarif_driver(capsys, write)
    assert "informationUri" not in driver and all("helpUri" not in rule for rule in driver["rules"])
    assert driver["rules"][0]["help"]["markdown"] == rule_pages.page_text("NPT001")
    assert rule_page_uri("NPT001") is None


def test_project_urls_give_the_links_and_only_http_ones_count(metadata_urls, capsys, write):
    metadata_urls("Homepage, https://example.org/np2torch-lint", "Rules, https://example.org/np2torch-lint/rules/",
                  "Source, file:///home/someone/np2torch-lint")
    driver = sarif_driver(capsys, write)
    assert driver["informationUri"] == "https://example.org/np2torch-lint"
    assert driver["rules"][2]["helpUri"] == "https://example.org/np2torch-lint/rules/NPT003.md"
    assert rule_page_uri("NPT001") == "https://example.org/np2torch-lint/rules/NPT001.md"
    metadata_urls("Rules, file:///usr/lib/python3/site-packages/np2torch_lint/rule_docs/")
    assert rule_pages.page_url("NPT001") is None and rule_page_uri("NPT001") is None


def test_this_checkout_declares_no_address_that_does_not_exist():
    rule_pages.project_urls.cache_clear()
    assert rule_pages.page_url("NPT001") is None and rule_pages.home_url() is None
