"""`breakscan fix --verify`: the verifier's decisions (kept, rolled back and why, fixes that fail
together) with scripted runs, and end to end on a fixture with TorchDynamo."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from breakscan.cli import main
from breakscan.config import Config
from breakscan.fixes.verify import is_test_file, judge, verify_fixes
from breakscan.model import OutputCheck, TargetResult, TargetSpec
from tests.helpers import ROOT

SAME = OutputCheck(outputs_match=True, gradients_match=None, max_difference=0.0, rtol=1e-5, atol=1e-6)
DIFFERENT = OutputCheck(outputs_match=False, gradients_match=None, max_difference=0.5, rtol=1e-5, atol=1e-6)


def _run(breaks: int, graphs: int, check: OutputCheck | None = SAME, status: str = "ok") -> TargetResult:
    return TargetResult(name="M()", path="m.py", status=status, graph_count=graphs, graph_break_count=breaks,
                        output_check=check, error=None if status == "ok" else "boom")


@pytest.mark.parametrize(("after", "kept", "why"), [
    (_run(1, 2), True, "breaks 2 → 1, graphs 3 → 2, outputs match"),
    (_run(1, 2, DIFFERENT), False, "outputs differ (max |Δ| 0.5)"),
    (_run(2, 3), False, "removes no break when the targets run"),
    (_run(3, 2), False, "adds to M(): breaks 2 → 3, graphs 3 → 2"),
    (_run(0, 0, None, "failed"), False, "M() did not run: failed: boom"),
    (_run(1, 2, OutputCheck(True, False, 0.1, rtol=1e-5, atol=1e-6)), False, "gradients differ (max |Δ| 0.1)"),
])
def test_a_fix_is_kept_only_when_it_removes_breaks_and_changes_nothing_else(after, kept, why):
    assert judge([after], [_run(2, 3)]) == (kept, why)


MODEL = textwrap.dedent("""
    import torch


    @torch.compile
    def f(x):
        a = x.sum().item()
        b = x.max().item()
        return x * a * b
""").lstrip()


def test_fixes_that_fail_together_are_kept_one_by_one(tmp_path):
    """Each of two fixes passes alone but not together: the best is kept, the other tried again
    on its text, in the next round."""
    path = str(tmp_path / "m.py")
    runs: list[dict] = []

    def run(specs, extras):
        results = []
        for extra in extras:
            runs.append(extra["sources"])
            if "save" in extra["reference"]:
                results.append(_run(2, 3))
                continue
            fixed = extra["sources"].get(path, MODEL).count(".detach()")
            pair_first_time = fixed == 2 and len(runs) == 4  # the baseline, two alone, then the pair
            results.append(_run(2 - fixed, 3 - fixed, DIFFERENT if pair_first_time else SAME))
        return results

    result = verify_fixes({path: MODEL}, [TargetSpec(path, "f")], Config(), ("safe", "unsafe"), run)
    assert result.problem is None
    assert [t.kept for t in result.trials] == [True, True]
    assert result.texts[path][1].count(".detach()") == 2
    assert [r.graph_break_count for r in result.final] == [0]


def test_nothing_is_tried_when_the_original_does_not_repeat_itself(tmp_path):
    path = str(tmp_path / "m.py")
    unrepeatable = OutputCheck(False, None, float("inf"), "two eager runs of the original differ")
    result = verify_fixes({path: MODEL}, [TargetSpec(path, "f")], Config(), ("unsafe",),
                          lambda specs, extras: [_run(2, 3, unrepeatable) for _ in extras])
    assert result.problem == "M(): two eager runs of the original differ" and not result.trials


@pytest.mark.parametrize(("path", "test"), [("tests/test_model.py", True), ("pkg/model_test.py", True),
                                            ("conftest.py", True), ("pkg/model.py", False)])
def test_test_files_are_recognised(path, test):
    assert is_test_file(path) is test


@pytest.mark.slow
def test_verify_end_to_end(tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    model = tmp_path / "normalize.py"
    shutil.copy(ROOT / "fixtures" / "fix_verify" / "normalize.py", model)
    monkeypatch.chdir(tmp_path)
    original = model.read_text()
    assert main(["fix", "--verify", "--unsafe", "--diff", "--format", "json", "normalize.py"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert model.read_text() == original  # --diff changes nothing
    by_line = {(f["line"], f["rule"]): f for f in report["fixes"]}
    assert {key: f["status"] for key, f in by_line.items()} == {
        (14, "BS103"): "kept", (15, "BS401"): "kept", (21, "BS101"): "rolled-back"}
    assert by_line[(21, "BS101")]["reason"] == "removes no break when the targets run"
    assert all(f["outputs_match"] for f in report["fixes"])
    assert report["summary"] == {"kept": 2, "rolled_back": 1, "breaks_before": 2, "breaks_after": 0,
                                 "graphs_before": 2, "graphs_after": 1}
    assert main(["fix", "--verify", "--unsafe", "normalize.py"]) == 1  # one fix rolled back
    text = model.read_text()
    assert "capture_scalar_outputs = True" in text and "if not torch.compiler.is_compiling():" in text
    assert "2 fixes kept in 1 file, 1 rolled back; breaks 2 → 0, graphs 2 → 1" in capsys.readouterr().out
