import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data

# math functions TorchDynamo traces on tensors without reading them (`math.prod(x)` multiplies tensors).
TENSOR_SAFE = frozenset({"math.prod"})


class MathOnTensor(Rule):
    id = "BS105"
    name = "math-on-tensor"
    gb_ids = ("GB0033",)
    message = "a `math` function on a tensor converts it to a Python float: the graph breaks here"
    fix_hint = "use the torch equivalent (torch.sqrt, torch.exp, torch.log, torch.isnan, torch.floor ...)"
    docs = """
    ## What it does
    Flags calls to functions of the `math` module (`math.sqrt`, `math.exp`, `math.log`,
    `math.isnan`, `math.floor` ...) with a tensor argument. `math` on shapes and constants
    (`math.sqrt(x.size(-1))`, `math.log(self.temperature)` with a float attribute) is not flagged.

    ## Why is this bad?
    `math` functions only take Python numbers, so the tensor is converted with `float()` /
    `__index__`; TorchDynamo cannot know that number while tracing and breaks the graph
    (GB0033 "Data dependent operator").

    ## Example
    ```python
    norm = math.sqrt(x.pow(2).sum())
    ```

    ## Use instead
    ```python
    norm = torch.sqrt(x.pow(2).sum())
    ```
    """
    invalid = (
        Example("""
            import math
            import torch

            @torch.compile
            def fn(x):
                norm = math.sqrt(x.pow(2).sum())  # break
                return x / norm
        """),
        Example("""
            import math
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.log_scale = nn.Parameter(torch.zeros(()))

                def forward(self, x):
                    return x * math.exp(self.log_scale)  # break
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import math
            import torch

            @torch.compile
            def fn(x):
                return x / math.sqrt(x.size(-1)) * math.pi
        """),
        Example("""
            import math
            import torch

            @torch.compile
            def fn(x):
                return torch.sqrt(x.pow(2).sum()) * math.prod(x.shape)
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if (qualified is not None and qualified.startswith("math.") and qualified not in TENSOR_SAFE
                and any(a.keyword is None and not a.star and holds_tensor_data(a.value, ctx) for a in node.args)):
            ctx.report(self, node)
