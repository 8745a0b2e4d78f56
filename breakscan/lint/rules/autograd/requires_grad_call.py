import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class RequiresGradCall(Rule):
    id = "BS703"
    name = "requires-grad-call"
    gb_ids = ("GB0125", "GB8985")
    severity = "warning"
    message = "`.requires_grad_()` that changes the flag breaks the graph (a no-op call does not)"
    fix_hint = "set requires_grad outside the compiled code (on the input or the parameter), or use torch.func for input gradients"
    docs = """
    ## What it does
    Flags `tensor.requires_grad_(...)` and `module.requires_grad_(...)` in compiled code.

    ## Why is this bad?
    Changing `requires_grad` in the middle of a graph would create a new autograd leaf that
    AOTAutograd cannot represent. When the call really flips the flag, TorchDynamo 2.13 ends the
    graph: on a graph input or a parameter (GB0125 "Unsupported Tensor.requires_grad_() call"),
    and on a tensor created in the region that then leaves it, e.g. `x.detach().requires_grad_()`
    or `torch.zeros(n).requires_grad_()` (GB8985 "requires_grad_() intermediate leaked as
    output"). A call that leaves the flag as it was is traced, hence a warning; turning it off on
    a tensor (`t.requires_grad_(False)`) is traced too and is not flagged.

    ## Example
    ```python
    def forward(self, x):
        x = x.detach().requires_grad_()
        energy = self.net(x).sum()
        ...
    ```

    ## Use instead
    Prepare the tensor before calling the compiled function (`x.requires_grad_()` outside), or
    freeze parameters once after building the model, not in `forward`.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                leaf = x.detach().requires_grad_()  # break
                return leaf * 2
        """),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = torch.nn.Linear(8, 8)
                    self.head = torch.nn.Linear(8, 2)

                def forward(self, x):
                    y = torch.relu(x)
                    self.backbone.requires_grad_(False)  # break
                    return self.head(self.backbone(y))
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                noise = torch.randn_like(x)
                noise.requires_grad_(False)  # the flag is already off: traced
                x.requires_grad_(False)
                return x + noise
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if x.requires_grad:
                    return x * 2
                return x.detach() + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and ctx.qualname(func) is None):
            return
        # Probed: turning the flag off on a tensor is traced, whatever the tensor (an input that
        # requires grad included); on a module it changes its parameters and breaks.
        if _turns_off(node) and v.is_tensorish(ctx.value(func.value)):
            return
        ctx.report(self, node)


def _turns_off(call: cst.Call) -> bool:
    for argument in call.args:
        if argument.keyword is None or argument.keyword.value == "requires_grad":
            return isinstance(argument.value, cst.Name) and argument.value.value == "False"
    return False
