"""``[tool.np2torch-lint]`` in the nearest ``pyproject.toml``, validated once, and which rules are enabled.

Every value's type is checked (a string where a list is expected is a mistake, not a one-element list); every
mistake is one line, ``pyproject.toml: [tool.np2torch-lint] <key>: <what is wrong>``, and the command exits 2.

Rule selection works in layers, as ruff's does: the default (``select = ["NPT"]``: the rules that are not opt-in;
an opt-in rule, NPT009, is selected only by its code), then the file's table, then
the command line. A layer with ``select`` starts afresh from it; a layer without one adds (``extend-select``) to
or removes (``ignore``) from what the layers before it enabled. Within a layer the longest matching prefix wins,
and ``ignore`` wins a tie (flake8's rule). ``per-file-ignores`` apply last, for the files they match.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .files import DEFAULT_INCLUDE
from .fix_style import FixStyle
from .rules import DEFAULT_CODES, RULES_BY_CODE

TABLE = "np2torch-lint"
KNOWN_KEYS = ("select", "ignore", "exclude", "include", "extend-include", "per-file-ignores", "fix-style",
              "respect-gitignore", "force-exclude", "src", "models", "cache-dir")
_CODE_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")
CODE_HINT = "like NPT001, or a prefix like NPT"
#: the deepest any setting nests (``per-file-ignores``: a table of lists), for the message about deeper TOML
_MAX_SETTING_NESTING = 3


class ConfigError(Exception):
    """Settings that cannot be used: one line per mistake, each naming the file or option and what is wrong."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selection: ``select`` (``None``: keep the layers below), ``extend_select``, ``ignore``."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, enabled: frozenset[str]) -> frozenset[str]:
        """What is enabled after this layer, given what the layers below enabled (ruff's resolution)."""
        selectors = (*(self.select or ()), *self.extend_select)
        decided = set(enabled) if self.select is None else set()
        for code, rule in RULES_BY_CODE.items():
            # an opt-in rule is selected by its code only, never by a prefix such as NPT
            selected = _longest_prefix(code, selectors) if rule.default else (len(code) if code in selectors else -1)
            ignored = _longest_prefix(code, self.ignore)
            if selected > ignored:
                decided.add(code)
            elif ignored >= 0:
                decided.discard(code)
        return frozenset(decided)


DEFAULT_SELECTION = RuleSelection(select=DEFAULT_CODES)


def _longest_prefix(code: str, prefixes: tuple[str, ...]) -> int:
    return max((len(prefix) for prefix in prefixes if code.startswith(prefix)), default=-1)


@dataclass(frozen=True)
class Settings:
    selections: tuple[RuleSelection, ...] = (DEFAULT_SELECTION,)
    exclude: tuple[str, ...] = ()
    #: globs of the files to lint inside folders: ``include`` replaces the default, ``extend-include`` adds to it
    include: tuple[str, ...] = DEFAULT_INCLUDE
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    fix_style: FixStyle = FixStyle.HELPERS
    respect_gitignore: bool = True  # skip what .gitignore (in a git repository) and .ignore files leave out
    force_exclude: bool = False  # apply ``exclude`` to paths given explicitly too (for pre-commit)
    #: the project's source roots, relative to ``root``: where absolute imports of its own modules resolve (ruff's)
    src: tuple[str, ...] = (".", "src")
    #: users' rows for the library models (``analysis/models.py``): qualified name -> spec
    models: dict[str, str] = field(default_factory=dict)
    #: where the cache lives (relative to ``root``); the command line may override it or turn the cache off
    cache_dir: str = ".np2torch_lint_cache"
    #: the folder that ``exclude`` and ``per-file-ignores`` patterns are relative to.
    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None  # the pyproject.toml read, if any

    @cached_property
    def _enabled(self) -> frozenset[str]:
        enabled: frozenset[str] = frozenset()
        for selection in self.selections:
            enabled = selection.apply(enabled)
        return enabled

    def enabled_codes(self, relative_path: str | None = None) -> frozenset[str]:
        """The rule codes to report, for one file when its path (relative to ``root``) is given."""
        if relative_path is None or not self.per_file_ignores:
            return self._enabled
        from .files import matches_any

        ignored = tuple(code for pattern, codes in self.per_file_ignores.items()
                        if matches_any(relative_path, (pattern,)) for code in codes)
        return RuleSelection(ignore=ignored).apply(self._enabled) if ignored else self._enabled


