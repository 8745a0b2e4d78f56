import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import BranchAware

WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


class WarningsWarn(BranchAware, Rule):
    id = "BS404"
    name = "warnings-warn"
    gb_ids = ("GB0007",)
    message = "`warnings.warn` is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "warn outside the compiled code (e.g. in __init__, or before calling the compiled function)"
    docs = """
    ## What it does
    Flags `warnings.warn(...)` and `warnings.warn_explicit(...)` that run on every call of
    compiled code (a deprecation notice at the top of `forward` is the usual case). A warning
    inside an `if`/`else` or an `except` handler is left alone: it fires only on unusual input,
    and TorchDynamo never traces a branch that is not taken.

    ## Why is this bad?
    `warnings.warn` is on TorchDynamo's skip list: calling it ends the graph, the call runs
    eagerly and a new graph starts after it (GB0007 "Attempted to call function marked as
    skipped"). It breaks on every call that reaches it, even when the warning filter would
    hide the message.

    ## Example
    ```python
    def forward(self, x):
        warnings.warn("OldBlock is deprecated, use NewBlock", FutureWarning)
        return self.net(x)
    ```

    ## Use instead
    Check arguments and warn before entering the compiled function (in `__init__`, or in the code
    that calls the model). TorchDynamo 2.13 breaks on `warnings.warn` whatever
    `reorderable_logging_functions` or `ignore_logging_functions` hold: it is a C function that
    TorchDynamo skips.
    """
    invalid = (
        Example("""
            import warnings
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                warnings.warn("fn() is deprecated", DeprecationWarning)  # break
                return y + 1
        """),
        Example("""
            import torch
            from torch import nn
            from warnings import warn

            class OldBlock(nn.Module):
                def forward(self, x):
                    warn("OldBlock is deprecated, use NewBlock", FutureWarning)  # break
                    return x * 2
        """, entry="OldBlock()"),
    )
    valid = (
        Example("""
            import warnings
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self, legacy=True):
                    super().__init__()
                    if legacy:
                        warnings.warn("legacy mode is deprecated", FutureWarning)
                    self.scale = 2.0

                def forward(self, x):
                    return x * self.scale
        """, entry="Model()"),
        Example("""
            import warnings
            import torch

            @torch.compile
            def fn(x, head_mask=None):
                if head_mask is not None:
                    warnings.warn("head_mask is deprecated", FutureWarning)
                    x = x * head_mask
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        # A warning inside `if`/`except` fires on unusual input only: TorchDynamo rarely meets it.
        if ctx.qualname(node.func) in WARN_FUNCTIONS and not self.in_conditional_branch(node, ctx):
            ctx.report(self, node)
