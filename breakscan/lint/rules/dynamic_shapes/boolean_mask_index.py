import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.booleans import MaskTracker

LOGICAL_ASSIGN = (cst.BitAndAssign, cst.BitOrAssign, cst.BitXorAssign)


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

            @torch.compile
            def fn(x):
                y = x * 2
                return y[y > 0].sum()  # break
        """),
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
        self.masks = MaskTracker()
        # The subscripts the latest assignment writes to (`x[mask] = 0`): a write keeps the shape.
        self.writes: set[int] = set()

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        self.masks.at(node, ctx)
        targets = [t.target for t in node.targets]
        self.writes = {id(n) for n in _flatten(targets) if isinstance(n, cst.Subscript)}
        self.masks.bind(targets, self.masks.is_mask(node.value, ctx), node.value, ctx)

    def on_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        self.masks.at(node, ctx)
        self.writes = {id(node.target)}
        is_mask = node.value is not None and self.masks.is_mask(node.value, ctx)
        self.masks.bind([node.target], is_mask, node.value, ctx)

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self.masks.at(node, ctx)
        if isinstance(node.target, cst.Name):
            # `keep &= other` keeps a mask a mask; any other operator makes numbers of it.
            is_mask = isinstance(node.operator, LOGICAL_ASSIGN) and (
                self.masks.is_mask(node.target, ctx) or self.masks.is_mask(node.value, ctx))
            self.masks.bind([node.target], is_mask, node.value, ctx)

    def on_NamedExpr(self, node: cst.NamedExpr, ctx) -> None:
        self.masks.at(node, ctx)
        self.masks.bind([node.target], self.masks.is_mask(node.value, ctx), node.value, ctx)

    def on_For(self, node: cst.For, ctx) -> None:
        self.masks.at(node, ctx)
        self.masks.bind([node.target], False, None, ctx)

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        self.masks.at(node, ctx)
        if id(node) in self.writes:
            return
        if any(isinstance(e.slice, cst.Index) and self.masks.is_mask(e.slice.value, ctx) for e in node.slice):
            ctx.report(self, node)


def _flatten(targets: list[cst.BaseExpression]):
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)):
            yield from _flatten([e.value for e in target.elements])
        else:
            yield target