def parse_codes(value: object, where: str, *, command_line: bool = False, allow_empty: bool = True
                ) -> tuple[str, ...]:
    """A list of rule codes from the file, or the command line's comma-separated string -> validated prefixes
    (``allow_empty=False``: at least one, as ``select`` needs).

    Raises ``ConfigError`` naming ``where`` (``--select``, or the file and key) for each code that is wrong.
    """
    if command_line and isinstance(value, str):
        items: list[object] = [item for item in value.split(",") if item.strip()]
    elif isinstance(value, list):
        items = value
    else:
        raise ConfigError(f"{where}: expected a list of rule codes, got {_describe(value)}{_list_hint(value)}")
    if not items and not allow_empty:  # an empty ``select`` would silently turn every rule off
        raise ConfigError(f"{where}: no rule codes given ({CODE_HINT})")
    codes, problems = [], []
    for item in items:
        if not isinstance(item, str):
            problems.append(f"{where}: expected rule codes ({CODE_HINT}), got {_describe(item)}")
            continue
        code = item.strip().upper()
        if not _CODE_PREFIX.match(code):
            problems.append(f"{where}: {json.dumps(item)} is not a rule code ({CODE_HINT})")
        elif not any(known.startswith(code) for known in RULES_BY_CODE) and not "NPT".startswith(code):
            problems.append(f"{where}: no rule matches {json.dumps(code)}; known rules: {', '.join(RULES_BY_CODE)}")
        else:
            codes.append(code)
    if problems:
        raise ConfigError(*problems)
    return tuple(codes)


def _describe(value: object) -> str:
    """A TOML value's kind and, when short, the value: ``a string ("NPT002")``, ``a table``."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
             ((datetime.date, datetime.time), "a date or time"))
    kind = next((name for types, name in kinds if isinstance(value, types)), type(value).__name__)
    shown = json.dumps(value) if isinstance(value, (bool, int, float, str)) else str(value)
    return f"{kind} ({shown})" if len(shown) <= 40 else kind


def _list_hint(value: object) -> str:
    return f"; write [{json.dumps(value)}]" if isinstance(value, str) else ""


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
            if TABLE not in text:
                continue
            tool = _load_toml(path, text).get("tool")
            if isinstance(tool, dict) and TABLE in tool:
                return path
    return None


def display_path(path: Path) -> str:
    """A path as the user would write it: relative to the current folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive, on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def _load_toml(path: Path, text: str | None = None) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8") if text is None else text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{display_path(path)}: cannot read it as TOML: {error}") from None
    except RecursionError:  # tomllib reads nested arrays and inline tables by recursion
        raise ConfigError(f"{display_path(path)}: cannot read it as TOML: arrays or tables nested too deeply "
                          f"(no setting nests more than {_MAX_SETTING_NESTING} levels)") from None


def load_settings(pyproject: Path | None) -> Settings:
    """The settings of ``[tool.np2torch-lint]`` in ``pyproject`` (the defaults when there is none)."""
    if pyproject is None:
        return Settings()
    tool = _load_toml(pyproject).get("tool", {})
    table = tool.get(TABLE, {}) if isinstance(tool, dict) else {}
    where = f"{display_path(pyproject)}: [tool.{TABLE}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table, got {_describe(table)}")
    reader = _TableReader(table, where)
    include = reader.strings("include")
    selection = RuleSelection(select=reader.codes("select", allow_empty=False) if "select" in table else None,
                              ignore=reader.codes("ignore") or ())
    settings = Settings(
        selections=(DEFAULT_SELECTION, selection),
        exclude=reader.strings("exclude") or (),
        include=tuple(dict.fromkeys((*(DEFAULT_INCLUDE if include is None else include),
                                     *(reader.strings("extend-include") or ())))),
        per_file_ignores=reader.per_file_ignores("per-file-ignores"),
        fix_style=FixStyle(reader.choice("fix-style", [style.value for style in FixStyle]) or FixStyle.HELPERS),
        respect_gitignore=reader.boolean("respect-gitignore", default=True),
        force_exclude=reader.boolean("force-exclude", default=False),
        src=reader.strings("src", "folders") or (".", "src"),
        models=reader.models("models"),
        cache_dir=reader.string("cache-dir") or ".np2torch_lint_cache",
        root=pyproject.parent.resolve(),
        source=pyproject,
    )
    reader.refuse_unknown_keys()
    if reader.problems:
        raise ConfigError(*reader.problems)
    return settings


