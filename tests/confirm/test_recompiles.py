"""Recompilations: captured from targets that make several calls (one batched run), merged per
guarded line, with TorchDynamo's hint or breakscan's advice, the limit, and the compile cost."""

from __future__ import annotations

import pytest

from breakscan.confirm import discover_targets, run_targets
from breakscan.confirm.recompiles import advice, guard_pattern, parse_reason
from tests.confirm.helpers import fixture, line_of, once_per_session


@pytest.fixture(scope="module")
def results(request, tmp_path_factory):
    def run():
        specs, _ = discover_targets(fixture("recompiles.py"))
        return run_targets(specs, device="cpu", timeout=120)

    return {r.name: r for r in once_per_session(request, tmp_path_factory, "recompiles", run)}


@pytest.mark.slow
def test_an_int_attribute_updated_in_forward_recompiles_to_the_limit(results):
    counter = results["Counter()"]
    assert counter.status == "ok" and counter.calls == 10
    (item,) = counter.recompiles
    assert (item.line, item.function, item.guard) == (line_of("recompiles.py", "STEP"), "forward", "self.step == 0")
    assert item.count == 8 and item.limit_hit
    assert "allow_unspec_int_on_nn_module" in item.reason  # TorchDynamo's own hint
    assert counter.compile_count == 9 and counter.compile_time > 0
    assert [g.recompiled for g in counter.graphs] == [False] + [True] * 7


@pytest.mark.slow
def test_a_step_between_calls_flips_the_mode(results):
    modal = results["Modal()"]
    assert modal.calls == 2
    (item,) = modal.recompiles
    assert item.line == line_of("recompiles.py", "DROP") and ".training == True" in item.guard
    assert item.count == 1 and not item.limit_hit and "train and eval mode" in item.reason


@pytest.mark.slow
def test_a_new_input_size_recompiles_once_then_the_size_is_dynamic(results):
    summed = results["summed"]
    (item,) = summed.recompiles
    assert item.line == line_of("recompiles.py", "SIZES")  # a guard on an argument: the function
    assert item.guard == "tensor 'x' size mismatch at index 0. expected 2, actual 3" and item.count == 1
    assert "mark_dynamic" in item.reason


@pytest.mark.slow
def test_one_call_compiles_once(results):
    single = results["Counter().eval()"]
    assert single.calls == 1 and single.recompiles == () and single.compile_count == 1


@pytest.mark.parametrize(("reason", "guard", "hint"), [
    ("0/2: self.step == 2          # self.step += 1  # m.py:11 in forward (HINT: make it a tensor.)\n"
     "User stack trace:\n  File \"/m.py\", line 11, in forward", "self.step == 2", "make it a tensor."),
    ("1/0: tensor 'x' size mismatch at index 0. expected 2, actual 3",
     "tensor 'x' size mismatch at index 0. expected 2, actual 3", None),
])
def test_reasons_are_split_into_guard_and_hint(reason, guard, hint):
    assert parse_reason(reason)[:2] == (guard, hint)


def test_the_same_guard_on_another_value_is_one_site():
    assert guard_pattern("self.step == 2") == guard_pattern("self.step == 7")
    assert guard_pattern("Cached backend: <lambda at 0x7f3a12>") == guard_pattern("Cached backend: <lambda at 0x9c0b>")
    assert "0-d tensor" in advice("s == 0.5", None) and "reuse it" in advice("BACKEND_MATCH failure: ...", None)


@pytest.mark.slow
def test_layers_compiled_one_by_one_recompile_per_layer_as_the_lint_predicts(tmp_path):
    """fixtures/recompiles_regional_compile.py run as a script: every layer recompiles the shared
    forward until the limit; BR006 is confirmed there, and the limit is not also a graph break."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import FIXTURES, ROOT, expected_findings

    script = FIXTURES / "recompiles_regional_compile.py"
    result = subprocess.run([sys.executable, "-m", "breakscan", "run", "--format", "json", str(script)],
                            capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "BREAKSCAN_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert {(f["line"], f["rule"], f["status"]) for f in report["findings"]} == {
        (line, rule, "confirmed") for line, rule in expected_findings(script)}
    (target,) = report["targets"]
    (recompile,) = target["recompiles"]
    assert recompile["limit_hit"] and recompile["guard"] == "self.layer_idx == 0"
