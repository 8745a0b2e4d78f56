import libcst as cst

from breakscan.lint.rule import Example, Rule


class TensorNumpy(Rule):
    id = "BS106"
    name = "tensor-numpy"
    gb_ids = ("GB0105", "GB0106")
    severity = "warning"
    message = "`.numpy()` with `trace_numpy = False`: the graph breaks here"
    fix_hint = "keep the computation in torch ops, or call .numpy() on the compiled function's output"
    docs = """
    ## What it does
    Flags `Tensor.numpy()` (also `x.detach().cpu().numpy()`) inside code that runs under
    `torch.compile`, in a file that sets `torch._dynamo.config.trace_numpy = False`.

    ## Why is this bad?
    With NumPy installed and `trace_numpy` on (both the defaults), TorchDynamo 2.13 traces the
    ndarray through `torch._numpy`: `.numpy()` itself does not break, and the array then behaves
    like a tensor (`if arr.sum() > 0:` and `arr.tolist()` break as they would on a tensor, and
    breakscan's other rules flag them). With `trace_numpy = False` the graph breaks at the
    `.numpy()` call (GB0105); without NumPy installed it breaks there too (GB0106), which a static
    lint cannot see, so only the first case is flagged.

    ## Example
    ```python
    torch._dynamo.config.trace_numpy = False

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
        Example("""
            import torch

            @torch.compile
            def fn(x):
                weights = x.softmax(0).detach().cpu().numpy()  # traced as an ndarray (NumPy installed)
                return x * weights.max()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "numpy" and ctx.is_tensor(func.value)
                and not ctx.dynamo.enabled("trace_numpy")):
            ctx.report(self, node)
