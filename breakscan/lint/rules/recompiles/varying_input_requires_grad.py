from breakscan.lint.rule import DeclaredCallsRule, Example


class VaryingInputRequiresGrad(DeclaredCallsRule):
    id = "BR019"
    name = "varying-input-requires-grad"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    call_sites_table = "varying_grads"
    message = ("the declared calls give this compiled code a tensor that requires grad on some calls and not on "
               "others: TorchDynamo guards on each input's `requires_grad`, so the other setting recompiles it")
    fix_hint = ("give the compiled code inputs of one kind (`x.detach()` or `x.requires_grad_()` before the call), "
                "or expect one compile per setting (both stay cached)")
    docs = """
    ## What it does
    Flags a compiled function, or the `forward` of a compiled module, that the calls
    `BREAKSCAN_TARGETS` declares give a tensor that requires grad on some calls only, as written
    (`torch.randn(4, 8)`, then `torch.randn(4, 8).requires_grad_()`, or a factory's
    `requires_grad=True`; read, never run). Reported at the function, where TorchDynamo reports a
    recompile for an input's `requires_grad`.

    ## Why is this bad?
    TorchDynamo 2.13 guards on the `requires_grad` of every tensor input (`tensor 'x'
    requires_grad mismatch. expected requires_grad=0`): a critic called on real samples, then on
    interpolated ones for a gradient penalty, compiles twice. Both graphs stay cached, so it is
    one extra compile (a warning).

    ## Example
    ```python
    critic = torch.compile(Critic())
    critic(real)                                   # requires_grad=False
    critic(mixed.requires_grad_())                 # recompiles
    ```

    ## Use instead
    Call the compiled code with inputs of one kind, or accept the second compile.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Critic(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)

                def forward(self, x):  # recompile
                    return self.fc(x).mean()

            BREAKSCAN_TARGETS = {"Critic()": "[torch.randn(4, 8), torch.randn(4, 8).requires_grad_()]"}
        """, entry="Critic()", inputs="[torch.randn(4, 8), torch.randn(4, 8).requires_grad_()]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Critic(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 1)

                def forward(self, x):
                    return self.fc(x).mean()

            BREAKSCAN_TARGETS = {"Critic()": "[torch.randn(4, 8).requires_grad_(), torch.randn(4, 8, requires_grad=True)]"}
        """, entry="Critic()", inputs="[torch.randn(4, 8).requires_grad_(), torch.randn(4, 8, requires_grad=True)]"),
    )
