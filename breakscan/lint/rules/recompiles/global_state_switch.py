import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, FunctionRule
from breakscan.lint.semantics.steps import step_code
from breakscan.lint.traverse import find_nodes

# Calls that switch grad mode or autocast globally, from then on (not as a `with` block).
_STATE_SETTERS = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                            "torch.autograd.grad_mode.set_grad_enabled", "torch.set_autocast_enabled",
                            "torch.set_autocast_cpu_enabled"})


class GlobalStateSwitch(FunctionRule):
    id = "BR005"
    name = "global-state-switch"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the scanned code calls this compiled function both inside `torch.no_grad()` (or "
               "`inference_mode`, `torch.autocast`) and outside it: TorchDynamo guards on grad mode and "
               "autocast, so the first call in the other state compiles it again")
    fix_hint = "call it in one grad mode and autocast state, or expect one compile per state (later calls reuse both)"
    docs = """
    ## What it does
    Flags a compiled function, or the `forward` of a compiled module, that the scanned code
    calls through its compiled handle both inside `with torch.no_grad():` (or
    `torch.inference_mode()`, `torch.set_grad_enabled(False)`, `torch.autocast(...)`) and outside
    it; or whose calls `BREAKSCAN_TARGETS` declares with a step between them that switches grad
    mode or autocast from then on (`torch.set_grad_enabled(False)`). Reported at the function,
    where TorchDynamo reports the recompile.

    ## Why is this bad?
    Grad mode and autocast are part of the global state TorchDynamo guards (`GLOBAL_STATE
    changed: grad_mode`, `autocast(cpu)_enabled`): the first call in the other state compiles
    the function again. Both versions are kept, so later switches cost nothing, but the second
    state costs a full compile and counts towards the recompile limit (8) with every other
    guard that fails.

    ## Example
    ```python
    compiled = torch.compile(model)
    loss = criterion(compiled(x), y)        # with grad
    with torch.no_grad():
        preview = compiled(x)               # compiles again
    ```

    ## Use instead
    Expect one compile per mode, or evaluate with the uncompiled model when it is rare.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 2)

                def forward(self, x):  # recompile
                    return self.lin(x)

            def fn(x):
                head = torch.compile(Head(), backend="eager")
                out = head(x)
                with torch.no_grad():
                    out = head(x)
                return out
        """, compiled=False),
        Example("""
            import torch

            def score(x, w):  # recompile
                return (x * w).sum()

            fast_score = torch.compile(score, backend="eager")

            def fn(x):
                w = torch.ones(8, requires_grad=True)
                with torch.inference_mode():
                    fast_score(x, w)
                return fast_score(x, w)
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 2)

                def forward(self, x):  # recompile
                    return self.lin(x)

            def fn(x):
                head = torch.compile(Head(), backend="eager")
                out = head(x)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    head(x)
                return out
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Renderer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.mlp = nn.Linear(3, 4)

                def forward(self, rays):  # recompile
                    return self.mlp(rays).sigmoid()

            def start_validation(model):
                torch.set_grad_enabled(False)  # for every call from here on

            BREAKSCAN_TARGETS = {"Renderer()": "[torch.randn(8, 3), start_validation, torch.randn(8, 3)]"}
        """, entry="Renderer()", inputs="[torch.randn(8, 3), start_validation, torch.randn(8, 3)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 2)

                def forward(self, x):
                    return self.lin(x)

            def fn(x):
                head = torch.compile(Head(), backend="eager")
                with torch.no_grad():
                    head(x)
                    out = head(x)
                return out
        """, compiled=False),
    )

    def check_function(self, ctx) -> None:
        calls = ctx.entry_in(ctx.call_sites.state_switches)
        if calls is None and ctx.is_root and ctx.function.node.name.value == "forward" and ctx.function.class_name:
            switched = [code.step for code in step_code(ctx, ctx.function.class_name) for call in find_nodes(
                code.node, (cst.Call,)) if code.module.qualify(dotted_name(call.func)) in _STATE_SETTERS]
            if switched:
                ctx.report(self, ctx.function_start, f"`{switched[0]}`, a step BREAKSCAN_TARGETS declares between "
                                                     "calls, switches grad mode or autocast for the calls after it: "
                                                     "TorchDynamo guards on both, so the next call compiles it again")
        if calls is not None:
            inside, outside = calls
            ctx.report(self, ctx.function_start, f"the scanned code calls this compiled code inside no-grad or autocast "
                                                f"(`{inside}`) and outside (`{outside}`): TorchDynamo guards on grad "
                                                "mode and autocast, so the first call in the other state compiles it "
                                                "again (once; later calls reuse both)")
