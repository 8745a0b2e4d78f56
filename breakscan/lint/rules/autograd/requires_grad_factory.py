import libcst as cst

from breakscan.lint.rule import Example, Rule

FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "tensor", "ones", "zeros", "empty", "full", "rand", "randn", "arange", "linspace", "logspace",
        "eye", "ones_like", "zeros_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    )
)


class RequiresGradFactory(Rule):
    id = "BS705"
    name = "requires-grad-factory"
    gb_ids = ("GB0225",)
    message = "creating a tensor with `requires_grad=True` inside compiled code breaks the graph"
    fix_hint = "create the leaf tensor outside the compiled code (or register it as an nn.Parameter) and pass it in"
    docs = """
    ## What it does
    Flags `torch.tensor/ones/zeros/empty/full/rand/randn/arange/...(..., requires_grad=...)` and
    their `*_like` variants in compiled code, unless `requires_grad=False`.

    ## Why is this bad?
    A new leaf tensor that requires grad cannot be created inside a graph: TorchDynamo 2.13 ends
    the graph at the factory call (GB0225 "Attempted to use tensor creation function with
    requires_grad=True"). When `requires_grad=` is a variable, it breaks whenever the variable
    is true (reported as a warning).

    ## Example
    ```python
    def forward(self, x):
        query = torch.zeros(1, self.dim, requires_grad=True)
        ...
    ```

    ## Use instead
    ```python
    self.query = nn.Parameter(torch.zeros(1, dim))   # in __init__
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                bias = torch.zeros(8, requires_grad=True)  # break
                return y + bias
        """),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x.relu()
                    offset = torch.full_like(y, 0.5, requires_grad=True)  # break
                    return y + offset
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                bias = torch.zeros(8, requires_grad=False)
                scale = x.new_ones(8, requires_grad=True)
                return x * scale + bias
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        flag = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "requires_grad"), None)
        if flag is None or (isinstance(flag, cst.Name) and flag.value == "False"):
            return
        if ctx.qualname(node.func) in FACTORIES:
            literal_true = isinstance(flag, cst.Name) and flag.value == "True"
            ctx.report(self, node, severity=None if literal_true else "warning")
