import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data, jump_holder


class TensorWhile(Rule):
    id = "BS202"
    name = "tensor-while"
    gb_ids = ("GB0170", "GB7000")
    message = "`while` on a tensor's value: TorchDynamo cannot know when the loop stops, the graph breaks at every test"
    fix_hint = "iterate a fixed number of steps and mask finished items, or use torch._higher_order_ops.while_loop"
    docs = """
    ## What it does
    Flags `while` loops whose condition depends on tensor data (`while err > tol:`,
    `while not done.all():`), not on Python counters or shapes.

    ## Why is this bad?
    Each evaluation of the condition needs the tensor's value: TorchDynamo ends the graph at the
    test (GB0170 "Data-dependent branching") and again in every resumed iteration, so the loop
    runs as many small graphs as it iterates. When the condition also tests Python state
    (`while err > tol and step < n:`), the resumed loop cannot be traced at all and runs eagerly
    (GB7000 "graph break in loop").

    ## Example
    ```python
    while (x.abs() > 1).any():
        x = x / 2
    ```

    ## Use instead
    ```python
    for _ in range(self.max_steps):          # a fixed bound
        x = torch.where(x.abs() > 1, x / 2, x)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if torch.compiler.is_exporting():  # False under torch.compile: the loop runs
                    return x
                while x.abs().max() > 1:  # break
                    x = x / 2
                return x
        """, inputs="torch.randn(8) * 4"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x * 4
                while (x.abs() > 1).any():  # break
                    x = x / 2
                return x
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x.abs() + 1
                steps = 0
                while x.sum() > 0 and steps < 3:  # break
                    x = x - 1
                    steps += 1
                while x.mean() < -5:  # not a break: the first test breaks again inside its loop, and the rest of fn runs eagerly
                    x = x / 2
                return x
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                step = 0
                while step < 3 and x.shape[0] > 1:
                    x = torch.where(x.abs() > 1, x / 2, x)
                    step += 1
                return x
        """),
    )

    def on_While(self, node: cst.While, ctx) -> None:
        if holds_tensor_data(node.test, ctx):
            ctx.report(self, node.test, start_at=jump_holder(node, node.test, ctx))
