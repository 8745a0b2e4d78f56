from breakscan.lint.rule import Example, FunctionRule


class VaryingInputDtype(FunctionRule):
    id = "BR015"
    name = "varying-input-dtype"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the declared calls give this compiled code a tensor of another dtype from call to call: TorchDynamo "
               "guards on each input's dtype, so every new dtype recompiles it")
    fix_hint = "cast the input to one dtype before the call (`x.float()`), or expect one compile per dtype"
    docs = """
    ## What it does
    Flags a compiled function, or the `forward` of a compiled module, that the calls
    `BREAKSCAN_TARGETS` declares give a tensor whose dtype changes from one call to the next, as
    written (`torch.randn(1, 8)`, then `torch.randn(1, 8, dtype=torch.float64)`, then
    `torch.randn(1, 8).bfloat16()`; read, never run). Reported at the function, where TorchDynamo
    reports a recompile for an input's dtype.

    ## Why is this bad?
    TorchDynamo 2.13 guards on the dtype of every tensor input (`tensor 'x' dtype mismatch.
    expected Float, actual Double`). Unlike a size, a dtype is never made dynamic: each new dtype
    compiles the function again (a warning: each graph stays cached, so a few dtypes cost a few
    compiles; more than the recompile limit (8) and the function runs eagerly).

    ## Example
    ```python
    model = torch.compile(Block())
    model(x)            # float32
    model(x.double())   # recompiles
    ```

    ## Use instead
    ```python
    model(x.to(torch.float32))   # one dtype at the compiled boundary
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = nn.Parameter(torch.ones(8))

                def forward(self, x):  # recompile
                    return x * self.scale.to(x.dtype)

            BREAKSCAN_TARGETS = {"Block()": "[torch.randn(2, 8), torch.randn(2, 8, dtype=torch.float64)]"}
        """, entry="Block()", inputs="[torch.randn(2, 8), torch.randn(2, 8, dtype=torch.float64)]"),
        Example("""
            import numpy as np
            import torch

            def normalise(series):  # recompile
                return (series - series.mean(1, keepdim=True)) / (series.std(1, keepdim=True) + 1e-5)

            BREAKSCAN_TARGETS = {"normalise": "[torch.randn(2, 8), torch.from_numpy(np.random.randn(2, 8))]"}
        """, entry="normalise", inputs="[torch.randn(2, 8), torch.from_numpy(np.random.randn(2, 8))]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = nn.Parameter(torch.ones(8))

                def forward(self, x):
                    return x * self.scale

            BREAKSCAN_TARGETS = {"Block()": "[torch.randn(2, 8), torch.randn(2, 8).float()]"}
        """, entry="Block()", inputs="[torch.randn(2, 8), torch.randn(2, 8).float()]"),
        Example("""
            import numpy as np
            import torch

            def normalise(series):
                return (series - series.mean(1, keepdim=True)) / (series.std(1, keepdim=True) + 1e-5)

            BREAKSCAN_TARGETS = {"normalise": "[torch.randn(2, 8), torch.from_numpy(np.random.randn(2, 8).astype(np.float32))]"}
        """, entry="normalise", inputs="[torch.randn(2, 8), torch.from_numpy(np.random.randn(2, 8).astype(np.float32))]"),
    )

    def check_function(self, ctx) -> None:
        typed = ctx.entry_in(ctx.call_sites.varying_dtypes)
        if typed is not None:
            calls, dtypes = typed
            ctx.report(self, ctx.function_start, f"the declared calls give this compiled code a tensor of another dtype "
                                                 f"from call to call ({', '.join(dict.fromkeys(dtypes))}: `{calls}`): "
                                                 "TorchDynamo guards on each input's dtype, so every new dtype "
                                                 "recompiles it")
