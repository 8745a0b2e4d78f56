import libcst as cst

from breakscan.lint.rule import Example, Rule


class TensorNumpy(Rule):
    id = "BS106"
    name = "tensor-numpy"
    gb_ids = ("GB0106", "GB0105")
    # With NumPy installed and trace_numpy on (the default) TorchDynamo traces the ndarray instead.
    severity = "warning"
    message = "`.numpy()` leaves torch: the graph breaks here when NumPy is missing or trace_numpy is off"
    fix_hint = "keep the computation in torch ops, or call .numpy() on the compiled function's output"
    docs = """
    ## What it does
    Flags `Tensor.numpy()` (also `x.detach().cpu().numpy()`) inside code that runs under
    `torch.compile`.

    ## Why is this bad?
    TorchDynamo can only keep `.numpy()` in the graph by tracing the array through
    `torch._numpy`, which needs NumPy installed and `torch._dynamo.config.trace_numpy = True`.
    Without NumPy the graph breaks here (GB0106 "Tensor.numpy() without NumPy installed"), and with
    `trace_numpy=False` too (GB0105). When it is traced, any NumPy function it does not support
    breaks the graph later on, so the conversion is rarely worth it inside a compiled region.

    ## Example
    ```python
    probs = logits.softmax(-1).detach().cpu().numpy()
    ```

    ## Use instead
    ```python
    probs = logits.softmax(-1)        # return the tensor
    # ... and convert outside: model(x).cpu().numpy()
    ```
    """
    invalid = (
        Example("""
            import torch

            # Breaks whether or not NumPy is installed (GB0105 with it, GB0106 without).
            torch._dynamo.config.trace_numpy = False

            @torch.compile
            def fn(x):
                probs = x.softmax(0)
                try:
                    array = probs.detach().cpu().numpy()  # break
                except RuntimeError:  # eager .numpy() raises too when NumPy is missing
                    array = None
                return probs * 2
        """),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x.softmax(0).detach().cpu()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and ctx.is_tensor(func.value):
            ctx.report(self, node)
