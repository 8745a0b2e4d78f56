"""Lint, confirm with TorchDynamo, fuse, suggest fixes and report, on a real model file; then apply
two of the suggested fixes and `--verify` the new run against the first one's JSON report.

Both versions are confirmed in one `run_targets` call (one worker, torch imported once), once per
test session even under pytest-xdist."""

from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import dataclass

import pytest

from breakscan import __version__
from breakscan.config import Config
from breakscan.confirm import discover_targets, fuse, run_targets
from breakscan.fixes import attach_fixes
from breakscan.lint.linter import lint_paths
from breakscan.model import Report
from breakscan.report import RenderOptions, render
from breakscan.report.graph import BreakNode, build_chain
from breakscan.report.verify import attach_baseline
from tests.confirm.helpers import once_per_session, session_folder
from tests.fixes.patching import apply_diff
from tests.helpers import FIXTURES

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


@dataclass
class Runs:
    before: Report
    after: Report


def _lint(path: str) -> Report:
    outcome = lint_paths([path], Config(), jobs=1)
    return Report(version=__version__, files=1, findings=outcome.findings, errors=outcome.errors)


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory) -> Runs:
    folder = session_folder(request, tmp_path_factory, "report-e2e")
    before_path, after_path = folder / "before" / "mixed.py", folder / "after" / "mixed.py"

    def confirm_both():
        before_path.parent.mkdir(exist_ok=True)
        after_path.parent.mkdir(exist_ok=True)
        shutil.copy(FIXTURES / "report" / "mixed.py", before_path)
        fixes = {f.rule: f.fix for f in attach_fixes(_lint(str(before_path)).findings) if f.line in (7, 23)}
        text = before_path.read_text()
        for rule in ("BS401", "BS101"):  # bottom-up: the second diff's line numbers stay valid
            text = apply_diff(text, fixes[rule].diff)
        after_path.write_text(text)
        specs = discover_targets(str(before_path))[0] + discover_targets(str(after_path))[0]
        return run_targets(specs, timeout=240)

    results = once_per_session(request, tmp_path_factory, "report-e2e", confirm_both)
    before, after = _lint(str(before_path)), _lint(str(after_path))
    for report, result in ((before, results[0]), (after, results[1])):
        report.targets, report.torch_version = [result], result.torch_version
        report.findings = attach_fixes(fuse(report.findings, report.targets), report.targets)
    return Runs(before, after)


def test_the_chain_matches_what_dynamo_did(runs):
    target = runs.before.targets[0]
    assert target.status == "ok", target.error
    chain = build_chain(target, runs.before.findings, 0)
    shape = ["b" if isinstance(n, BreakNode) else "g" for n in chain.nodes]
    assert shape == ["g", "b", "g", "b", "g", "b", "g", "g"]
    assert [(b.rule, b.brk.line, b.brk.gb_id, b.brk.count) for b in chain.breaks] == [
        ("BS201", 19, "GB0170", 1), ("BS401", 23, "GB0059", 1), ("BS101", 7, "GB0124", 2)]
    assert sum(g.op_count for g in chain.graphs) == sum(g.op_count for g in target.graphs)


def test_every_break_is_explained_and_has_a_fix(runs):
    findings = runs.before.findings
    confirmed = [f for f in findings if f.status == "confirmed"]
    assert {f.rule for f in confirmed} == {"BS101", "BS201", "BS401"}
    assert not [f for f in findings if f.status == "dynamic-only"]
    assert all(f.fix is not None and f.fix.diff for f in confirmed)


def test_terminal_report(runs):
    text = render("text", runs.before, RenderOptions(width=80))
    lines = [line.strip() for line in text.splitlines()]
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "4 findings: 3 confirmed by TorchDynamo, 1 lint-only, 0 missed by the lint" in lines
    assert any(line.startswith("├── ✗ BS101 at mixed.py:7 (GB0124, ×2)") for line in lines)
    assert "chain: Mixed.forward:24 → rescale:7" in lines


def test_html_report(runs):
    page = render("html", runs.before, RenderOptions())
    assert page.count('<g class="break">') == 3 and "<script" not in page


def test_verify_shows_the_fixed_breaks(runs, tmp_path):
    baseline = tmp_path / "before.json"
    baseline.write_text(render("json", runs.before, RenderOptions()))
    report = attach_baseline(runs.after, str(baseline))
    (delta,) = report.verification.targets
    assert (delta.graphs_before, delta.graphs_after) == (5, 2)
    assert sorted(b.gb_id for b in delta.fixed) == ["GB0059", "GB0124"]
    assert [b.gb_id for b in delta.remaining] == ["GB0170"] and delta.new == ()
    assert "Mixed(): graphs 5 → 2, breaks 3 → 1" in render("text", report, RenderOptions(width=100))
    assert json.loads(render("json", report, RenderOptions()))["verify"]["targets"][0]["graphs_after"] == 2
