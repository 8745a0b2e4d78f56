"""Edits as data: applying them to a text, and the unified diff a set of edits makes."""

from __future__ import annotations

import difflib
import os
import re
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


def common_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines the two texts share at their start, and then at their end."""
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def unified_diff(path: str, before: str, after: str, context: int = 2,
                 lines: tuple[list[str], list[str], int, int] | None = None) -> str:
    """`a/` and `b/` prefixes only on relative paths (they make no sense on absolute ones). Only
    the lines between the texts' common start and end (and `context` lines around) are compared,
    and the hunks renumbered: a big file with a one-line change costs little. `lines`: the two
    texts' lines and their `common_ends`, when the caller has them."""
    fromfile, tofile = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    old, new, head, tail = lines or (before.splitlines(keepends=True), after.splitlines(keepends=True),
                                     *common_ends(before.splitlines(keepends=True), after.splitlines(keepends=True)))
    skip = max(0, head - context)
    keep = max(0, tail - context)
    diff = list(difflib.unified_diff(old[skip:len(old) - keep], new[skip:len(new) - keep],
                                     fromfile=fromfile, tofile=tofile, n=context))

    def renumber(match: re.Match) -> str:
        return (f"@@ -{int(match[1]) + skip}{match[2] or ''} +{int(match[3]) + skip}{match[4] or ''} @@")

    return "".join(_HUNK.sub(renumber, line, count=1) if line.startswith("@@") else line for line in diff)
