import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import is_number_like


class BuiltinAnyAll(Rule):
    id = "BS205"
    name = "builtin-any-all"
    gb_ids = ("GB0170", "GB8335")
    message = "builtin `any()`/`all()` tests tensors one by one in Python: the graph breaks here"
    fix_hint = "use the tensor reductions: t.any() / t.all(), or torch.stack([...]).any()"
    docs = """
    ## What it does
    Flags the Python builtins `any(...)` and `all(...)` over a tensor or over tensors
    (`any(x > 0)`, `all(torch.isfinite(t).all() for t in outputs)`). Over Python values
    (`all(t.shape == ref.shape for t in ts)`, `any(m is None for m in masks)`) they are fine.

    ## Why is this bad?
    The builtin iterates and calls `bool()` on each element; TorchDynamo traces it through its
    own Python version of `any`/`all` and breaks the graph at the first data-dependent test
    (GB0170 "Data-dependent branching", reported inside `torch/_dynamo/polyfills/builtins.py`,
    called from this line). Over a generator it cannot even resume: the half-consumed generator
    cannot be rebuilt (GB8335) and the rest of the function runs eagerly.

    ## Example
    ```python
    if any(x < 0):
        x = x.clamp(min=0)
    ```

    ## Use instead
    ```python
    x = x.clamp(min=0)          # or torch.where((x < 0).any(), ..., ...)
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x + 1
                negative = any(x < 0)  # break
                return x * negative
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                outputs = [x * 2, x - 1]
                finite = all(torch.isfinite(t).all() for t in outputs)  # break
                return outputs[0] * finite
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x, mask=None):
                outputs = [x * 2, x - 1]
                same = all(t.shape == x.shape for t in outputs)
                missing = any(m is None for m in [mask])
                return (x < 0).any() * same + torch.stack(outputs).isfinite().all() + missing
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if len(node.args) != 1 or ctx.qualname(node.func) not in ("builtins.any", "builtins.all"):
            return
        iterable = node.args[0].value
        if ctx.value(iterable) in (v.TENSOR, v.TENSORS) and not is_number_like(iterable, ctx):
            ctx.report(self, node)
