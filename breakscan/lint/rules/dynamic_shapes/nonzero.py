import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.ops import op_call

# Each output's length is the number of nonzero (True) elements of the input.
NONZERO_OPS = frozenset({"nonzero", "argwhere", "masked_select", "where"})
# torchvision's box filters return the indices they keep: `nms`/`batched_nms` through the
# `torchvision::nms` operator (its fake kernel allocates an unbacked size), `remove_small_boxes`
# through a one-argument `torch.where` inside torchvision. Confirmed under TorchDynamo 2.13 with
# torchvision 0.28 (GB0036 attributed to the calling line).
TORCHVISION_KEEP_OPS = frozenset(
    f"{module}.{name}"
    for module in ("torchvision.ops", "torchvision.ops.boxes")
    for name in ("nms", "batched_nms", "remove_small_boxes")
) | {"torch.ops.torchvision.nms", "torch.ops.torchvision.nms.default"}


class Nonzero(Rule):
    id = "BS301"
    name = "nonzero"
    gb_ids = ("GB0036",)
    message = "the output size depends on how many elements are nonzero: the graph breaks here"
    fix_hint = "use torch.nonzero_static(x, size=...), the 3-argument torch.where, or masked_fill/multiply by the mask"
    captured_by = ("capture_dynamic_output_shape_ops",)
    docs = """
    ## What it does
    Flags `torch.nonzero` / `Tensor.nonzero` (also `as_tuple=True`), `torch.argwhere`,
    `torch.masked_select` and the one-argument `torch.where(condition)` in compiled code; also
    torchvision's `nms`, `batched_nms` and `remove_small_boxes` (`torchvision.ops`), which return
    the indices of the boxes they keep.

    ## Why is this bad?
    The length of their result is the number of nonzero (True) elements of the input, which is
    only known at run time. With the default `capture_dynamic_output_shape_ops=False`, TorchDynamo
    ends the graph at the call, runs it eagerly and starts a new graph after it
    (GB0036 "Dynamic shape operator"). `fullgraph=True` turns the capture on silently, so passing
    under `fullgraph=True` does not mean the default compile is break-free.

    ## Example
    ```python
    idx = torch.nonzero(scores > 0.5).squeeze(1)
    return boxes[idx]
    ```

    ## Use instead
    ```python
    keep = (scores > 0.5).unsqueeze(1)
    return torch.where(keep, boxes, torch.zeros_like(boxes))   # fixed shape, masked rows zeroed
    ```
    When an index list is needed, `torch.nonzero_static(x, size=k, fill_value=-1)` has a fixed
    size; or set `torch._dynamo.config.capture_dynamic_output_shape_ops = True` (the backend must
    then handle unbacked sizes).
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            def radius_search(points, queries, radius):
                dists = torch.cdist(queries, points)
                return (dists <= radius).nonzero()[:, 1]  # break

            def nearest(points, queries, radius):
                return torch.cdist(queries, points).argmin(dim=1)

            class NeighborSearch(nn.Module):
                def __init__(self, exact=True):
                    super().__init__()
                    self.search_fn = radius_search if exact else nearest  # called in forward
                    self.proj = nn.Linear(3, 3)

                def forward(self, points, queries):
                    return points[self.search_fn(self.proj(points), queries, 0.5)]
        """, entry="NeighborSearch()", inputs="(torch.randn(5, 3), torch.randn(2, 3))"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                idx = torch.nonzero(x > 0).squeeze(1)  # break
                return x[idx] * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                rows = (x > 0).nonzero(as_tuple=True)[0]  # break
                return rows + 1
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                positive = torch.where(x > 0)[0]  # break
                return positive * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                picked = torch.masked_select(x, x > 0)  # break
                return picked.sum() + torch.argwhere(x).sum()  # break
        """),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_dynamic_output_shape_ops = True

            @torch.compile
            def fn(x):
                return torch.nonzero(x > 0)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return torch.where(x > 0, x, torch.zeros_like(x)) * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                idx = torch.nonzero_static(x > 0, size=4, fill_value=0)
                return x.masked_fill(x > 0, 0.0) + idx.sum()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in TORCHVISION_KEEP_OPS:
            ctx.report(self, node)
            return
        call = op_call(node, ctx, NONZERO_OPS)
        if call is None:
            return
        # Only the one-argument `torch.where(condition)` lists indices; with x/y it selects elementwise.
        if call.name == "where" and (len(call.positional) + len(call.keywords) != 1 or not call.complete):
            return
        ctx.report(self, node)