class _TableReader:
    """Reads each key of the table once, checking its type; collects every problem instead of stopping."""

    def __init__(self, table: dict, where: str) -> None:
        self.table, self.where = table, where
        self.problems: list[str] = []

    def _get(self, key: str) -> object:
        assert key in KNOWN_KEYS
        return self.table.get(key)

    def _wrong(self, key: str, expected: str, value: object, hint: str = "") -> None:
        self.problems.append(f"{self.where} {key}: expected {expected}, got {_describe(value)}{hint}")

    def codes(self, key: str, allow_empty: bool = True) -> tuple[str, ...] | None:
        value = self._get(key)
        if value is None:
            return None
        try:
            return parse_codes(value, f"{self.where} {key}", allow_empty=allow_empty)
        except ConfigError as error:
            self.problems.extend(error.problems)
            return None

    def strings(self, key: str, what: str = "glob patterns") -> tuple[str, ...] | None:
        value = self._get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            bad = value if not isinstance(value, list) else next(i for i in value if not isinstance(i, str))
            self._wrong(key, f"a list of {what} (strings)", bad, _list_hint(bad))
            return None
        return tuple(value)

    def per_file_ignores(self, key: str) -> dict[str, tuple[str, ...]]:
        value = self._get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._wrong(key, 'a table of "glob" = [rule codes]', value)
            return {}
        result = {}
        for pattern, codes in value.items():
            try:
                result[pattern] = parse_codes(codes, f"{self.where} {key} {json.dumps(pattern)}")
            except ConfigError as error:
                self.problems.extend(error.problems)
        return result

    def choice(self, key: str, choices: list[str]) -> str | None:
        value = self._get(key)
        if value is not None and value not in choices:
            self._wrong(key, " or ".join(json.dumps(choice) for choice in choices), value)
            return None
        return value  # type: ignore[return-value]

    def string(self, key: str) -> str | None:
        value = self._get(key)
        if value is not None and (not isinstance(value, str) or not value):
            self._wrong(key, "a folder name (a non-empty string)", value)
            return None
        return value  # type: ignore[return-value]

    def models(self, key: str) -> dict[str, str]:
        """``"pkg.module.function" = "ndarray[uint8]"`` rows, each spec checked as the built-in ones are."""
        value = self._get(key)
        if value is None:
            return {}
        from .analysis.models import ModelError, parse_spec  # the analysis (LibCST): only for a table of rows
        if not isinstance(value, dict):
            self._wrong(key, 'a table of "qualified.name" = "spec"', value)
            return {}
        rows = {}
        for name, spec in value.items():
            if not isinstance(spec, str):
                self.problems.append(f"{self.where} {key} {json.dumps(name)}: expected a spec like "
                                     f'"ndarray[uint8]", got {_describe(spec)}')
                continue
            try:
                parse_spec(spec)
            except ModelError as error:
                self.problems.append(f"{self.where} {key} {json.dumps(name)}: {error}")
                continue
            rows[name] = spec
        return rows

    def boolean(self, key: str, default: bool) -> bool:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._wrong(key, "true or false", value)
            return default
        return value

    def refuse_unknown_keys(self) -> None:
        for key in sorted(set(self.table) - set(KNOWN_KEYS)):
            self.problems.append(f"{self.where} {key}: unknown setting; known settings: "
                                 f"{', '.join(sorted(KNOWN_KEYS))}")
