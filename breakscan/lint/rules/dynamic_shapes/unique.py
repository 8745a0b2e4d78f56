import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.ops import op_call

UNIQUE_OPS = frozenset({"unique", "unique_consecutive"})


class Unique(Rule):
    id = "BS303"
    name = "unique"
    gb_ids = ("GB0036",)
    message = "the number of distinct values is only known at run time: the graph breaks here"
    fix_hint = "avoid unique in the compiled region (precompute it outside, or work on a fixed-size one-hot/bincount)"
    captured_by = ("capture_dynamic_output_shape_ops",)
    docs = """
    ## What it does
    Flags `torch.unique`, `torch.unique_consecutive` and the `Tensor.unique()` /
    `Tensor.unique_consecutive()` methods in compiled code, whatever their options
    (`sorted`, `return_inverse`, `return_counts`, `dim`).

    ## Why is this bad?
    The output length is the number of distinct values, which depends on the data. With the
    default `capture_dynamic_output_shape_ops=False`, TorchDynamo ends the graph at the call,
    runs it eagerly and starts a new graph after it (GB0036 "Dynamic shape operator").

    ## Example
    ```python
    labels = torch.unique(targets)
    loss = sum(criterion(logits[:, c], targets == c) for c in labels)
    ```

    ## Use instead
    ```python
    present = torch.zeros(num_classes, dtype=torch.bool).index_fill_(0, targets, True)
    # fixed-size per-class work, weighted by `present`
    ```
    Or compute the unique values before entering the compiled function and pass them in.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                values, counts = torch.unique((x * 2).round(), return_counts=True)  # break
                return values * counts
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                runs = x.round().unique_consecutive()  # break
                return runs.sum() + 1
        """),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_dynamic_output_shape_ops = True

            @torch.compile
            def fn(x):
                return torch.unique(x.round())
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                levels = x.round().clamp(-3, 3).long() + 3
                return torch.zeros(7).index_add_(0, levels, torch.ones_like(x))
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if op_call(node, ctx, UNIQUE_OPS) is not None:
            ctx.report(self, node)
