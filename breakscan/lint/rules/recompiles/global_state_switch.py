import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, FunctionRule
from breakscan.lint.semantics.steps import step_code
from breakscan.lint.traverse import find_nodes

# Calls that switch the global state TorchDynamo guards (`GLOBAL_STATE changed: ...`, each probed)
# from then on, not as a `with` block: grad mode, autocast, deterministic algorithms, the default
# dtype, the number of threads, TF32 matmuls.
_STATE_SETTERS = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                            "torch.autograd.grad_mode.set_grad_enabled", "torch.set_autocast_enabled",
                            "torch.set_autocast_cpu_enabled", "torch.use_deterministic_algorithms",
                            "torch.set_default_dtype", "torch.set_num_threads", "torch.set_float32_matmul_precision"})
# Flags of the same global state, set by assignment (`torch.backends.cuda.matmul.allow_tf32 = True`).
_STATE_FLAGS = frozenset({"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
                          "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                          "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"})


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
    mode or autocast from then on (`torch.set_grad_enabled(False)`), or the other global state
    TorchDynamo guards: `torch.use_deterministic_algorithms`, `torch.set_default_dtype`,
    `torch.set_num_threads`, `torch.set_float32_matmul_precision`, and the TF32 and
    reduced-precision flags of `torch.backends`. Reported at the function, where TorchDynamo
    reports the recompile.

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
        Example("""
            import torch
            from torch import nn

            class Retriever(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def make_reproducible(self):
                    torch.use_deterministic_algorithms(True, warn_only=True)
                    return self

                def forward(self, x):  # recompile
                    return self.proj(x).topk(2, dim=-1).values

            BREAKSCAN_TARGETS = {"Retriever()": "[torch.randn(2, 8), lambda m: m.make_reproducible(), torch.randn(2, 8)]"}
        """, entry="Retriever()", inputs="[torch.randn(2, 8), lambda m: m.make_reproducible(), torch.randn(2, 8)]"),
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
            switched = [code.step for code in step_code(ctx, ctx.function.class_name) for node in find_nodes(
                code.node, (cst.Call, cst.AssignTarget)) if _switches_state(node, code.module)]
            if switched:
                ctx.report(self, ctx.function_start, f"`{switched[0]}`, a step BREAKSCAN_TARGETS declares between "
                                                     "calls, switches global state TorchDynamo guards (grad mode, "
                                                     "autocast, deterministic algorithms, the default dtype, threads, "
                                                     "TF32) for the calls after it: the next call compiles it again")
        if calls is not None:
            inside, outside = calls
            ctx.report(self, ctx.function_start, f"the scanned code calls this compiled code inside no-grad or autocast "
                                                f"(`{inside}`) and outside (`{outside}`): TorchDynamo guards on grad "
                                                "mode and autocast, so the first call in the other state compiles it "
                                                "again (once; later calls reuse both)")


def _switches_state(node: cst.CSTNode, module) -> bool:
    """`torch.use_deterministic_algorithms(True)`, `torch.backends.cudnn.allow_tf32 = False`."""
    if isinstance(node, cst.Call):
        return module.qualify(dotted_name(node.func)) in _STATE_SETTERS
    return isinstance(node, cst.AssignTarget) and module.qualify(dotted_name(node.target)) in _STATE_FLAGS
