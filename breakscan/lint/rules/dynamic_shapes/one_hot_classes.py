import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.ops import op_call


class OneHotClasses(Rule):
    id = "BS306"
    name = "one-hot-inferred-classes"
    gb_ids = ("GB0246", "GB0033")
    message = "`one_hot` without `num_classes` sizes its output from the data: the graph breaks here"
    fix_hint = "pass num_classes=<int> (the number of classes is a model constant)"
    docs = """
    ## What it does
    Flags `torch.nn.functional.one_hot(t)` with no `num_classes`, with `num_classes=-1`, or with a
    `num_classes` computed from tensor data (`t.max() + 1`, `max(t.max() + 2, n)`).

    ## Why is this bad?
    Without a class count, `one_hot` makes `t.max() + 1` columns, a size known only at run time.
    TorchDynamo ends the graph at the call and runs it eagerly (GB0246 when the argument is
    missing, GB0033 "Data dependent operator" for `num_classes=-1`). A tensor-valued
    `num_classes` (such as `max(t.max() + 2, n)`, which Python's `max` keeps a tensor) has to be
    read back as a Python int: GB0033 as well. Unlike `nonzero` or `unique`, it breaks even with
    `capture_dynamic_output_shape_ops=True`.

    ## Example
    ```python
    target = F.one_hot(labels).float()
    ```

    ## Use instead
    ```python
    target = F.one_hot(labels, num_classes=self.num_classes).float()
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long()
                return F.one_hot(labels).float() * 2  # break
        """),
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long()
                return F.one_hot(labels, num_classes=-1).sum(0) + 1  # break
        """),
        Example("""
            import torch
            import torch.nn.functional as F

            def safe_one_hot(indexes, max_length):
                max_index = indexes.max() + 1
                return F.one_hot(indexes, max(max_index + 1, max_length))[..., :max_length]  # break

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long()
                return safe_one_hot(labels, 4).float() * 2
        """),
    )
    valid = (
        Example("""
            import torch
            import torch.nn.functional as F

            NUM_CLASSES = 10

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long().clamp(max=9)
                return F.one_hot(labels, NUM_CLASSES).float() + F.one_hot(labels, num_classes=10)
        """),
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                labels = (x.abs() * 3).long().clamp(max=5)
                classes = max(labels.shape[0], 6)
                return F.one_hot(labels, classes).float() * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        call = op_call(node, ctx, frozenset({"one_hot"}))
        if call is None or not call.complete:
            return
        classes = call.positional[1] if len(call.positional) > 1 else call.keywords.get("num_classes")
        if classes is None or _is_minus_one(classes):
            ctx.report(self, node)
        elif ctx.value(classes) == v.TENSOR:
            ctx.report(self, node, "`one_hot` with a `num_classes` computed from tensor data reads it back as a "
                                   "Python int: the graph breaks here")


def _is_minus_one(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer) and node.expression.value == "1")
