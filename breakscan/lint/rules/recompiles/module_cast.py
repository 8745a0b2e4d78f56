import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, FunctionRule
from breakscan.lint.semantics.steps import step_code
from breakscan.lint.traverse import find_nodes

# nn.Module methods that cast every parameter and buffer to another dtype (from float32, the default).
CAST_METHODS = frozenset({"half", "bfloat16", "double"})
# torch dtypes other than the default float32, as `torch.<name>`.
OTHER_DTYPES = frozenset({"float16", "half", "bfloat16", "float64", "double", "complex64", "complex128", "int8",
                          "uint8", "int16", "int32", "int64", "long", "int", "short", "bool"})


class ModuleCastBetweenCalls(FunctionRule):
    id = "BR014"
    name = "module-cast-between-calls"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("a step between the declared calls casts the module's parameters to another dtype: TorchDynamo "
               "guards on each parameter's dtype, so the call after the step recompiles")
    fix_hint = "cast the module once, before compiling it (or before its first call), and keep its dtype from then on"
    docs = """
    ## What it does
    Flags a compiled module's `forward` when a step that `BREAKSCAN_TARGETS` declares between its
    calls (`"[x, lambda m: m.half(), x]"`, read, never run) casts the module, or a submodule, to
    another dtype: `m.half()`, `m.bfloat16()`, `m.double()`, `m.to(torch.bfloat16)`,
    `m.to(dtype=...)`, directly, in a module function the step calls with it
    (`lambda m: cast_bf16(m)`), or in a method of the module it calls. Reported where TorchDynamo
    reports the recompile: the compiled function's first line.

    ## Why is this bad?
    TorchDynamo 2.13 guards on the dtype of every parameter and buffer the graph reads (they are
    static inputs). Casting the model after its first compiled call fails those guards, and the next
    call compiles the model again (a warning: once per dtype, each graph stays cached).

    ## Example
    ```python
    model = torch.compile(Net())
    model(x)                       # compiled for float32 weights
    model.to(torch.bfloat16)
    model(x.bfloat16())            # recompiles
    ```

    ## Use instead
    ```python
    model = torch.compile(Net().to(torch.bfloat16))   # cast first: one compile
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class SwiGLU(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w12 = nn.Linear(8, 16, bias=False)
                    self.w3 = nn.Linear(8, 8, bias=False)

                def forward(self, x):  # recompile
                    x = x.to(self.w12.weight.dtype)
                    a, b = self.w12(x).chunk(2, dim=-1)
                    return self.w3(nn.functional.silu(a) * b)

            def cast_bf16(m):
                return m.to(torch.bfloat16)

            BREAKSCAN_TARGETS = {"SwiGLU()": "[torch.randn(2, 8), lambda m: cast_bf16(m), torch.randn(2, 8)]"}
        """, entry="SwiGLU()", inputs="[torch.randn(2, 8), lambda m: cast_bf16(m), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 4)

                def forward(self, x):  # recompile
                    return self.proj(x.to(self.proj.weight.dtype))

            BREAKSCAN_TARGETS = {"Head()": "[torch.randn(2, 8), lambda m: m.double(), torch.randn(2, 8)]"}
        """, entry="Head()", inputs="[torch.randn(2, 8), lambda m: m.double(), torch.randn(2, 8)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 4)

                def forward(self, x):
                    return self.proj(x)

            BREAKSCAN_TARGETS = {"Head()": "[torch.randn(2, 8), lambda m: m.float(), torch.randn(2, 8)]"}
        """, entry="Head()", inputs="[torch.randn(2, 8), lambda m: m.float(), torch.randn(2, 8)]"),
    )

    def check_function(self, ctx) -> None:
        if not ctx.is_root or ctx.function.node.name.value != "forward":
            return
        steps = [code.step for code in step_code(ctx, ctx.function.class_name) if _casts_object(code.node, code.given)]
        if steps:
            ctx.report(self, ctx.function_start, f"`{steps[0]}`, a step BREAKSCAN_TARGETS declares between calls, "
                                                 "casts the module's parameters to another dtype: TorchDynamo guards "
                                                 "on each parameter's dtype, so the call after the step recompiles")


def _casts_object(function: cst.CSTNode, name: str) -> bool:
    """Whether the code casts `name` (or an object it holds) to another dtype."""
    for call in find_nodes(function, (cst.Call,)):
        func = call.func
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if receiver is None or receiver.split(".", 1)[0] != name:
            continue
        method = func.attr.value
        if method in CAST_METHODS and not call.args:
            return True
        if method in ("to", "type") and any(_other_dtype(argument.value) for argument in call.args):
            return True
    return False


def _other_dtype(node: cst.BaseExpression) -> bool:
    """`torch.bfloat16`: a torch dtype other than the default float32."""
    written = dotted_name(node)
    return written is not None and written.startswith("torch.") and written.count(".") == 1 and (
        written[6:] in OTHER_DTYPES)
