"""Shared test helpers: lint a source string as a file, read `# expect:` markers from fixtures."""

from __future__ import annotations

import re
from pathlib import Path

from breakscan.config import Config
from breakscan.lint.linter import LintOutcome, lint_paths

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def lint_source(tmp_path: Path, source: str, name: str = "example.py", **options) -> LintOutcome:
    path = tmp_path / name
    path.write_text(source)
    return lint_paths([str(path)], Config(), jobs=1, **options)


def expected_findings(path: Path) -> set[tuple[int, str]]:
    """`# expect: BS101, BS201` at the end of a line: those rules must report on that line."""
    expected = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _EXPECT.search(line)
        if match:
            expected.update((number, rule.strip()) for rule in match.group(1).split(",") if rule.strip())
    return expected
