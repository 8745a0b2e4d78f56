import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.rules.io._debug import SkipsDebugBranches

WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


class WarningsWarn(SkipsDebugBranches, Rule):
    id = "BS404"
    name = "warnings-warn"
    gb_ids = ("GB0007",)
    message = "`warnings.warn` is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "warn outside the compiled code (e.g. in __init__), or add warnings.warn to torch._dynamo.config.reorderable_logging_functions"
    docs = """
    ## What it does
    Flags `warnings.warn(...)` and `warnings.warn_explicit(...)` in compiled code (deprecation
    notices in `forward` are the usual case). Calls under an `if self.verbose:` / `if debug:`
    flag are left alone.

    ## Why is this bad?
    `warnings.warn` is on TorchDynamo's skip list: calling it ends the graph, the call runs
    eagerly and a new graph starts after it (GB0007 "Attempted to call function marked as
    skipped"). It breaks on every call that reaches it, even when the warning filter would
    hide the message.

    ## Example
    ```python
    if past is not None:
        warnings.warn("`past` is deprecated, use `past_key_values`", FutureWarning)
    ```

    ## Use instead
    Check arguments and warn before entering the compiled function, or let TorchDynamo defer the
    call until after the graph:
    ```python
    torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)   # once, at start-up
    ```
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
            from warnings import warn

            @torch.compile
            def fn(x, scale=None):
                if scale is None:
                    warn("scale not given, using 1.0")  # break
                    scale = 1.0
                return x * scale
        """),
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
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self, debug=False):
                    super().__init__()
                    self.debug = debug

                def forward(self, x):
                    if self.debug:
                        import warnings
                        warnings.warn("debug mode")
                    return x * 2
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in WARN_FUNCTIONS and not self.in_debug_branch(node):
            ctx.report(self, node)
