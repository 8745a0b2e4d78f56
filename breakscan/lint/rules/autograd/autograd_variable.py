import libcst as cst

from breakscan.lint.rule import Example, Rule

VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})


class AutogradVariable(Rule):
    id = "BS708"
    name = "autograd-variable"
    gb_ids = ("GB0007",)
    message = "`torch.autograd.Variable(...)` is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "drop the wrapper: tensors are Variables since PyTorch 0.4 (use the tensor, or .detach())"
    docs = """
    ## What it does
    Flags the legacy `Variable(...)` / `torch.autograd.Variable(...)` wrapper in compiled code.

    ## Why is this bad?
    `Variable` has been a no-op alias since PyTorch 0.4, but TorchDynamo 2.13 does not trace its
    constructor (GB0007 "Attempted to call function marked as skipped"): older code that wraps
    hidden states or masks in `Variable` in `forward` breaks the graph there.

    ## Example
    ```python
    hidden = Variable(torch.zeros(self.layers, batch, self.size))
    ```

    ## Use instead
    ```python
    hidden = torch.zeros(self.layers, batch, self.size, device=x.device)
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch.autograd import Variable

            @torch.compile
            def fn(x):
                y = x * 2
                hidden = Variable(torch.zeros(8))  # break
                return y + hidden
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                hidden = torch.zeros(8, device=x.device)
                return x * 2 + hidden.detach()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in VARIABLE:
            ctx.report(self, node)
