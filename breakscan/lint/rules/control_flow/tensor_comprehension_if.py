import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.rules.scalars._values import holds_tensor_data


class TensorComprehensionIf(Rule):
    id = "BS206"
    name = "tensor-comprehension-if"
    gb_ids = ("GB0170", "GB4347")
    message = "a comprehension filter on a tensor's value: TorchDynamo cannot know which items to keep, the graph breaks"
    fix_hint = "keep every item and mask it (torch.where), or filter outside the compiled code"
    docs = """
    ## What it does
    Flags the `if` clause of a list, set, dict or generator comprehension when it tests tensor
    data: `[f for f in feats if f.abs().sum() > 0]`. Filters on Python values
    (`[t for t in ts if t is not None]`, `if t.dim() == 4`) are fine.

    ## Why is this bad?
    Which items are kept depends on values only known at run time, so TorchDynamo ends the graph
    at the test (GB0170 "Data-dependent branching") and the output's length is data-dependent.
    Over `zip(...)` it cannot even resume the half-consumed iterator (GB4347 "Missing
    tp_iternext") and the rest of the function runs eagerly.

    ## Example
    ```python
    kept = [box for box in boxes if box[4] > self.threshold]
    ```

    ## Use instead
    ```python
    keep = boxes[:, 4] > self.threshold     # a mask; apply it outside the compiled code
    scores = torch.where(keep, boxes[:, 4], 0.0)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                rows = x.view(4, 2)
                kept = [r for r in rows if r.sum() > -100]  # break
                return torch.stack(kept) * 2
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x, mask=None):
                parts = [x * 2, None, x - 1]
                kept = [p for p in parts if p is not None and p.dim() == 1]
                return torch.stack(kept).sum(0)
        """),
    )

    def on_CompIf(self, node: cst.CompIf, ctx) -> None:
        if holds_tensor_data(node.test, ctx):
            ctx.report(self, node.test)
