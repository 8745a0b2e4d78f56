"""A fix's diff compares only the changed lines (with their context) and renumbers the hunks; it
must equal difflib's diff of the whole files. A fix's syntax check reads only the top-level
statements it touched, and still refuses an edit that breaks them."""

from __future__ import annotations

import difflib

import pytest

from breakscan.fixes.edits import unified_diff
from breakscan.fixes.rewrite import Rewrite, to_fix
from breakscan.fixes.source import SourceModule
from breakscan.model import Edit, Span

LINES = [f"line {number}\n" for number in range(1, 41)]


def _whole(before: list[str], after: list[str]) -> str:
    return "".join(difflib.unified_diff(before, after, fromfile="a/m.py", tofile="b/m.py", n=2))


@pytest.mark.parametrize("change", [
    lambda lines: lines[:10] + ["new\n"] + lines[10:],  # an insertion
    lambda lines: lines[:1] + lines[2:],  # a deletion at the top
    lambda lines: lines[:-1] + ["changed\n"],  # a change of the last line
    lambda lines: ["first\n"] + lines,  # an insertion before everything
    lambda lines: lines[:5] + ["a\n"] + lines[6:30] + ["b\n"] + lines[31:],  # two hunks
    lambda lines: lines[:5] + ["a\n"] + lines[6:8] + ["b\n"] + lines[9:],  # two changes, one hunk
])
def test_the_diff_of_the_changed_lines_is_the_diff_of_the_files(change):
    after = change(LINES)
    assert unified_diff("m.py", "".join(LINES), "".join(after)) == _whole(LINES, after)


def test_a_fix_that_breaks_the_statement_it_edits_is_refused():
    text = "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(x):\n    return x\n"
    src = SourceModule("m.py", text)
    broken = Rewrite("breaks g", (Edit(Span(9, 12, 9, 13), "x +"),))
    kept = Rewrite("edits g", (Edit(Span(9, 12, 9, 13), "x * 2"),))
    assert to_fix(src, broken) is None
    fix = to_fix(src, kept)
    assert fix is not None and "+    return x * 2\n" in fix.diff
