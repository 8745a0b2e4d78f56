"""Jupyter notebooks (`.ipynb`): their code cells as one Python module, and positions in it mapped
back to cells.

The code cells are joined in order, each ending with a line break, so a line of the module is a line
of exactly one cell. IPython syntax that is not Python is neutralised line for line, so that every
other line keeps its number: a line magic (`%time ...`), a shell escape (`!pip ...`, `x = !ls`) or a
help request (`obj?`) becomes `pass` at its indentation; a cell magic (`%%bash`) makes its whole cell
blank. Cells are numbered from 1 among the code cells, as ruff numbers them.
"""

from __future__ import annotations

import bisect
import json
import linecache
import re
from dataclasses import dataclass

NOTEBOOK_SUFFIX = ".ipynb"

# IPython-only lines: `%magic`, `!shell`, `name = !shell` / `name = %magic`, `obj?` / `?obj`.
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!?]|[\w.]+\s*=\s*[%!]|[\w.]+\?\??\s*$)")


class NotebookError(Exception):
    """The file is not a notebook this can read; the message says why."""


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class NotebookCode:
    text: str  # the code cells as one module
    cell_starts: tuple[int, ...]  # the module line each code cell starts at (1-based), in order

    def cell_of(self, line: int) -> tuple[int, int]:
        """(cell, line within the cell), both from 1, for a line of the module."""
        cell = max(bisect.bisect_right(self.cell_starts, line), 1)
        return cell, line - self.cell_starts[cell - 1] + 1


def _python_lines(source: str) -> list[str]:
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return [""] * len(lines)  # a cell magic: the cell is another language
    return [f"{line[:len(line) - len(line.lstrip())]}pass" if _IPYTHON_LINE.match(line) else line
            for line in lines]


def notebook_code(text: str) -> NotebookCode:
    """The code cells of a notebook's JSON `text` as one module."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise NotebookError(f"not a valid notebook: {error}") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a valid notebook: no list of cells")
    lines: list[str] = []
    starts: list[int] = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"not a valid notebook: code cell {len(starts) + 1} has no source text")
        starts.append(len(lines) + 1)
        lines.extend(_python_lines(source) or [""])
    return NotebookCode("".join(line + "\n" for line in lines), tuple(starts))


def read_notebook(path: str) -> NotebookCode | None:
    """A notebook on disk as code; None when it cannot be read as one (the lint reports why)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return notebook_code(handle.read())
    except (OSError, UnicodeDecodeError, NotebookError):
        return None


def cell_position(path: str, line: int) -> tuple[int, int] | None:
    """(cell, line within it) for a line of a notebook's code; None for any other file."""
    if not is_notebook(path):
        return None
    code = read_notebook(path)
    return code.cell_of(line) if code is not None and code.cell_starts else None


def location(path: str, line: int, column: int | None = None, name: str | None = None) -> str:
    """`m.py:12:5`, or `nb.ipynb:cell 3:line 2:5` in a notebook; `name` is how to print the path."""
    cell = cell_position(path, line)
    name = path if name is None else name
    where = f"{name}:cell {cell[0]}:line {cell[1]}" if cell else f"{name}:{line}"
    return where if column is None else f"{where}:{column}"


def remember_code(paths: list[str]) -> None:
    """Put each notebook's code where the report and the fixes read source lines (linecache), so
    that a finding's frame and its diff show the Python the lint saw, not the notebook's JSON."""
    for path in filter(is_notebook, paths):
        code = read_notebook(path)
        if code is not None:
            linecache.cache[path] = (len(code.text), None, code.text.splitlines(keepends=True), path)
