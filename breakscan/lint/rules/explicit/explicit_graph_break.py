import libcst as cst

from breakscan.lint.rule import Example, Rule


class ExplicitGraphBreak(Rule):
    id = "BS901"
    name = "explicit-graph-break"
    gb_ids = ("GB0025",)
    message = "`torch._dynamo.graph_break()` ends the graph here on purpose"
    fix_hint = "remove it once whatever it worked around is fixed; leave it (and suppress this) if the split is intended"
    docs = """
    ## What it does
    Flags `torch._dynamo.graph_break()` calls in compiled code.

    ## Why is this bad?
    The call exists to split the graph (GB0025 "Call to `torch._dynamo.graph_break()`"). It is
    often left behind from debugging or from a workaround for an old PyTorch bug, and in a loop
    it makes TorchDynamo skip the whole function (GB7000). Each split costs a graph boundary:
    no fusion across it and extra Python overhead.

    ## Example
    ```python
    y = self.block1(x)
    torch._dynamo.graph_break()   # work around an old inductor bug
    return self.block2(y)
    ```

    ## Use instead
    ```python
    y = self.block1(x)
    return self.block2(y)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                torch._dynamo.graph_break()  # break
                return y + 1
        """),
        Example("""
            import torch
            from torch._dynamo import graph_break

            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x.relu()
                    graph_break()  # break
                    return y * 3
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if not torch.compiler.is_compiling():
                    torch._dynamo.graph_break()
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) == "torch._dynamo.graph_break":
            ctx.report(self, node)
