import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.ops import op_call


class RepeatInterleaveTensor(Rule):
    id = "BS305"
    name = "repeat-interleave-tensor"
    gb_ids = ("GB0036",)
    message = "`repeat_interleave` with tensor repeats has a data-dependent length: the graph breaks here"
    fix_hint = "pass output_size= (the known total length), or use an int repeats / expand + reshape"
    captured_by = ("capture_dynamic_output_shape_ops",)
    docs = """
    ## What it does
    Flags `torch.repeat_interleave(x, repeats)` and `x.repeat_interleave(repeats)` when `repeats`
    is a tensor and no `output_size=` is given, and the one-argument form
    `torch.repeat_interleave(repeats)`. An int `repeats` (`x.repeat_interleave(2, dim=1)`, the
    grouped-query-attention pattern) has a static shape and is not flagged.

    ## Why is this bad?
    The output length is `repeats.sum()`, known only at run time. With the default
    `capture_dynamic_output_shape_ops=False`, TorchDynamo ends the graph at the call, runs it
    eagerly and starts a new graph after it (GB0036 "Dynamic shape operator").

    ## Example
    ```python
    tokens = torch.repeat_interleave(hidden, durations, dim=0)
    ```

    ## Use instead
    ```python
    tokens = torch.repeat_interleave(hidden, durations, dim=0, output_size=max_frames)
    ```
    `output_size` must be the exact total (`repeats.sum()`); when it is not known, pad to a fixed
    length outside the compiled region.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                repeats = (x.abs() * 2).long()
                return torch.repeat_interleave(x, repeats) * 2  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                repeats = (x.abs() * 2).long()
                return x.repeat_interleave(repeats, dim=0) + 1  # break
        """),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_dynamic_output_shape_ops = True

            @torch.compile
            def fn(x):
                return x.repeat_interleave((x > 0).long())
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x.repeat_interleave(2, dim=0) + torch.repeat_interleave(x, repeats=2)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                repeats = torch.full_like(x, 2, dtype=torch.long)
                return torch.repeat_interleave(x, repeats, output_size=16) + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        call = op_call(node, ctx, frozenset({"repeat_interleave"}))
        if call is None or not call.complete or "output_size" in call.keywords:
            return
        if len(call.positional) > 1:
            repeats = call.positional[1]
        elif "repeats" in call.keywords:
            repeats = call.keywords["repeats"]
        else:
            repeats = call.positional[0] if call.positional else None  # torch.repeat_interleave(repeats)
        if repeats is not None and ctx.value(repeats) == v.TENSOR:
            ctx.report(self, node)
