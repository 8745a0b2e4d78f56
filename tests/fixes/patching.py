"""Applying a unified diff the way `patch` does (context checked), to use a suggested diff as
written rather than the edits it was made from."""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def apply_diff(text: str, diff: str) -> str:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    body = diff.splitlines(keepends=True)
    index = next(i for i, line in enumerate(body) if line.startswith("@@"))
    while index < len(body):
        match = _HUNK.match(body[index])
        start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
        out += lines[cursor:start]
        cursor = start
        index += 1
        while index < len(body) and not body[index].startswith("@@"):
            kind, content = body[index][0], body[index][1:]
            if kind in " -":
                assert lines[cursor] == content, f"context mismatch at line {cursor + 1}: {lines[cursor]!r}"
                cursor += 1
            if kind in " +":
                out.append(content)
            index += 1
    return "".join(out + lines[cursor:])
