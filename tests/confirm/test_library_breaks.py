"""Breaks inside an installed library, end to end: the worker records both places (the user's call
and the library line), the fuser matches a `--follow` finding at the library line or labels the
break "in a library", every report format shows both, and the fix is at the user's call.

`fixtures/projects/site-packages/vqlib` stands for an installed package; one worker run."""

from __future__ import annotations

import json
import os

import pytest

from breakscan import __version__
from breakscan.config import Config
from breakscan.confirm import fuse, run_targets
from breakscan.fixes import attach_fixes
from breakscan.lint import resolve
from breakscan.lint.linter import lint_paths
from breakscan.model import Report, TargetResult, TargetSpec
from breakscan.report import RenderOptions, render
from tests.helpers import FIXTURES

pytestmark = pytest.mark.slow

SITE_PACKAGES = FIXTURES / "projects" / "site-packages"
MODELS = FIXTURES / "projects" / "uses_library" / "my_models.py"
CODEBOOK = SITE_PACKAGES / "vqlib" / "codebook.py"
CALL_LINE, UNIQUE_LINE = 13, 13  # `self.codebook(...)` in my_models.py; `torch.unique` in codebook.py


@pytest.fixture(scope="module")
def target() -> TargetResult:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(SITE_PACKAGES))
        (result,) = run_targets([TargetSpec(str(MODELS), "Quantized()", "torch.randn(4, 8)")], timeout=240)
    return result


def _report(target: TargetResult, follow: bool, monkeypatch) -> Report:
    monkeypatch.setattr(resolve, "_install_locations", lambda: (str(SITE_PACKAGES),))
    outcome = lint_paths([str(MODELS)], Config(), jobs=1, follow=follow)
    report = Report(version=__version__, files=1, targets=[target], torch_version=target.torch_version)
    report.findings = attach_fixes(fuse(outcome.findings, report.targets), report.targets)
    return report


def test_the_break_keeps_the_users_call_and_the_library_line(target):
    assert target.status == "ok", target.error
    (brk,) = target.breaks
    assert (os.path.realpath(brk.path), brk.line, brk.gb_id) == (str(MODELS), CALL_LINE, "GB0036")
    assert brk.library is not None
    assert (brk.library.package, os.path.realpath(brk.library.path), brk.library.line, brk.library.function) == (
        "vqlib", str(CODEBOOK), UNIQUE_LINE, "Codebook.forward")


def test_without_follow_it_is_in_a_library_with_a_fix_at_the_call(target, monkeypatch):
    report = _report(target, follow=False, monkeypatch=monkeypatch)
    (finding,) = report.findings
    assert (finding.rule, finding.status, os.path.realpath(finding.path), finding.line) == (
        "BS000", "dynamic-only", str(CODEBOOK), UNIQUE_LINE)
    assert finding.library.package == "vqlib" and finding.library.reached_from.line == CALL_LINE
    assert "_run_eagerly(self.codebook, self.proj(x))" in finding.fix.diff
    assert "my_models.py" in finding.fix.diff.splitlines()[0]  # the user's file, never the library's
    text = render("text", report, RenderOptions(width=120))
    assert "in vqlib at codebook.py:13, reached from" in text
    assert "used = torch.unique(codes)" in text  # the library line's source
    assert "0 missed by the lint, 1 in a library" in text and "1 finding (0 confirmed, 0 missed by the lint, " \
        "1 in a library)" in text
    data = json.loads(render("json", report, RenderOptions()))
    assert data["targets"][0]["breaks"][0]["library"]["package"] == "vqlib"
    assert data["findings"][0]["library"]["reached_from"]["line"] == CALL_LINE
    sarif = json.loads(render("sarif", report, RenderOptions()))["runs"][0]["results"][0]
    assert sarif["properties"]["library"] == "vqlib" and sarif["relatedLocations"][0]["physicalLocation"]["region"] == {
        "startLine": CALL_LINE}
    assert "in vqlib at codebook.py:13" in render("html", report, RenderOptions())


def test_with_follow_the_lints_finding_in_the_library_is_confirmed(target, monkeypatch):
    report = _report(target, follow=True, monkeypatch=monkeypatch)
    (finding,) = report.findings
    assert (finding.rule, finding.status, finding.line, finding.count) == ("BS303", "confirmed", UNIQUE_LINE, 2)
    assert report.explained_break(finding) is target.breaks[0]
    assert "_run_eagerly(self.codebook" in finding.fix.diff


def test_the_fix_at_the_call_runs_gives_the_same_outputs_and_leaves_one_break_at_the_call(
        target, monkeypatch, tmp_path):
    import subprocess
    import sys

    from breakscan.fixes.edits import apply_edits
    from tests.helpers import ROOT

    report = _report(target, follow=False, monkeypatch=monkeypatch)
    (finding,) = report.findings
    assert finding.fix.edits and os.path.realpath(finding.fix.path) == str(MODELS)
    fixed = tmp_path / MODELS.name
    fixed.write_text(apply_edits(MODELS.read_text(), finding.fix.edits))
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"name": "library_call", "original": str(MODELS), "fixed": str(fixed),
                                 "entry": "Quantized()", "inputs": "torch.randn(4, 8)"}]))
    run = subprocess.run([sys.executable, "-m", "tests.fixes.dynamo_check", str(jobs)], cwd=ROOT, capture_output=True,
                         text=True, timeout=240, env={**os.environ, "PYTHONPATH": str(SITE_PACKAGES)})
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])["library_call"]
    assert result["outputs_match"]  # seeded; tensors equal within atol 1e-6
    # The library's break is gone; what remains is the one break the summary announces: the disabled
    # wrapper, at the user's call (moved down by the lines the fix inserted).
    call_line = next(number for number, line in enumerate(fixed.read_text().splitlines(), 1)
                     if "_run_eagerly(self.codebook" in line)
    assert [(b["line"], b["gb_id"], b.get("library")) for b in result["fixed"]["breaks"]] == [
        (call_line, "GB0098", None)]
