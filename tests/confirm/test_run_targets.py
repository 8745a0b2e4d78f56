"""run_targets end to end: every target style and failure mode, in ONE batched run."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from breakscan.confirm import discover_targets, run_targets
from breakscan.confirm.runner import Step
from breakscan.model import TargetResult, TargetSpec
from tests.confirm.helpers import FIXTURES, fixture, line_of, once_per_session, same_file


def _entry(name: str, entry: str, inputs: str = "torch.randn(3)") -> TargetSpec:
    (spec,), note = discover_targets(fixture(name), entry=entry, inputs=inputs)
    assert note is None
    return spec


def _declared(name: str) -> list[TargetSpec]:
    specs, note = discover_targets(fixture(name))
    assert note is None
    return specs


SPECS = [
    *_declared("breaks.py"),
    _entry("sets_config.py", "fn"),
    *_declared("pairs.py"),  # its .item() breaks again: sets_config's config change is undone
    *_declared("grad_switch.py"),
    *_declared("zero_setup.py"),
    *_declared("no_breaks.py"),
    _entry("import_error.py", "fn"),
    _entry("failures.py", "raises"),
    _entry("failures.py", "dynamo_error"),
    _entry("failures.py", "segfaults"),
    _entry("failures.py", "noisy"),
    _entry("failures.py", "reads_stdin"),
    _entry("failures.py", "aborts"),
    replace(_entry("failures.py", "noisy"), name="noisy after a crash"),  # a fresh worker
]


@pytest.fixture(scope="module")
def results(request, tmp_path_factory) -> dict[tuple[str, str], TargetResult]:
    steps: list[Step] = []

    def confirm_all() -> list[TargetResult]:
        outcome = run_targets(SPECS, timeout=120, progress=steps.append)
        assert sorted(s.index for s in steps if s.phase == "done") == list(range(len(SPECS)))  # each once, at its end
        assert {s.phase for s in steps} == {"starting", "importing", "compiling", "done"}
        return outcome

    outcome = once_per_session(request, tmp_path_factory, "confirm-batch", confirm_all)
    assert len(outcome) == len(SPECS)
    by_key = {}
    for spec, result in zip(SPECS, outcome):
        assert result.name == spec.label and result.path == spec.path  # same order as the specs
        by_key[spec.path.rsplit("/", 1)[-1], spec.label] = result
    return by_key


def _only_break(result: TargetResult):
    assert result.status == "ok", result.error
    (brk,) = result.breaks
    return brk


def test_helper_break_is_attributed_to_the_helper_with_the_caller_in_the_chain(results):
    brk = _only_break(results["breaks.py", "HelperModel()"])
    assert same_file(brk.path, fixture("breaks.py"))
    assert brk.line == line_of("breaks.py", "HELPER_BREAK")
    assert brk.gb_id == "GB0059"
    functions = [(f.line, f.function) for f in brk.stack]
    assert functions == [(line_of("breaks.py", "HELPER_CALL"), "HelperModel.forward"),
                         (line_of("breaks.py", "HELPER_BREAK"), "helper")]
    # Once while inlining into forward, once compiling helper as its own frame.
    assert brk.count == 2
    assert results["breaks.py", "HelperModel()"].graph_break_count == 2


def test_a_targets_config_change_does_not_leak_into_the_next_target(results):
    assert results["grad_switch.py", "double"].recompiles  # the steps switched global state between its calls
    assert results["grad_switch.py", "needs_defaults"].status == "ok", results["grad_switch.py", "needs_defaults"].error
    assert results["sets_config.py", "fn"].status == "ok"
    assert results["sets_config.py", "fn"].breaks == ()  # capture_scalar_outputs held inside it
    for label in ("Tiny()", "Tiny(6)"):  # without the config, their .item() breaks
        brk = _only_break(results["pairs.py", label])
        assert (brk.line, brk.gb_id) == (line_of("pairs.py", "ITEM_BREAK"), "GB0124")


def test_stdlib_break_is_attributed_to_the_user_line_that_called_it(results):
    brk = _only_break(results["breaks.py", "stdlib_fn"])
    assert brk.line == line_of("breaks.py", "STDLIB_CALL")
    assert brk.gb_id == "GB4198"  # Attempted to copy.deepcopy a tensor
    assert brk.stack[-1].path.endswith("copy.py")  # the stdlib frame is kept below the site
    assert brk.stack[0].function == "stdlib_fn"


def test_third_party_break_is_attributed_to_the_user_call_also_when_compiled_on_its_own(results):
    # Seen inlined in uses_library, then again in fakelib.normalize compiled as a frame of its own
    # (no user frame in Dynamo's stack there: the live stack above it finds the user's call).
    brk = _only_break(results["breaks.py", "uses_library"])
    assert (brk.line, brk.gb_id, brk.count) == (line_of("breaks.py", "LIBRARY_CALL"), "GB0059", 2)
    assert [f.function for f in brk.stack] == ["uses_library", "normalize"]


def test_while_loop_break_repeats_and_is_merged_with_a_count(results):
    result = results["breaks.py", "countdown"]
    brk = _only_break(result)
    assert (brk.line, brk.gb_id, brk.gb_type) == (line_of("breaks.py", "WHILE_BREAK"), "GB0170",
                                                  "Data-dependent branching")
    assert brk.count > 1
    assert result.graph_break_count == brk.count  # occurrences, not explain's graph_count - 1


def test_data_dependent_jump_gets_its_gb_id(results):
    brk = _only_break(results["breaks.py", "branchy"])
    assert brk.line == line_of("breaks.py", "IF_BREAK")
    assert brk.gb_id == "GB0170"
    assert brk.explanation and brk.hints


def test_break_in_loop_skips_the_frame_and_leaves_no_graph(results):
    result = results["breaks.py", "loop_break"]
    (brk,) = [b for b in result.breaks if b.gb_type == "graph break in loop"]
    assert brk.line == line_of("breaks.py", "LOOP_BREAK")
    assert brk.frame_skipped and brk.gb_id == "GB0025"  # identified by its cause, the explicit graph_break()
    assert "caused by: Call to `torch._dynamo.graph_break()`" in brk.reason
    assert result.graph_count == 0


def test_clean_target_with_positional_inputs(results):
    result = results["breaks.py", "clean"]
    assert (result.status, result.breaks, result.graph_count) == ("ok", (), 1)
    assert result.graphs[0].ops == ("relu", "mul")


def test_graphs_record_ops_and_user_lines(results):
    result = results["no_breaks.py", "Clean()"]
    assert (result.status, result.graph_count, result.graph_break_count) == ("ok", 1, 0)
    (graph,) = result.graphs
    assert graph.ops == ("linear", "relu", "linear")
    assert graph.op_count == 3
    assert same_file(graph.path, fixture("no_breaks.py")) and graph.lines == (13,)
    assert result.device == "cpu" and result.torch_version.startswith("2.")


def test_declared_pairs_with_synthesised_and_explicit_inputs(results):
    for label in ("Tiny()", "Tiny(6)"):
        brk = _only_break(results["pairs.py", label])
        assert (brk.line, brk.gb_id) == (line_of("pairs.py", "ITEM_BREAK"), "GB0124")
    assert results["pairs.py", "double"].status == "ok"


def test_an_already_compiled_entry_is_confirmed_as_the_original(results):
    result = results["pairs.py", "torch.compile(double)"]
    assert (result.status, result.graph_count, result.graphs[0].ops) == ("ok", 1, ("mul",))


def test_nothing_is_written_into_the_user_tree(results):
    assert not os.path.exists(os.path.join(FIXTURES, "__pycache__"))


@pytest.mark.parametrize("label", ["LinearNet()", "ConvNet()", "EmbedNet()", "Conv1dNet()",
                                   "Conv3dNet()", "NormNet()"])
def test_zero_setup_inputs_come_from_the_first_layer(results, label):
    result = results["zero_setup.py", label]
    assert result.status == "ok", result.error
    assert result.graph_count >= 1


def test_zero_setup_break_is_found(results):
    brk = _only_break(results["zero_setup.py", "LinearNet()"])
    assert (brk.line, brk.gb_id) == (line_of("zero_setup.py", "LINEAR_BREAK"), "GB0170")


def test_zero_setup_impossible_is_skipped_with_what_to_add(results):
    result = results["zero_setup.py", "FlattenFirst()"]
    assert result.status == "skipped"
    assert "first layer is Flatten" in result.error
    assert 'BREAKSCAN_TARGETS = {"FlattenFirst()": "torch.randn(...)"}' in result.error


def test_import_error_fails_with_the_user_line(results):
    result = results["import_error.py", "fn"]
    assert result.status == "failed"
    assert result.error.startswith("RuntimeError: broken at import")
    assert result.error.endswith(f"import_error.py:{line_of('import_error.py', 'IMPORT_RAISE')})")


def test_exception_in_forward_fails_with_the_user_line(results):
    result = results["failures.py", "raises"]
    assert result.status == "failed"
    assert "ValueError: bad input shape" in result.error
    assert result.error.endswith(f"failures.py:{line_of('failures.py', 'FORWARD_RAISE')})")


def test_dynamo_error_fails_with_the_user_line_it_was_tracing(results):
    result = results["failures.py", "dynamo_error"]
    assert result.status == "failed"
    assert result.error.startswith("InternalTorchDynamoError: ")
    assert result.error.endswith(f"failures.py:{line_of('failures.py', 'DYNAMO_ERROR')})")


def test_segfault_is_crashed_with_signal_and_user_line(results):
    result = results["failures.py", "segfaults"]
    assert result.status == "crashed"
    assert result.error.startswith("SIGSEGV")
    assert f"failures.py:{line_of('failures.py', 'SEGFAULT')}" in result.error


def test_abort_is_crashed_with_signal(results):
    result = results["failures.py", "aborts"]
    assert result.status == "crashed"
    assert result.error.startswith("SIGABRT")
    assert f"failures.py:{line_of('failures.py', 'ABORT')}" in result.error


@pytest.mark.parametrize("label", ["noisy", "reads_stdin", "noisy after a crash"])
def test_user_output_does_not_corrupt_the_protocol_and_workers_restart(results, label):
    result = results["failures.py", label]
    assert result.status == "ok" and result.graph_break_count >= 1
