"""``[tool.np2torch-lint]`` in the nearest ``pyproject.toml``, and ``--select``/``--ignore`` code matching."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .files import DEFAULT_INCLUDE
from .fixes import FixStyle
from .rules import RULES_BY_CODE

TABLE = "np2torch-lint"
_CODE_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")


class ConfigError(Exception):
    """A setting that cannot be used; the message names the file or option and what is wrong."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("NPT",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    #: globs of the files to lint inside folders: ``include`` replaces the default, ``extend-include`` adds to it
    include: tuple[str, ...] = DEFAULT_INCLUDE
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fix_style: FixStyle = FixStyle.HELPERS
    #: the folder that ``exclude`` and ``per-file-ignores`` patterns are relative to.
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the pyproject.toml read, if any

    def enabled_codes(self, relative_path: str | None = None) -> frozenset[str]:
        """The rule codes to report, for one file when its path (relative to ``root``) is given."""
        ignore = list(self.ignore)
        if relative_path is not None and self.per_file_ignores:
            from .files import matches_any

            for pattern, codes in self.per_file_ignores.items():
                if matches_any(relative_path, (pattern,)):
                    ignore.extend(codes)
        return frozenset(code for code in RULES_BY_CODE if is_selected(code, self.select, ignore))


def is_selected(code: str, select: tuple[str, ...] | list[str], ignore: tuple[str, ...] | list[str]) -> bool:
    """flake8's decision: the longest matching prefix wins, and an ignore wins a tie."""
    selected = max((len(prefix) for prefix in select if code.startswith(prefix)), default=-1)
    ignored = max((len(prefix) for prefix in ignore if code.startswith(prefix)), default=-1)
    return selected >= 0 and selected > ignored


def parse_codes(values: list[str] | str, where: str) -> tuple[str, ...]:
    """``"NPT001, NPT002"`` or a list of codes -> validated code prefixes."""
    items = values.split(",") if isinstance(values, str) else values
    codes = []
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"{where}: expected rule codes, got {item!r}")
        code = item.strip().upper()
        if not code:
            continue
        if not _CODE_PREFIX.match(code):
            raise ConfigError(f"{where}: {item.strip()!r} is not a rule code (like NPT001, or a prefix like NPT)")
        if not any(known.startswith(code) for known in RULES_BY_CODE) and not "NPT".startswith(code):
            raise ConfigError(f"{where}: no rule matches {code!r}; known rules: {', '.join(RULES_BY_CODE)}")
        codes.append(code)
    return tuple(codes)


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.np2torch-lint]`` table."""
    folder = start.resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if TABLE in text and TABLE in _load_toml(path, text).get("tool", {}):
                return path
    return None


def _load_toml(path: Path, text: str | None = None) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8") if text is None else text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it as TOML: {error}") from None


def load_settings(pyproject: Path | None) -> Settings:
    if pyproject is None:
        return Settings()
    table = _load_toml(pyproject).get("tool", {}).get(TABLE, {})
    where = f"{pyproject}: [tool.{TABLE}]"
    known = {"select", "ignore", "exclude", "include", "extend-include", "per-file-ignores", "fix-style"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting {unknown[0]!r}; known settings: {', '.join(sorted(known))}")
    exclude, include, extend_include = (table.get(key, default) for key, default in (
        ("exclude", []), ("include", list(DEFAULT_INCLUDE)), ("extend-include", [])))
    for key, patterns in (("exclude", exclude), ("include", include), ("extend-include", extend_include)):
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"{where}: '{key}' must be a list of glob patterns")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where}: 'per-file-ignores' must be a table of pattern = [codes]")
    style = table.get("fix-style", FixStyle.HELPERS.value)
    if style not in [s.value for s in FixStyle]:
        raise ConfigError(f"{where}: 'fix-style' must be one of {', '.join(s.value for s in FixStyle)}")
    return Settings(
        fix_style=FixStyle(style),
        select=parse_codes(table["select"], f"{where} select") if "select" in table else Settings.select,
        ignore=parse_codes(table.get("ignore", []), f"{where} ignore"),
        exclude=tuple(exclude),
        include=tuple(dict.fromkeys(include + extend_include)),
        per_file_ignores={pattern: parse_codes(codes, f"{where} per-file-ignores {pattern!r}")
                          for pattern, codes in per_file.items()},
        root=pyproject.parent.resolve(),
        source=pyproject,
    )
