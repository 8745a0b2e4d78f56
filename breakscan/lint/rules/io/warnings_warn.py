import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import WHEN_REACHED, in_conditional_branch, in_debug_branch

WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


class WarningsWarn(Rule):
    id = "BS404"
    name = "warnings-warn"
    gb_ids = ("GB0007",)
    message = "`warnings.warn` is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "warn outside the compiled code (e.g. in __init__, or before calling the compiled function)"
    docs = """
    ## What it does
    Flags `warnings.warn(...)` and `warnings.warn_explicit(...)` that run on every call of
    compiled code (a deprecation notice at the top of `forward` is the usual case). A warning
    inside an `if`/`else` or an `except` handler fires only on unusual input, and TorchDynamo never
    traces a branch that is not taken: it is reported as a warning, since it breaks only when that
    branch runs.

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
            import warnings
            from functools import partial

            import torch

            future_warning = partial(warnings.warn, category=FutureWarning)

            @torch.compile
            def fn(x):
                y = x * 2
                future_warning("fn() is deprecated")  # break
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
        # In a branch: a warning (it breaks when the branch runs, as here, where a mask is passed).
        Example("""
            import warnings
            import torch

            @torch.compile
            def fn(x, head_mask=None):
                if head_mask is not None:
                    warnings.warn("head_mask is deprecated", FutureWarning)  # break
                    x = x * head_mask
                return x * 2
        """, inputs="(torch.randn(8), torch.ones(8))"),
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
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) not in WARN_FUNCTIONS or in_debug_branch(ctx):
            return
        if in_conditional_branch(ctx):  # it fires on unusual input: it breaks only then
            ctx.report(self, node, self.message + WHEN_REACHED, severity="warning")
        else:
            ctx.report(self, node)
