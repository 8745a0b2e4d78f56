"""Expanding the PATHs given on the command line into the Python files to scan."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from breakscan.model import FileError
from breakscan.notebook import NOTEBOOK_SUFFIX

SCANNED_SUFFIXES = (".py", NOTEBOOK_SUFFIX)
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
                   ".pytest_cache", ".ruff_cache", "build", "dist", "node_modules", ".breakscan_cache", "*.egg-info")


@dataclass
class Collected:
    files: list[str] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def is_excluded(path: str, patterns: tuple[str, ...], top: str | None = None) -> bool:
    """Whether `path`, or one of its folders below `top` (the folder the user named), matches a pattern.

    Folders at or above `top` do not count: `breakscan .venv/lib/site-packages/torch` scans torch."""
    if not patterns:
        return False
    matches = _matcher(patterns)
    normalized = os.path.normcase(path).replace(os.sep, "/")
    parts = os.path.normcase(os.path.relpath(path, top) if top is not None else path).replace(os.sep, "/").split("/")
    return bool(matches(normalized)) or any(matches(part) for part in parts)


@functools.lru_cache(maxsize=16)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """`fnmatch.fnmatch` against any of `patterns`, as one compiled expression: a scan asks it of
    every folder part of every file."""
    return re.compile("|".join(fnmatch.translate(os.path.normcase(pattern)) for pattern in patterns)).match


def collect(paths: list[str], exclude: tuple[str, ...] = ()) -> Collected:
    """Files named directly are always scanned; folders are walked for `*.py` and `*.ipynb`, minus exclusions."""
    result = Collected()
    seen: set[str] = set()
    patterns = DEFAULT_EXCLUDE + tuple(exclude)
    for given in paths:
        if not os.path.lexists(given):
            result.missing.append(given)
        elif os.path.isdir(given):
            _walk(given, patterns, seen, result)
        elif os.path.islink(given) and not os.path.exists(given):
            result.errors.append(FileError(given, "broken symbolic link"))
        else:
            _add(given, seen, result)
    return result


def _add(path: str, seen: set[str], result: Collected) -> None:
    real = os.path.realpath(path)
    if real not in seen:
        seen.add(real)
        result.files.append(path)


def _walk(top: str, patterns: tuple[str, ...], seen: set[str], result: Collected) -> None:
    visited_dirs: set[str] = set()

    def on_error(error: OSError) -> None:
        result.errors.append(FileError(error.filename or top, f"cannot list folder: {error.strerror}"))

    for directory, subdirs, filenames in os.walk(top, followlinks=True, onerror=on_error):
        real = os.path.realpath(directory)
        if real in visited_dirs:  # a symlink loop, or a folder reached twice
            subdirs[:] = []
            continue
        visited_dirs.add(real)
        subdirs[:] = sorted(d for d in subdirs if not is_excluded(os.path.join(directory, d), patterns, top))
        for filename in sorted(filenames):
            path = os.path.join(directory, filename)
            if not filename.endswith(SCANNED_SUFFIXES) or is_excluded(path, patterns, top):
                continue
            if os.path.islink(path) and not os.path.exists(path):
                result.errors.append(FileError(path, "broken symbolic link"))
                continue
            _add(path, seen, result)
