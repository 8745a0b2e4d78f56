import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import data_operand, holds_tensor_data, jump_holder, undecided_guard


class TensorTernary(Rule):
    id = "BS203"
    name = "tensor-ternary"
    gb_ids = ("GB0170",)
    message = "`a if cond else b` on a tensor's value: TorchDynamo cannot pick a side while tracing, the graph breaks"
    fix_hint = "compute both sides and select with torch.where(cond, a, b)"
    docs = """
    ## What it does
    Flags conditional expressions whose condition depends on tensor data
    (`y = x * 2 if x.mean() > 0 else x`), including those inside comprehensions.

    ## Why is this bad?
    Like a data-dependent `if`, the side taken is only known at run time: TorchDynamo ends the
    graph at the condition, evaluates it eagerly and traces the chosen side as a new graph
    (GB0170 "Data-dependent branching").

    ## Example
    ```python
    scale = x.std() if x.numel() > 1 and x.std() > 0 else torch.ones(())
    ```

    ## Use instead
    ```python
    std = x.std()
    scale = torch.where(std > 0, std, torch.ones_like(std))
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2 if x.mean() > 0 else x - 1  # break
                return y + 1
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                rows = x.view(4, 2)
                return torch.stack([r if r.sum() > 0 else -r for r in rows])  # break
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x, mask=None):
                x = x * 2 if x.shape[0] > 4 else x
                x = x if mask is None else x * mask
                return torch.where(x.mean() > 0, x * 2, x - 1)
        """),
    )

    def on_IfExp(self, node: cst.IfExp, ctx) -> None:
        if holds_tensor_data(node.test, ctx):
            ctx.report(self, data_operand(node.test, ctx), start_at=jump_holder(node, node.test, ctx),
                       end_at=node.test, guard=undecided_guard(node.test, ctx))
