import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data

# Builtins TorchDynamo cannot trace with a tensor argument (they need Python ints).
INT_BUILTINS = frozenset(
    {"builtins.range", "builtins.pow", "builtins.hex", "builtins.oct", "builtins.bin", "builtins.chr"}
)


class TensorInIntBuiltin(Rule):
    id = "BS107"
    name = "tensor-in-int-builtin"
    gb_ids = ("GB0059",)
    message = "this builtin needs Python numbers, not a tensor: TorchDynamo cannot trace it and the graph breaks"
    fix_hint = "loop over a Python bound (a shape or a config value), or use the tensor op (`t ** 2`, torch.sort)"
    docs = """
    ## What it does
    Flags `range(t)`, `pow(t, ...)`, `hex/oct/bin/chr(t)` and `sorted(t)` where `t` is tensor data,
    such as `for step in range(lengths.max()):`.

    ## Why is this bad?
    These builtins need Python integers (or iterate element by element); TorchDynamo cannot run
    them on a tensor while tracing and breaks the graph at the call (GB0059 "Failed to trace
    builtin operator").

    ## Example
    ```python
    for step in range(lengths.max()):
        h = cell(inputs[:, step], h)
    ```

    ## Use instead
    ```python
    for step in range(inputs.shape[1]):   # the padded length is a shape
        h = cell(inputs[:, step], h)
    ```
    and `t ** 2` for `pow(t, 2)`, `torch.sort(t)` for `sorted(t)`.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                steps = (x > 0).sum()
                for _ in range(steps):  # break
                    x = x * 0.5
                return x
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                energy = pow(x.norm(), 2)  # break
                return x / energy
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                for step in range(x.shape[0] // 4):
                    x = x * 0.5 + step
                return x ** 2 + torch.sort(x).values
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x * max(x.abs().max(), 1e-6) + abs(x.sum()) + len(x)
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qualified in INT_BUILTINS:
            flagged = any(holds_tensor_data(a, ctx) for a in positional)
        else:
            # sorted() compares elements one by one; over a dict or a list it sorts Python keys.
            flagged = (qualified == "builtins.sorted" and len(positional) == 1
                       and ctx.value(positional[0]) == v.TENSOR and holds_tensor_data(positional[0], ctx))
        if flagged:
            ctx.report(self, node)
