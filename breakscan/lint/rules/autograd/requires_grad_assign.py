import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.receivers import report_on_receiver


class RequiresGradAssign(Rule):
    id = "BS704"
    name = "requires-grad-assign"
    gb_ids = ("GB0206",)
    message = "assigning `tensor.requires_grad` is not supported by TorchDynamo: the graph breaks here"
    fix_hint = "set requires_grad before calling the compiled code (freeze parameters once after building the model)"
    docs = """
    ## What it does
    Flags assignments to `.requires_grad` of a tensor or parameter (`p.requires_grad = False`)
    in compiled code.

    ## Why is this bad?
    TorchDynamo 2.13 does not support `setattr` on `Tensor.requires_grad` (GB0206): mutating
    the flag could turn a non-leaf into a leaf in the middle of the graph, which AOTAutograd
    cannot handle. The graph ends at the assignment; in a loop over `parameters()` the whole
    function is skipped (GB7000). Reading `x.requires_grad` is fine.

    ## Example
    ```python
    def forward(self, x):
        for p in self.encoder.parameters():
            p.requires_grad = self.finetune_encoder
        ...
    ```

    ## Use instead
    Freeze or unfreeze once, outside `forward` (when the training phase changes), then call
    the compiled model.
    """
    invalid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = torch.nn.Parameter(torch.ones(8))

                def forward(self, x):
                    y = x.sin()
                    self.scale.requires_grad = False  # break
                    return y * self.scale
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x + 1
                x.requires_grad = True  # break
                return y * x
        """),
    )
    valid = (
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = torch.nn.Parameter(torch.ones(8))
                    self.requires_grad = True

                def forward(self, x):
                    self.requires_grad = False
                    trainable = self.scale.requires_grad
                    return x * self.scale if trainable else x
        """, entry="Model()"),
    )

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            self._check(target.target, ctx)

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self._check(node.target, ctx)

    def _check(self, target: cst.BaseExpression, ctx) -> None:
        if not (isinstance(target, cst.Attribute) and target.attr.value == "requires_grad"):
            return
        report_on_receiver(self, target, target.value, ctx)
