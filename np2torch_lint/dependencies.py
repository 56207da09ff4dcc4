"""Whether a project lists np2torch-lint among its dependencies.

A fix in the helpers style makes the code import ``np2torch_lint.runtime``, which must then be installed wherever
that code runs. ``np2torch-fix`` says so once when the project's ``pyproject.toml``, ``requirements*.txt``,
``setup.cfg`` or ``setup.py`` (the nearest folder above the file that has any of them) does not list the package.
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: what a helpers-style fix writes: ``from np2torch_lint.runtime import to_numpy``, or
#: ``from np2torch_lint import runtime as npt_runtime`` (also inside a notebook's JSON)
_RUNTIME_IMPORT = re.compile(r"\bnp2torch_lint(?:\.runtime\b|\s+import\s+runtime\b)")
#: a requirement's project name at the start of a requirement string (PEP 508)
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_THIS_PROJECT = "np2torch-lint"
_PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")

NOTICE = ("note: the fixed code imports np2torch_lint.runtime, which the project's dependencies do not list "
          "(pyproject.toml, requirements*.txt, setup.cfg, setup.py): add \"np2torch-lint[runtime]\" to them, or fix "
          "with fix-style = \"inline\" under [tool.np2torch-lint] (or --fix-style inline) for plain torch code")


def adds_runtime_import(before: str, after: str) -> bool:
    """Whether fixing ``before`` into ``after`` added an import of ``np2torch_lint.runtime``."""
    return len(_RUNTIME_IMPORT.findall(after)) > len(_RUNTIME_IMPORT.findall(before))


def project_folder(path: Path) -> Path | None:
    """The nearest folder at or above ``path``'s folder with a packaging or requirements file, or None; the search
    stops at the top of a git repository."""
    folder = path.resolve().parent
    for candidate in (folder, *folder.parents):
        if any((candidate / name).is_file() for name in _PACKAGING_FILES) or any(candidate.glob("requirements*.txt")):
            return candidate
        if (candidate / ".git").exists():
            return None
    return None


def lists_np2torch_lint(folder: Path | None) -> bool:
    """Whether the project in ``folder`` depends on np2torch-lint (or is np2torch-lint), in any of its files."""
    if folder is None:
        return False
    return any(_normalized(name) == _THIS_PROJECT for name in _requirement_names(folder))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def _requirement_names(folder: Path) -> Iterator[str]:
    yield from _pyproject_names(folder / "pyproject.toml")
    for requirements in sorted(folder.glob("requirements*.txt")):
        yield from _names_of(_read(requirements).splitlines())
    yield from _setup_cfg_names(folder / "setup.cfg")
    setup_py = _read(folder / "setup.py")
    # setup.py is a program: its requirements are quoted strings somewhere in it
    yield from (match.group(1) for match in re.finditer(r"""["']\s*(np2torch[-_.]+lint)\b""", setup_py, re.I))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _names_of(requirements: Iterable[object]) -> Iterator[str]:
    for requirement in requirements:
        if isinstance(requirement, str) and not requirement.lstrip().startswith(("#", "-")):
            match = _REQUIREMENT_NAME.match(requirement)
            if match:
                yield match.group(1)


def _pyproject_names(path: Path) -> Iterator[str]:
    try:
        data = tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError:
        return
    project = _table(data.get("project"))
    if isinstance(project.get("name"), str):
        yield project["name"]
    yield from _names_of(_list(project.get("dependencies")))
    for extra in _table(project.get("optional-dependencies")).values():
        yield from _names_of(_list(extra))
    for group in _table(data.get("dependency-groups")).values():  # PEP 735
        yield from _names_of(_list(group))
    poetry = _table(_table(data.get("tool")).get("poetry"))
    yield from _table(poetry.get("dependencies"))
    yield from _table(poetry.get("dev-dependencies"))
    for group in _table(poetry.get("group")).values():
        yield from _table(_table(group).get("dependencies"))


def _table(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _setup_cfg_names(path: Path) -> Iterator[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_read(path))
    except configparser.Error:
        return
    if parser.has_option("options", "install_requires"):
        yield from _names_of(parser.get("options", "install_requires").splitlines())
    if parser.has_section("options.extras_require"):
        for _, requirements in parser.items("options.extras_require"):
            yield from _names_of(requirements.splitlines())
