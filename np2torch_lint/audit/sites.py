"""Where an event happened in the user's code: the first frame outside torch, NumPy, this package and the standard
library, with the span of the call that frame was executing (Python's own positions table, as tracebacks use)."""

from __future__ import annotations

import inspect
import os
import sys
import sysconfig
from dataclasses import dataclass
from types import CodeType, FrameType

import numpy
import torch

import np2torch_lint


@dataclass(frozen=True, slots=True)
class Site:
    """A span of source; lines and columns are 1-based, the end column exclusive (as the linter's)."""

    filename: str
    line: int
    column: int = 1
    end_line: int = 0
    end_column: int = 0

    def __str__(self) -> str:
        return f"{shown_path(self.filename)}:{self.line}"

    def as_dict(self) -> dict[str, object]:
        return {"filename": self.filename, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column}

    @classmethod
    def from_dict(cls, data: dict) -> Site:
        return cls(str(data["filename"]), int(data["line"]), int(data["column"]), int(data["end_line"]),
                   int(data["end_column"]))


def shown_path(filename: str) -> str:
    """A path as the user would write it: relative to the current folder when inside it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive, on Windows
        return filename
    return filename if relative.startswith("..") else relative


def _folder(module: object) -> str:
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep  # type: ignore[attr-defined]


def _path_folder(key: str) -> str:
    return os.path.abspath(sysconfig.get_paths()[key]) + os.sep


#: the code that is never the user's: its frames are walked through to the caller
LIBRARY_FOLDERS = (_folder(torch), _folder(numpy), _folder(np2torch_lint))
STANDARD_LIBRARY_FOLDERS = tuple(dict.fromkeys(_path_folder(key) for key in ("stdlib", "platstdlib")))
#: installed packages, which some layouts (a system Python, conda) keep inside the standard library's folder
INSTALLED_FOLDERS = tuple(dict.fromkeys(_path_folder(key) for key in ("purelib", "platlib")))
DATA_LOADING_FOLDER = os.path.join(_folder(torch), "utils", "data") + os.sep

USER, LIBRARY, DATA_LOADING, AUDIT = 0, 1, 2, 3
AUDIT_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_kind_of_file: dict[str, int] = {}
_kind_of_code: dict[CodeType, int] = {}  # the same, by code object: one lookup a frame on the hot path
_positions: dict[CodeType, list] = {}
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def kind_of(filename: str) -> int:
    """``USER``, ``LIBRARY``, ``DATA_LOADING`` (torch's DataLoader) or ``AUDIT`` (this package's own frames)."""
    kind = _kind_of_file.get(filename)
    if kind is None:
        if filename.startswith("<"):  # '<frozen runpy>' is the standard library; '<string>', '<stdin>' the user's
            kind = LIBRARY if filename.startswith("<frozen ") else USER
        else:
            path = os.path.abspath(filename) + os.sep
            library = path.startswith(LIBRARY_FOLDERS) or (
                path.startswith(STANDARD_LIBRARY_FOLDERS) and not path.startswith(INSTALLED_FOLDERS))
            kind = (AUDIT if path.startswith(AUDIT_FOLDER) else DATA_LOADING if path.startswith(DATA_LOADING_FOLDER)
                    else LIBRARY) if library else USER
        _kind_of_file[filename] = kind
    return kind


def _kind(frame: FrameType) -> int:
    code = frame.f_code
    kind = _kind_of_code.get(code)
    if kind is None:
        kind = _kind_of_code[code] = kind_of(code.co_filename)
    return kind


class _LastWalk:
    """The last walk from library code: while the library frame it started from runs, the frames above it cannot
    change, so a DataLoader's collate converting sample after sample walks once a batch. Holding the frame keeps
    its address from being reused; a generator's frame is never kept (it resumes under other callers)."""

    library_frame: FrameType | None = None
    user_frame: FrameType | None = None
    through_data_loading = False


_last = _LastWalk()


def user_frame() -> tuple[FrameType | None, bool]:
    """The user's frame that led to the caller, and whether the way there went through torch's data loading (a
    DataLoader's fetch and collate). Every frame of library code, this package's included, is walked through."""
    frame: FrameType | None = sys._getframe(1)
    kinds = _kind_of_code
    while frame is not None and (kinds.get(frame.f_code) or _kind(frame)) == AUDIT:  # this package's own frames
        frame = frame.f_back
    if frame is None or _kind(frame) == USER:
        return frame, False
    if frame is _last.library_frame:
        return _last.user_frame, _last.through_data_loading
    start = frame
    through_data_loading = False
    while frame is not None:
        kind = _kind(frame)
        if kind == USER:
            break
        through_data_loading = through_data_loading or kind == DATA_LOADING
        frame = frame.f_back
    if not start.f_code.co_flags & _RESUMABLE:
        _last.library_frame, _last.user_frame, _last.through_data_loading = start, frame, through_data_loading
    return frame, through_data_loading


def forget_frames() -> None:
    """Let go of the frames the last walk kept (when the audit ends)."""
    _last.library_frame = _last.user_frame = None


def site_of(frame: FrameType) -> Site:
    """The span of the instruction ``frame`` is executing (the call that led to the event)."""
    code = frame.f_code
    positions = _positions.get(code)
    if positions is None:
        positions = _positions[code] = list(code.co_positions())
    index = frame.f_lasti // 2
    line, end_line, column, end_column = positions[index] if 0 <= index < len(positions) else (None,) * 4
    if line is None:
        return Site(code.co_filename, frame.f_lineno or code.co_firstlineno)
    if column is None or end_column is None:
        return Site(code.co_filename, line, 1, end_line or line, 0)
    return Site(code.co_filename, line, column + 1, end_line or line, end_column + 1)


def user_site() -> tuple[Site | None, bool]:
    """``user_frame``'s site (None when every frame is library code: an interpreter shutting down, say)."""
    frame, through_data_loading = user_frame()
    return (None if frame is None else site_of(frame)), through_data_loading
