import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class GradFnAccess(Rule):
    id = "BS707"
    name = "grad-fn-access"
    gb_ids = ("GB0104",)
    severity = "warning"
    message = "reading `.grad_fn` of a tensor that requires grad makes TorchDynamo skip the whole function"
    fix_hint = "test `t.requires_grad` instead (traced), or inspect grad_fn outside the compiled code"
    docs = """
    ## What it does
    Flags reads of `tensor.grad_fn` in compiled code.

    ## Why is this bad?
    TorchDynamo 2.13 cannot trace a tensor's autograd node: when the tensor requires grad (any
    activation computed from parameters, in training), reading `.grad_fn` makes it give up on
    the frame (GB0104 "Tensor with grad_fn()") and the whole function runs eagerly. Without
    grad (inference, `torch.no_grad()`) it is traced, hence a warning.

    ## Example
    ```python
    if hidden.grad_fn is not None:
        hidden = checkpoint(self.block, hidden)
    ```

    ## Use instead
    ```python
    if hidden.requires_grad:
        hidden = checkpoint(self.block, hidden)
    ```
    """
    invalid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    if y.grad_fn is not None:  # break
                        y = y * 2
                    return y
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    if y.requires_grad and y.is_leaf is False:
                        y = y * 2
                    return y
        """, entry="Model()"),
    )

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value == "grad_fn" and ctx.value(node.value) in (v.TENSOR, v.MAYBE_TENSOR):
            ctx.report(self, node)
