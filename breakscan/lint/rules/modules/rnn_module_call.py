import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

# Dynamo refuses to wrap these (GB0014) unless torch._dynamo.config.allow_rnn=True; the *Cell
# variants are traced.
RNN_CLASSES = frozenset(
    {"torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM", "torch.nn.modules.rnn.RNN", "torch.nn.modules.rnn.GRU",
     "torch.nn.modules.rnn.LSTM"}
)


class RnnModuleCall(Rule):
    id = "BS804"
    name = "rnn-module-call"
    gb_ids = ("GB0014",)
    message = ("TorchDynamo does not trace nn.RNN/GRU/LSTM: the graph ends at the call and the rest of the function "
               "runs eagerly")
    fix_hint = "set torch._dynamo.config.allow_rnn = True, or unroll with nn.LSTMCell/GRUCell, or compile around the RNN"
    captured_by = ("allow_rnn",)
    skips_frame = True  # the wrapping fails at the attribute's load, where TorchDynamo cannot resume
    docs = """
    ## What it does
    Flags calls to `nn.RNN`, `nn.GRU` and `nn.LSTM` submodules (`self.lstm(x)`) in compiled code.

    ## Why is this bad?
    With the default `torch._dynamo.config.allow_rnn=False`, TorchDynamo 2.13 refuses to wrap
    these modules (GB0014 "Attempted to wrap RNN, GRU, or LSTM") and cannot resume after them:
    it compiles the `forward` that calls the RNN up to the call and runs the rest of it eagerly,
    on every call.
    What follows the call in that function then runs eagerly too and does not break (a second
    RNN call there included): breakscan reports the first.
    The cell modules (`nn.LSTMCell`, `nn.GRUCell`, `nn.RNNCell`) are traced and not flagged.

    ## Example
    ```python
    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.decoder(out)
    ```

    ## Use instead
    ```python
    torch._dynamo.config.allow_rnn = True   # experimental support
    ```
    or compile the parts around the RNN separately and call the RNN eagerly between them.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm = nn.LSTM(8, 8, batch_first=True)
                    self.back = nn.LSTM(8, 8, batch_first=True)
                    self.decoder = nn.Linear(8, 4)

                def forward(self, x):
                    h = torch.tanh(x)
                    out, _ = self.lstm(h)  # break
                    out, _ = self.back(out)  # eager: TorchDynamo skipped the frame at the first call
                    return self.decoder(out)
        """, entry="Model()", inputs="torch.randn(2, 3, 8)"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            torch._dynamo.config.allow_rnn = True

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn = nn.GRU(8, 8, batch_first=True)

                def forward(self, x):
                    output, _ = self.rnn(x)
                    return output
        """, entry="Model()", inputs="torch.randn(2, 3, 8)"),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cell = nn.GRUCell(8, 8)
                    self.decoder = nn.Linear(8, 4)

                def forward(self, x):
                    h = torch.zeros(x.shape[0], 8)
                    for t in range(x.shape[1]):
                        h = self.cell(x[:, t], h)
                    return self.decoder(h)
        """, entry="Model()", inputs="torch.randn(2, 3, 8)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        value = ctx.value(node.func)
        if isinstance(value, v.ModuleValue) and value.classes & RNN_CLASSES:
            ctx.report(self, node)
