import libcst as cst

from breakscan.lint.rule import Example, FunctionRule
from breakscan.lint.semantics.steps import step_code
from breakscan.lint.traverse import find_nodes


class RequiresGradToggled(FunctionRule):
    id = "BR012"
    name = "requires-grad-toggled"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("a step between the declared calls changes `requires_grad` of the module's parameters: TorchDynamo "
               "guards on it for every parameter, so the call after the step recompiles")
    fix_hint = ("expect one compile per frozen/unfrozen state (each is cached), or freeze before compiling and "
                "keep the state from then on")
    docs = """
    ## What it does
    Flags a compiled module's `forward` when a step that `BREAKSCAN_TARGETS` declares between its
    calls (`"[x, lambda m: m.freeze_backbone(False), x]"`, `"[x, freeze_backbone, x]"`; read, never
    run) sets `requires_grad` on parameters (`p.requires_grad_(flag)`, `p.requires_grad = flag`),
    itself, in a function of the module it calls, or in a method of the module or a submodule. Reported where TorchDynamo reports the recompile: the compiled
    function's first line.

    ## Why is this bad?
    TorchDynamo 2.13 guards on each parameter's `requires_grad`: freezing or unfreezing layers
    between calls fails the guard, and the next call compiles again (once per state: both
    compiled graphs stay cached, so switching back and forth reuses them).

    ## Example
    ```python
    model = torch.compile(FineTuner())
    train(model, epochs=2)
    model.freeze_backbone(False)   # unfreeze: the next call recompiles
    train(model, epochs=2)
    ```

    ## Use instead
    Expect the one recompile per state, or keep the parameters' `requires_grad` fixed and stop
    the gradient in `forward` instead (`feats = feats.detach()` while frozen, a Python flag that
    the guard then covers).
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class FineTuner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = nn.Linear(8, 8)
                    self.head = nn.Linear(8, 2)

                def freeze_backbone(self, frozen=True):
                    for p in self.backbone.parameters():
                        p.requires_grad_(not frozen)
                    return self

                def forward(self, x):  # recompile
                    return self.head(self.backbone(x).relu())

            BREAKSCAN_TARGETS = {
                "FineTuner().freeze_backbone(True)": "[torch.ones(2, 8), lambda m: m.freeze_backbone(False), torch.ones(2, 8)]",
            }
        """, entry="FineTuner().freeze_backbone(True)",
            inputs="[torch.ones(2, 8), lambda m: m.freeze_backbone(False), torch.ones(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class AdapterNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = nn.Linear(8, 8)
                    self.adapter = nn.Linear(8, 8)

                def forward(self, x):  # recompile
                    return self.adapter(self.backbone(x).relu())

            def freeze_backbone(model):
                for name, p in model.named_parameters():
                    p.requires_grad_(name.startswith("adapter"))

            BREAKSCAN_TARGETS = {"AdapterNet()": "[torch.ones(2, 8), freeze_backbone, torch.ones(2, 8)]"}
        """, entry="AdapterNet()", inputs="[torch.ones(2, 8), freeze_backbone, torch.ones(2, 8)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class FineTuner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone = nn.Linear(8, 8)
                    self.head = nn.Linear(8, 2)
                    self.scale = 1.0

                def set_scale(self, scale):
                    self.scale = 1.0  # the same value

                def forward(self, x):
                    return self.head(self.backbone(x).relu())

            BREAKSCAN_TARGETS = {"FineTuner()": "[torch.ones(2, 8), lambda m: m.set_scale(2.0), torch.ones(2, 8)]"}
        """, entry="FineTuner()", inputs="[torch.ones(2, 8), lambda m: m.set_scale(2.0), torch.ones(2, 8)]"),
    )

    def check_function(self, ctx) -> None:
        if not ctx.is_root or ctx.function.node.name.value != "forward":
            return
        if ctx.function.class_name is None:
            return
        for code in step_code(ctx, ctx.function.class_name):
            if ctx.memoised(_sets_requires_grad, code.node):
                ctx.report(self, ctx.function_start, f"`{code.step}`, a step BREAKSCAN_TARGETS declares between "
                                                     "calls, changes `requires_grad` of parameters: TorchDynamo "
                                                     "guards on it for every parameter, so the call after the step "
                                                     "recompiles")
                return


def _sets_requires_grad(code: cst.CSTNode) -> bool:
    """`p.requires_grad_(flag)` or `p.requires_grad = flag` in the step's code."""
    for node in find_nodes(code, (cst.Call, cst.Assign)):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "requires_grad_":
            return True
        if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad"
                                                for t in node.targets):
            return True
    return False
