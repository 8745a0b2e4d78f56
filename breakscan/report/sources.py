"""The user's source as the report shows it: lines by number and the function around a line.

Read tolerantly (a file may have changed or vanished since the run): a missing line is "".
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Function:
    name: str
    first_line: int  # the `def` line (decorators excluded)
    last_line: int


def source_lines(path: str) -> list[str]:
    """The file's lines without line ends; [] when it cannot be read."""
    return [line.rstrip("\r\n") for line in linecache.getlines(path)]


def frame_lines(path: str, first: int, last: int) -> tuple[int, list[str]]:
    """The file's line count, and its lines `first`..`last` (1-based, clipped) without line ends:
    a finding's frame, without copying a long file for each finding."""
    lines = linecache.getlines(path)
    return len(lines), [line.rstrip("\r\n") for line in lines[max(0, first - 1):last]]


def line_text(path: str, line: int) -> str:
    return linecache.getline(path, line).rstrip("\r\n")


@lru_cache(maxsize=256)
def _tree(path: str) -> ast.Module | None:
    try:
        return ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError, RecursionError):
        return None


@lru_cache(maxsize=256)
def _functions(path: str) -> tuple[Function, ...]:
    tree = _tree(path)
    return tuple(Function(node.name, node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))) if tree else ()


@lru_cache(maxsize=1024)
def call_lines(path: str, caller: Function, name: str) -> tuple[int, ...]:
    """Lines inside `caller` that call a function named `name` (`name(...)` or `x.name(...)`)."""
    tree = _tree(path)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)] if tree else []
    named = [c.lineno for c in calls if getattr(c.func, "id", getattr(c.func, "attr", None)) == name]
    return tuple(sorted(line for line in named if caller.first_line <= line <= caller.last_line))


def function_at(path: str, line: int) -> Function | None:
    """The innermost function holding `line`."""
    holding = [f for f in _functions(path) if f.first_line <= line <= f.last_line]
    return max(holding, key=lambda f: f.first_line) if holding else None
