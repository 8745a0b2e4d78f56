import libcst as cst

from breakscan.lint.rule import Example, Rule

# torch.nn layers that create nn.Parameters with their default arguments (verified: GB0264).
# Parameter-free layers (ReLU, Dropout, pooling, Flatten, losses, Sequential of those) are traced.
ALWAYS_PARAMETERISED = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
        "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "Embedding", "EmbeddingBag", "RNN", "LSTM",
        "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention", "PReLU", "Transformer",
        "TransformerEncoderLayer", "TransformerDecoderLayer", "Embedding.from_pretrained",
        "EmbeddingBag.from_pretrained",
    )
)
# Normalisation layers: parameterised unless their affine flag is passed as False.
AFFINE_FLAG = {
    **{f"torch.nn.{name}": "elementwise_affine" for name in ("LayerNorm", "RMSNorm")},
    **{f"torch.nn.{name}": "affine" for name in (
        "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
        "LazyBatchNorm2d", "LazyBatchNorm3d",
    )},
}


def _canonical(qualified: str) -> str:
    """`torch.nn.modules.linear.Linear` -> `torch.nn.Linear`."""
    if qualified.startswith("torch.nn.modules."):
        parts = qualified.split(".")
        return "torch.nn." + ".".join(parts[4:])
    return qualified


class ModuleConstruction(Rule):
    id = "BS801"
    name = "module-construction"
    gb_ids = ("GB0264", "GB0208")
    message = "building an nn layer with parameters inside compiled code creates nn.Parameters: the graph breaks here"
    fix_hint = "build the layer once in __init__ (self.proj = nn.Linear(...)) and call it in forward"
    docs = """
    ## What it does
    Flags construction of `torch.nn` layers that own parameters (`nn.Linear`, `nn.Conv2d`,
    `nn.Embedding`, `nn.LayerNorm`, `nn.BatchNorm2d`, `nn.LSTM`, `nn.MultiheadAttention`...) in
    compiled code, including the lazy-init pattern `if not hasattr(self, "proj"): self.proj = nn.Linear(...)`.

    ## Why is this bad?
    The layer's `__init__` creates `nn.Parameter`s, and TorchDynamo 2.13 does not trace the
    Parameter constructor (GB0264; GB0208 for the `LazyBatchNorm*` layers): the graph ends where
    the layer is built. Besides, a layer built in `forward` gets fresh random weights on every
    call and is never trained.
    Parameter-free layers (`nn.ReLU()`, `nn.Dropout()`, pooling, losses) and normalisation built
    with `affine=False` / `elementwise_affine=False` are traced and not flagged.

    ## Example
    ```python
    def forward(self, x):
        proj = nn.Linear(x.shape[-1], self.dim)
        return proj(x)
    ```

    ## Use instead
    ```python
    def __init__(self, in_dim, dim):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim)      # or nn.LazyLinear(dim)

    def forward(self, x):
        return self.proj(x)
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, x):
                    y = x * 2
                    proj = nn.Linear(8, 8)  # break
                    return proj(y)
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    if not hasattr(self, "norm"):
                        self.norm = nn.LayerNorm(8)  # break
                    return self.norm(x)
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    act = nn.GELU()
                    drop = nn.Dropout(0.1)
                    norm = nn.LayerNorm(8, elementwise_affine=False)
                    return drop(act(norm(self.proj(x))))
        """, entry="Model()"),
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, x):
                    pool = nn.MaxPool1d(2)
                    loss = nn.MSELoss()
                    y = pool(x.view(1, 1, 8))
                    return loss(y, torch.zeros_like(y))
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified is None or not qualified.startswith("torch.nn."):
            return
        qualified = _canonical(qualified)
        if qualified in ALWAYS_PARAMETERISED:
            ctx.report(self, node)
        elif qualified in AFFINE_FLAG and not _affine_disabled(node, AFFINE_FLAG[qualified]):
            ctx.report(self, node)


def _affine_disabled(node: cst.Call, keyword: str) -> bool:
    """True unless the affine flag is left at its default (True) or passed as `True`;
    a non-literal flag is given the benefit of the doubt."""
    flag = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == keyword), None)
    return flag is not None and not (isinstance(flag, cst.Name) and flag.value == "True")
