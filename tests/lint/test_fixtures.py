"""Each fixture model file states its expected findings inline (`# expect: BS101`); the lint must
report exactly that set, no more, no less."""

import pytest

from breakscan.config import Config
from breakscan.lint.linter import lint_paths
from tests.helpers import FIXTURES, expected_findings

FILES = sorted(FIXTURES.glob("*.py"))


def test_there_are_enough_fixtures():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixture_findings(path):
    outcome = lint_paths([str(path)], Config(), jobs=1)
    assert not outcome.errors
    found = {(f.line, f.rule) for f in outcome.findings if f.path == str(path)}
    assert found == expected_findings(path)
