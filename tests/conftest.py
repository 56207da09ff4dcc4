from __future__ import annotations

from pathlib import Path

import libcst
import pytest


@pytest.fixture
def write(tmp_path: Path):
    """Write a file under tmp_path from text (encoded as UTF-8) or bytes; returns its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    return _write


@pytest.fixture
def parsed(monkeypatch) -> list[str]:
    """The texts LibCST parses."""
    texts: list[str] = []
    original = libcst.parse_module

    def counting(text, *args, **kwargs):
        texts.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    return texts
