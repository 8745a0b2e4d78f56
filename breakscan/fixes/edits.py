"""Edits as data: applying them to a text, and the unified diff a set of edits makes."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable

from breakscan.model import Edit, Span


def _offsets(text: str) -> list[int]:
    """Offset of the start of each 1-based line; one past the last line is the end of the text."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """The text with every edit applied; edits must not overlap (insertions at one point keep
    their order)."""
    starts = _offsets(text)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1 if line <= len(starts) - 1 else len(text)

    ordered = sorted(enumerate(edits), key=lambda item: (item[1].span.line, item[1].span.column, item[0]))
    pieces, cursor = [], 0
    for _, edit in ordered:
        begin, end = offset(edit.span.line, edit.span.column), offset(edit.span.end_line, edit.span.end_column)
        if begin < cursor:
            raise ValueError(f"overlapping edits at line {edit.span.line}")
        pieces += [text[cursor:begin], edit.replacement]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def insert_at(line: int, text: str) -> Edit:
    """Insert whole lines before `line` (1-based)."""
    return Edit(Span(line, 1, line, 1), text)


def unified_diff(path: str, before: str, after: str, context: int = 2) -> str:
    """`a/` and `b/` prefixes only on relative paths (they make no sense on absolute ones)."""
    old, new = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=old, tofile=new, n=context,
    ))
