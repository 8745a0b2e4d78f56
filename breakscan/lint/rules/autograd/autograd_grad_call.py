import libcst as cst

from breakscan.lint.rule import Example, Rule

# torch.autograd.grad: GB9186 (trace_autograd_ops=False); the functional API: GB0055.
GRAD_CALLS = {
    "torch.autograd.grad": "GB9186",
    "torch.autograd.functional.jacobian": "GB0055",
    "torch.autograd.functional.hessian": "GB0055",
    "torch.autograd.functional.vjp": "GB0055",
    "torch.autograd.functional.jvp": "GB0055",
}


class AutogradGradCall(Rule):
    id = "BS702"
    name = "autograd-grad-call"
    gb_ids = ("GB9186", "GB0055")
    message = "`torch.autograd.grad` / `torch.autograd.functional` cannot be traced: the graph breaks here"
    fix_hint = "use torch.func.grad / torch.func.vjp / torch.func.jacrev, which TorchDynamo traces"
    docs = """
    ## What it does
    Flags `torch.autograd.grad(...)` and `torch.autograd.functional.jacobian/hessian/vjp/jvp(...)`
    in compiled code (gradient penalties, physics-informed losses, input-gradient saliency).

    ## Why is this bad?
    With the default `torch._dynamo.config.trace_autograd_ops=False`, TorchDynamo 2.13 ends the
    graph at `torch.autograd.grad` (GB9186) and runs it eagerly; the `torch.autograd.functional`
    helpers fail to trace their arguments (GB0055). `torch.func` transforms are traced.

    ## Example
    ```python
    (grad,) = torch.autograd.grad(energy.sum(), positions, create_graph=True)
    ```

    ## Use instead
    ```python
    grad = torch.func.grad(lambda p: energy_fn(p).sum())(positions)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                energy = (x * x).sum()
                (grad,) = torch.autograd.grad(energy, x, create_graph=True)  # break
                return grad
        """, inputs="torch.randn(8, requires_grad=True)"),
        Example("""
            import torch
            from torch.autograd.functional import jacobian

            @torch.compile
            def fn(x):
                y = x + 1
                return jacobian(lambda t: t.sin() * 2, y)  # break
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return torch.func.grad(lambda t: (t * t).sum())(x)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                grad = x.grad
                return x * 2 if grad is None else x - grad
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in GRAD_CALLS:
            ctx.report(self, node)
