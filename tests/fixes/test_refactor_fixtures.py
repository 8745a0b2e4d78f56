"""Each refactor kind on its fixture: the suggested diff, applied as written, removes the break
under TorchDynamo and the compiled result equals the original's eager result."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from breakscan.fixes import attach_fixes
from breakscan.fixes.edits import apply_edits
from tests.confirm.helpers import once_per_session_json, session_folder
from tests.fixes.fixtures import RefactorCase, load_cases
from tests.fixes.patching import apply_diff
from tests.helpers import ROOT

CASES = load_cases()
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _fix(case: RefactorCase, rule: str | None = None):
    (finding,) = attach_fixes([case.finding(rule)])
    return finding.fix


@pytest.fixture(scope="module")
def dynamo(request, tmp_path_factory) -> dict:
    """All pairs in one subprocess (torch imported once), once per session."""
    folder = session_folder(request, tmp_path_factory, "refactored")

    def run_pairs() -> dict:
        jobs = []
        for case in CASES:
            fixed = folder / case.name / case.path.name  # same file name: custom-op names come from it
            fixed.parent.mkdir(exist_ok=True)
            fixed.write_text(apply_diff(case.path.read_text(), _fix(case).diff))
            jobs.append({"name": case.name, "original": str(case.path), "fixed": str(fixed),
                         "entry": case.spec.entry, "inputs": case.spec.inputs})
        job_file = folder / "jobs.json"
        job_file.write_text(json.dumps(jobs))
        run = subprocess.run([sys.executable, "-m", "tests.fixes.dynamo_check", str(job_file)], cwd=ROOT,
                             capture_output=True, text=True, timeout=240)
        assert run.returncode == 0, run.stderr[-3000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    return once_per_session_json(request, tmp_path_factory, "refactors", run_pairs)


def test_every_kind_has_a_fixture():
    kinds = {case.name.split("_")[0] for case in CASES}
    assert kinds == {"scalar", "branch", "logging", "shape", "helper", "setup", "explicit", "stdlib", "generator"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_fix_is_suggested_for_the_rule_and_for_the_bare_break(case):
    by_rule, by_break = _fix(case), _fix(case, "BS000")
    assert by_rule is not None and by_rule.diff
    assert by_break is not None and by_break.diff == by_rule.diff  # same advice with or without a rule


# Fixes that cannot change what the code computes; every other kind can at edge cases.
SAFE = {"explicit_break", "helper_disable", "shape_static", "generator_list"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_refactor_is_exact_edits_with_an_applicability(case):
    fix = _fix(case)
    assert fix.edits and fix.path == str(case.path)
    assert fix.applicability == ("safe" if case.name in SAFE else "unsafe")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_edits_and_diff_agree(case):
    fix = _fix(case)
    text = case.path.read_text()
    assert apply_edits(text, fix.edits) == apply_diff(text, fix.diff)


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_refactor_removes_the_break_and_keeps_outputs(case, dynamo):
    result = dynamo[case.name]
    before = [b for b in result["original"]["breaks"] if b["gb_id"] == case.gb_id]
    assert any(b["line"] == case.line for b in before), result["original"]["breaks"]
    after = sorted(b["gb_id"] for b in result["fixed"]["breaks"])
    assert after == sorted(case.leaves), result["fixed"]["breaks"]
    assert result["fixed"]["graph_count"] >= 1
    assert result["outputs_match"]
