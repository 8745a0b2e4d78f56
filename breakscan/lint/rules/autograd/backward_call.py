import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.receivers import report_on_receiver


class BackwardCall(Rule):
    id = "BS701"
    name = "backward-call"
    gb_ids = ("GB0123", "GB0007")
    message = "`.backward()` cannot run inside a compiled graph: the graph breaks here"
    fix_hint = "compile the forward and loss only; call loss.backward() outside the compiled function"
    docs = """
    ## What it does
    Flags `tensor.backward(...)` and `torch.autograd.backward(...)` inside code that runs under
    `torch.compile`.

    ## Why is this bad?
    TorchDynamo does not trace the backward pass from inside a graph: it ends the graph at
    `Tensor.backward()` (GB0123 "Unsupported Tensor.backward() call"), runs it eagerly and starts
    a new graph after it; `torch.autograd.backward` is skipped outright (GB0007). The backward
    pass is compiled anyway (by AOTAutograd) when the compiled forward's output is
    differentiated outside.

    ## Example
    ```python
    @torch.compile
    def train_step(model, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss
    ```

    ## Use instead
    ```python
    @torch.compile
    def compute_loss(model, x, y):
        return F.cross_entropy(model(x), y)

    loss = compute_loss(model, x, y)
    loss.backward()
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                target = x.detach() * 0.5
                loss = F.mse_loss(x * 2, target)
                loss.backward()  # break
                return loss.detach()
        """, inputs="torch.randn(8, requires_grad=True)"),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 1)

                def forward(self, x):
                    loss = self.proj(x).pow(2).mean()
                    torch.autograd.backward(loss)  # break
                    return loss.detach()
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                target = x.detach() * 0.5
                return F.mse_loss(x * 2, target)

            def train_step(x):
                loss = fn(x)
                loss.backward()
                return loss
        """, inputs="torch.randn(8, requires_grad=True)"),
        Example("""
            import torch

            class Square(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.save_for_backward(x)
                    return x * x

                @staticmethod
                def backward(ctx, grad):
                    (x,) = ctx.saved_tensors
                    return 2 * x * grad

            @torch.compile
            def fn(x):
                return Square.apply(x) + 1
        """, inputs="torch.randn(8, requires_grad=True)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if ctx.qualname(func) == "torch.autograd.backward":
            ctx.report(self, node)
        elif isinstance(func, cst.Attribute) and func.attr.value == "backward":
            report_on_receiver(self, node, func.value, ctx)
