import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data


class TensorContains(Rule):
    id = "BS109"
    name = "tensor-contains"
    gb_ids = ("GB0124",)
    message = "`in` on a tensor reads a value of it into Python: the graph breaks here"
    fix_hint = "keep the test a tensor: `(x == value).any()` (and select with torch.where), or test outside the compiled code"
    docs = """
    ## What it does
    Flags `value in t` and `value not in t` where `t` is a tensor, in code that runs under
    `torch.compile`. `value in x.shape`, `value in (a, b)` and `x in mapping` are Python
    containers and are fine, and so is `"key" in batch`: a tensor never holds a string.

    ## Why is this bad?
    `Tensor.__contains__` computes `(t == value).any()` and turns it into a Python bool with
    `.item()`: TorchDynamo cannot know that bool while tracing, so it breaks (GB0124) and skips the
    rest of the frame.

    ## Example
    ```python
    if pad_id in token_ids:
        ...
    ```

    ## Use instead
    ```python
    has_pad = (token_ids == pad_id).any()   # a tensor: combine it with torch.where
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                found = 0.5 in y  # break
                return y, found
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                wide = 8 in x.shape
                found = (y == 0.5).any()
                return y, wide, found
        """),
    )

    def on_Comparison(self, node: cst.Comparison, ctx) -> None:
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)):
            container = node.comparisons[0].comparator
            # A tensor never holds a string: `"y" in batch` asks a dict-like object.
            if holds_tensor_data(container, ctx) and ctx.value(node.left) != v.STR:
                ctx.report(self, node)
