import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.receivers import report_on_receiver


class RetainGrad(Rule):
    id = "BS706"
    name = "retain-grad"
    gb_ids = ("GB0108",)
    message = "`.retain_grad()` is not supported under torch.compile: TorchDynamo skips the whole function"
    fix_hint = "return the intermediate from the compiled function and call retain_grad() on it outside"
    docs = """
    ## What it does
    Flags `tensor.retain_grad()` in compiled code.

    ## Why is this bad?
    AOTAutograd cannot keep `.grad` of an intermediate of its graph, so TorchDynamo 2.13 gives
    up on the frame (GB0108 "Tensor.retain_grad() with AOTDispatcher"): not a simple break but a
    skip, the whole function runs eagerly on every call.

    ## Example
    ```python
    hidden = self.encoder(x)
    hidden.retain_grad()
    self.saved_hidden = hidden
    ```

    ## Use instead
    Return `hidden` from the compiled function and call `hidden.retain_grad()` on the result
    outside, or capture the gradient with `hidden.register_hook(...)`, which is traced.
    """
    invalid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = torch.nn.Linear(8, 8)
                    self.head = torch.nn.Linear(8, 1)

                def forward(self, x):
                    hidden = self.encoder(x)
                    hidden.retain_grad()  # break
                    return self.head(hidden)
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = torch.nn.Linear(8, 8)
                    self.head = torch.nn.Linear(8, 1)

                def forward(self, x):
                    hidden = self.encoder(x)
                    hidden.register_hook(lambda grad: grad * 0.5)
                    return self.head(hidden)
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "retain_grad":
            report_on_receiver(self, node, func.value, ctx)
