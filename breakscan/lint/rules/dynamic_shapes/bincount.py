import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.ops import op_call


class Bincount(Rule):
    id = "BS304"
    name = "bincount"
    gb_ids = ("GB0036",)
    message = "`bincount`'s output length is the largest input value + 1, known only at run time: the graph breaks here"
    fix_hint = "use torch.zeros(n).index_add_(0, idx, ones) or scatter_add_ with a fixed number of bins"
    captured_by = ("capture_dynamic_output_shape_ops",)
    docs = """
    ## What it does
    Flags `torch.bincount` and `Tensor.bincount()` in compiled code, with or without `minlength`.

    ## Why is this bad?
    The result has `max(input) + 1` bins (at least `minlength`), a size that depends on the data.
    With the default `capture_dynamic_output_shape_ops=False`, TorchDynamo ends the graph at the
    call, runs it eagerly and starts a new graph after it (GB0036 "Dynamic shape operator");
    `minlength` does not help, the size is still data-dependent.

    ## Example
    ```python
    counts = torch.bincount(labels, minlength=num_classes)
    ```

    ## Use instead
    ```python
    counts = torch.zeros(num_classes, dtype=torch.long, device=labels.device)
    counts.index_add_(0, labels, torch.ones_like(labels))
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long()
                counts = torch.bincount(labels, minlength=10)  # break
                return counts.float() / x.numel()
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long()
                return labels.bincount() + 1  # break
        """),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_dynamic_output_shape_ops = True

            @torch.compile
            def fn(x):
                return torch.bincount((x.abs() * 3).long())
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long().clamp(max=9)
                counts = torch.zeros(10, dtype=torch.long).index_add_(0, labels, torch.ones_like(labels))
                return counts.float() / x.numel()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if op_call(node, ctx, frozenset({"bincount"})) is not None:
            ctx.report(self, node)
