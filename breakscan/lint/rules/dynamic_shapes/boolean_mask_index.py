import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class BooleanMaskIndex(Rule):
    id = "BS302"
    name = "boolean-mask-index"
    gb_ids = ("GB0036",)
    message = "indexing with a boolean mask gives a result whose size depends on the data: the graph breaks here"
    fix_hint = "keep the shape: torch.where(mask, x, 0), x * mask, x.masked_fill(~mask, 0); or assign through the mask"
    captured_by = ("capture_dynamic_output_shape_ops",)
    docs = """
    ## What it does
    Flags reads through a boolean mask, `x[x > 0]`, `x[mask]`, `x[:, ~keep]`, where the mask is
    known to be boolean: a comparison, `~m`, `m & n`, `torch.isnan(x)`, `.bool()`, `.any(dim)`,
    `dtype=torch.bool`, or a name bound to one. Augmented assignments (`x[mask] += 1`) read
    first, so they count too. Plain writes (`x[mask] = 0`) do not break and are not flagged, nor
    is an integer index tensor (`x[idx]`), whose result shape is static.

    ## Why is this bad?
    The result has as many rows as the mask has True elements, known only at run time. With the
    default `capture_dynamic_output_shape_ops=False`, TorchDynamo ends the graph at the indexing,
    runs it eagerly and starts a new graph after it (GB0036 "Dynamic shape operator").

    ## Example
    ```python
    valid = scores > threshold
    return scores[valid].sum()
    ```

    ## Use instead
    ```python
    valid = scores > threshold
    return torch.where(valid, scores, 0.0).sum()     # or (scores * valid).sum()
    ```
    Writes through the mask stay in the graph: `scores[~valid] = 0`.
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class ContrastiveLoss(nn.Module):
                def forward(self, a, b, same):  # `d[~same]` below: `same` holds booleans
                    d = F.pairwise_distance(a, b)
                    pos = d[same]  # break
                    neg = d[~same]  # break
                    return pos.pow(2).mean() + F.relu(0.5 - neg).pow(2).mean()
        """, entry="ContrastiveLoss()",
                inputs="(torch.randn(6, 8), torch.randn(6, 8), torch.tensor([True, False, True, True, False, False]))"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                return y[y > 0].sum()  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                top = x.max(dim=-1).values  # a field of the named tuple torch returns: a tensor
                median = torch.median(x, dim=0).values
                rows = x[top > 0]  # break
                return rows, x[:, median > 0]  # break
        """, inputs="torch.randn(4, 3)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                finite = ~torch.isnan(x)
                kept = x[finite]  # break
                return kept * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x.clone()
                y[y > 0] += 1  # break
                return y
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)

                def forward(self, x):
                    h = self.proj(x)
                    keep = h.abs().sum(-1) > 1.0
                    return h[keep, :]  # break
        """, entry="Model()", inputs="torch.randn(6, 4)"),
        Example("""
            import torch
            from torch import nn

            def finite(x):
                return x.isfinite() & (x.abs() < 1e4)

            class Clean(nn.Module):
                def forward(self, x, keep_all: bool = False):
                    if keep_all:
                        keep = torch.ones_like(x, dtype=torch.bool)
                    else:
                        keep = finite(x)  # a mask on both branches: one from a helper
                    return x[keep]  # break
        """, entry="Clean()"),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_dynamic_output_shape_ops = True

            @torch.compile
            def fn(x):
                return x[x > 0]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x.clone()
                y[y > 0] = 0
                return y
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                idx = torch.argsort(x)
                mask = x > 0
                return x[idx] + x[mask.long()] + torch.where(mask, x, 0.0)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                mask = x > 0
                mask = mask.float()
                return x[x.shape[0] // 2] * mask
        """),
    )

    def __init__(self) -> None:
        # The subscripts the latest assignment writes to (`x[mask] = 0`): a write keeps the shape.
        self.writes: set[int] = set()

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        self.writes = {id(n) for n in _flatten([t.target for t in node.targets]) if isinstance(n, cst.Subscript)}

    def on_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        self.writes = {id(node.target)}

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        if id(node) in self.writes:
            return
        if any(isinstance(e.slice, cst.Index) and v.is_mask(ctx.value(e.slice.value)) for e in node.slice):
            ctx.report(self, node)


def _flatten(targets: list[cst.BaseExpression]):
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)):
            yield from _flatten([e.value for e in target.elements])
        else:
            yield target
