import libcst as cst

from breakscan.lint.rule import Example, Rule

PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


class ParameterConstruction(Rule):
    id = "BS802"
    name = "parameter-construction"
    gb_ids = ("GB0264",)
    message = "`nn.Parameter(...)` cannot be constructed inside compiled code: the graph breaks here"
    fix_hint = "create the parameter in __init__ (or register a buffer there) and only use it in forward"
    docs = """
    ## What it does
    Flags `nn.Parameter(...)` constructed in compiled code, including
    `self.register_parameter(name, nn.Parameter(...))` and `self.w = nn.Parameter(...)` in
    `forward`.

    ## Why is this bad?
    TorchDynamo 2.13 does not trace the Parameter constructor by default (GB0264 "Attempted to
    use `torch.nn.Parameter()` constructor with Dynamo"): the graph ends there. A parameter
    created in `forward` is also new on every call and is never seen by the optimizer.
    `self.register_buffer(...)` of a plain tensor in `forward` is traced and not flagged. Wrapping
    a graph input as it came (`nn.Parameter(x)` on a parameter of the function given to
    `torch.compile`, not rebound) is traced (probed) and not flagged; on a parameter of a helper or
    a `forward` it reaches, which may or may not be such an input, the finding is a warning.

    ## Example
    ```python
    def forward(self, x):
        if self.scale is None:
            self.scale = nn.Parameter(torch.ones(x.shape[-1]))
        return x * self.scale
    ```

    ## Use instead
    ```python
    def __init__(self, dim):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, x):
                    y = x.tanh()
                    scale = nn.Parameter(torch.ones(8))  # break
                    return y * scale
        """, entry="Model()"),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x + 1
                    self.register_parameter("gain", torch.nn.Parameter(torch.ones(8)))  # break
                    return y * self.gain
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                weight = torch.nn.Parameter(x)  # the graph input itself, wrapped as it came
                return weight * 2
        """),
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = nn.Parameter(torch.ones(8))

                def forward(self, x):
                    self.register_buffer("last", x.detach(), persistent=False)
                    return x * self.scale
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) not in PARAMETER_CLASSES:
            return
        data = node.args[0].value if node.args and node.args[0].keyword is None else None
        if data is not None and ctx.is_passed_in(data):
            # `nn.Parameter(x)` of a graph input itself is traced (probed); of anything else it breaks.
            if ctx.function.compiled:  # the compiled function's own parameter: a graph input
                return
            ctx.report(self, node, f"{self.message}, unless `{data.value}` is an input of the compiled function "
                                   "(a parameter of it: wrapping an input as it came is traced)", severity="warning")
        else:
            ctx.report(self, node)
