from breakscan.lint.rule import Example, FunctionRule


class VaryingInputShape(FunctionRule):
    id = "BR008"
    name = "varying-input-shape"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the scanned code calls this compiled code with a tensor whose shape changes from call to call: "
               "TorchDynamo specialises input shapes, so the second shape recompiles it (then, with automatic "
               "dynamic shapes, the size becomes dynamic)")
    fix_hint = ("mark the growing dimension dynamic up front (`torch._dynamo.mark_dynamic(x, dim)`), compile with "
                "`dynamic=True`, or pad to a few fixed sizes")
    docs = """
    ## What it does
    Flags a compiled function, or the `forward` of a compiled module, that the scanned code
    calls with a tensor whose shape changes from one call to the next (in the calls
    `BREAKSCAN_TARGETS` declares: `torch.randn(2, 8)`, then `torch.randn(2, 12)`), or in a loop: a slice
    bounded by the loop's int (`model(tokens[:, :t])`), or a tensor the loop grows with
    `torch.cat` (`tokens = torch.cat([tokens, next_token], dim=1)`, as in autoregressive
    decoding). Reported at the function, where TorchDynamo reports a recompile for an input's
    size.

    ## Why is this bad?
    TorchDynamo 2.13 compiles for the shapes of the first call and guards them (`tensor 'x'
    size mismatch at index 1`). By default the first new size recompiles once with that
    dimension dynamic (automatic dynamic shapes): a warning. With `dynamic=False` (or
    `automatic_dynamic_shapes = False`) every new size recompiles, until the recompile limit (8),
    after which the function runs eagerly: an error. A tensor the scanned code passes to
    `torch._dynamo.mark_dynamic` is compiled dynamic from the start, and under `dynamic=True`
    nothing is flagged
    (a size that starts at 0 or 1 is still specialised, and recompiles once when it grows).

    ## Example
    ```python
    decode = torch.compile(model, dynamic=False)
    for t in range(max_new_tokens):
        logits = decode(tokens)
        tokens = torch.cat([tokens, logits[:, -1:].argmax(-1)], dim=1)
    ```

    ## Use instead
    ```python
    decode = torch.compile(model)
    torch._dynamo.mark_dynamic(tokens, 1)   # compiled once for any length
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(16, 16)

                def forward(self, x):  # recompile
                    return self.proj(x).relu()

            BREAKSCAN_TARGETS = {"Encoder()": "[torch.randn(2, 8, 16), torch.randn(2, 12, 16)]"}
        """, entry="Encoder()", inputs="[torch.randn(2, 8, 16), torch.randn(2, 12, 16)]"),
        Example("""
            import torch

            @torch.compile(backend="eager")  # recompile
            def decode(tokens):
                return tokens.float().mean(dim=-1)

            def fn(x):
                tokens = torch.zeros(1, 1, dtype=torch.long)
                for _ in range(4):
                    decode(tokens)
                    tokens = torch.cat([tokens, tokens[:, -1:] + 1], dim=1)
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Pool(nn.Module):
                def forward(self, x):  # recompile
                    return x.mean(dim=0)

            def fn(x):
                pool = torch.compile(Pool(), backend="eager", dynamic=False)
                for t in range(1, 5):
                    pool(x[:t])
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class LanguageModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(16, 8)
                    self.head = nn.Linear(8, 16)

                def forward(self, tokens):  # recompile
                    return self.head(self.embed(tokens))

            def fn(x):
                model = torch.compile(LanguageModel(), backend="eager", dynamic=False)
                tokens = torch.zeros(1, 2, dtype=torch.long)
                with torch.no_grad():
                    while tokens.shape[1] < 5:
                        next_token = model(tokens)[:, -1:].argmax(-1)
                        tokens = torch.cat([tokens, next_token], dim=1)
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.embed = nn.Embedding(64, 8)

                def forward(self, tokens):  # recompile
                    return self.embed(tokens).mean(1)

            BREAKSCAN_TARGETS = {"Decoder()": "[torch.randint(0, 64, (1, 5)), torch.tensor([[3]])]"}
        """, entry="Decoder()", inputs="[torch.randint(0, 64, (1, 5)), torch.tensor([[3]])]"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile(backend="eager", dynamic=True)
            def decode(tokens):
                return tokens.float().mean(dim=-1)

            def fn(x):
                tokens = torch.zeros(1, 2, dtype=torch.long)  # sizes 0 and 1 are specialised even so
                for _ in range(4):
                    decode(tokens)
                    tokens = torch.cat([tokens, tokens[:, -1:] + 1], dim=1)
                return x
        """, compiled=False),
        Example("""
            import torch

            @torch.compile(backend="eager")
            def decode(tokens):
                return tokens.float().mean(dim=-1)

            def fn(x):
                tokens = torch.zeros(1, 2, dtype=torch.long)
                torch._dynamo.mark_dynamic(tokens, 1)
                for _ in range(4):
                    decode(tokens)
                    tokens = torch.cat([tokens, tokens[:, -1:] + 1], dim=1)
                return x
        """, compiled=False),
        Example("""
            import torch

            @torch.compile(backend="eager")
            def total(x):
                return x.sum()

            def fn(x):
                for t in range(1, 5):
                    total(x[:4] * t)
                return x
        """, compiled=False),
    )

    def check_function(self, ctx) -> None:
        shaped = ctx.entry_in(ctx.call_sites.varying_shapes)
        if shaped is None or shaped[1] == "True":
            return
        call, dynamic = shaped
        if dynamic == "False" or not ctx.dynamo.enabled("automatic_dynamic_shapes"):
            ctx.report(self, ctx.function_start, f"the scanned code calls this compiled code in a loop with a tensor "
                                                f"whose shape the loop changes (`{call}`), and it is compiled static: "
                                                "every new size recompiles it, until the recompile limit "
                                                f"({ctx.dynamo.number('recompile_limit')}), then "
                                                "it runs eagerly", severity="error")
        else:
            ctx.report(self, ctx.function_start, f"{self.message} (`{call}`)")
