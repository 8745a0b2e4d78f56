import libcst as cst

from breakscan.lint.rule import Example, Rule


class SkipFrame(Rule):
    id = "BS903"
    name = "skip-frame"
    gb_ids = ("GB4297",)
    message = "`torch._dynamo.skip_frame()` makes TorchDynamo skip the whole function: it runs eagerly"
    fix_hint = "remove it to compile the function, or mark the function with @torch.compiler.disable to say so up front"
    docs = """
    ## What it does
    Flags `torch._dynamo.skip_frame()` calls in compiled code.

    ## Why is this bad?
    Unlike `graph_break()`, `skip_frame()` abandons the whole frame (GB4297 "Call to
    `torch._dynamo.skip_frame()`"): nothing of the function is compiled, including what comes
    before the call, and this happens on every call.

    ## Example
    ```python
    def forward(self, x):
        torch._dynamo.skip_frame()
        return self.body(x)
    ```

    ## Use instead
    ```python
    @torch.compiler.disable
    def forward(self, x):
        return self.body(x)
    ```
    (or remove the call so the function is compiled).
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                torch._dynamo.skip_frame()  # break
                return y + 1
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                return y + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) == "torch._dynamo.skip_frame":
            ctx.report(self, node)
