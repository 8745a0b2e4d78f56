import libcst as cst

from breakscan.lint.rule import Example, Rule


class TensorTolist(Rule):
    id = "BS102"
    name = "tensor-tolist"
    gb_ids = ("GB0109", "GB0033")
    message = "`.tolist()` copies tensor data into Python numbers: the graph breaks here"
    fix_hint = "keep the values in a tensor (indexing, torch.where, gather), or convert outside the compiled code"
    docs = """
    ## What it does
    Flags `Tensor.tolist()` inside code that runs under `torch.compile`.

    ## Why is this bad?
    `.tolist()` turns every element into a Python number, which TorchDynamo cannot know while
    tracing. On a floating-point or bool tensor it breaks with GB0109 ("Tensor.tolist() with
    non-integer tensor"); on an integer tensor each element becomes a data-dependent integer and,
    unless `capture_scalar_outputs=True`, the graph breaks with GB0033 ("Data dependent operator").

    ## Example
    ```python
    sizes = counts.tolist()
    parts = x.split(sizes)
    ```

    ## Use instead
    ```python
    parts = x.split(self.sizes)  # sizes known when the model is built
    ```
    Or return the tensor and call `.tolist()` outside the compiled function.
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scores = x.softmax(0)
                values = scores.tolist()  # break
                return x * values[0]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                ids = (x > 0).long()
                return x.new_tensor(ids.tolist()) + 1  # break
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                dims = list(x.shape)
                return x.reshape(dims) * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scores = x.softmax(0)
                return x * scores[0]
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "tolist" and not node.args
                and ctx.is_tensor(func.value)):
            ctx.report(self, node)
