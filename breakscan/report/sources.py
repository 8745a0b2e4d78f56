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


def line_text(path: str, line: int) -> str:
    return linecache.getline(path, line).rstrip("\r\n")


@lru_cache(maxsize=256)
def _functions(path: str) -> tuple[Function, ...]:
    try:
        tree = ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError, RecursionError):
        return ()
    return tuple(Function(node.name, node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def function_at(path: str, line: int) -> Function | None:
    """The innermost function holding `line`."""
    holding = [f for f in _functions(path) if f.first_line <= line <= f.last_line]
    return max(holding, key=lambda f: f.first_line) if holding else None
