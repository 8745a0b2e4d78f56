"""The private TorchDynamo hooks, pinned to the installed torch: if this fails after a torch
upgrade, breakscan/confirm/capture.py needs porting (nothing else touches Dynamo internals)."""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")

from breakscan.confirm.capture import (  # noqa: E402
    SUPPORTED_TORCH,
    capturing,
    original_callable,
    parse_message,
)


def test_installed_torch_is_the_supported_version():
    assert torch.__version__.startswith(SUPPORTED_TORCH + ".")


def test_hooked_signatures_are_the_expected_ones():
    from torch._dynamo import convert_frame, output_graph, symbolic_convert

    def params(fn):
        return list(inspect.signature(fn).parameters)

    assert params(symbolic_convert.InstructionTranslatorBase.log_graph_break) == [
        "self", "code_options", "reason", "exc"]
    assert params(convert_frame.ConvertFrameAssert.__call__)[:2] == ["self", "frame"]
    assert params(output_graph.OutputGraph.call_user_compiler) == ["self", "gm", "example_inputs"]
    exc = torch._dynamo.exc.Unsupported("m", gb_type="t")
    assert (exc.gb_type, exc.logged, exc.skip_frame, hasattr(exc, "real_stack")) == ("t", False, False, True)
    assert callable(torch._guards.TracingContext.extract_stack)
    assert callable(torch._dynamo.guards.profile_guard_manager)


def _sum_item(x):
    y = x * 2
    return y.sum().item() + 1


def _loop(x):
    for _ in range(2):
        torch._dynamo.graph_break()
    return x


def test_every_occurrence_graphs_and_frame_skips_are_captured():
    torch._dynamo.reset()
    with capturing() as capture:
        torch.compile(_sum_item, backend="eager")(torch.randn(3))
        torch.compile(_loop, backend="eager")(torch.randn(3))
    torch._dynamo.reset()
    item, loop = capture.breaks
    assert item.gb_type == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert item.stack[-1].function == "_sum_item" and not item.skips_frame
    assert loop.gb_type == "graph break in loop" and loop.skips_frame
    assert [g.ops for g in capture.graphs] == [("mul", "sum")]
    assert capture.graphs[0].op_stacks[0][-1].function == "_sum_item"
    assert item.region.function == "_sum_item" and loop.region.function == "_loop"


def _generator(x):
    yield x + 1


def test_a_frame_refused_before_tracing_is_captured_too():
    # Raised in convert_frame, not the translator: it never reaches log_graph_break.
    torch._dynamo.reset()
    with capturing() as capture:
        list(torch.compile(_generator, backend="eager")(torch.randn(2)))
    torch._dynamo.reset()
    (brk,) = capture.breaks
    assert (brk.gb_type, brk.skips_frame, brk.stack[-1].function) == (
        "Attempt to trace generator", True, "_generator")


def test_original_callable_unwraps_compiled_targets():
    module = torch.nn.Linear(1, 1)
    assert original_callable(torch.compile(module)) is module
    assert original_callable(torch.compile(_loop)) is _loop
    assert original_callable(_loop) is _loop


def test_hooks_are_removed_after_the_block():
    from torch._dynamo import symbolic_convert

    before = symbolic_convert.InstructionTranslatorBase.log_graph_break
    with capturing():
        assert symbolic_convert.InstructionTranslatorBase.log_graph_break is not before
    assert symbolic_convert.InstructionTranslatorBase.log_graph_break is before


def test_message_parts():
    parts = parse_message("T\n  Explanation: a\n    b\n  Hint: h1\n  Hint: h2\n\n"
                          "  Developer debug context: ctx\n\n For more details about this graph break,"
                          " please visit: https://x/gb/gb0001.html\n")
    assert (parts.title, parts.explanation, parts.hints, parts.context) == ("T", "a b", ("h1", "h2"), "ctx")
