import libcst as cst

from breakscan.lint.rule import Example, Rule


class NumpyUntraced(Rule):
    id = "BS509"
    name = "numpy-untraced"
    gb_ids = ("GB0293", "GB0231")
    message = "a NumPy call with `trace_numpy = False`: TorchDynamo does not trace NumPy, the graph breaks here"
    fix_hint = "use the torch function (torch.sqrt, torch.zeros...) or Python's math, or leave trace_numpy on"
    docs = """
    ## What it does
    Flags every call of a NumPy function or type (`np.sqrt(n)`, `np.zeros(3)`, `np.float32(2.0)`,
    `np.finfo(...)`) and `torch.from_numpy(...)` inside code that runs under `torch.compile`,
    where the file or the project sets `torch._dynamo.config.trace_numpy = False`.

    ## Why is this bad?
    By default TorchDynamo traces NumPy through `torch._numpy`. With `trace_numpy = False` it
    refuses to: each NumPy call ends the graph, runs eagerly, and a new graph starts after it
    (GB0293), whatever its arguments, Python numbers and shapes included; `torch.from_numpy`
    breaks the same way (GB0231). NumPy constants (`np.pi`) are read without a break.

    ## Example
    ```python
    torch._dynamo.config.trace_numpy = False

    scale = np.sqrt(x.shape[-1])
    ```

    ## Use instead
    ```python
    scale = math.sqrt(x.shape[-1])
    ```
    """
    invalid = (
        Example("""
            import numpy as np
            import torch

            torch._dynamo.config.trace_numpy = False

            @torch.compile
            def fn(x):
                scale = np.sqrt(x.shape[0])  # break
                return x * scale
        """),
        Example("""
            import numpy as np
            import torch

            torch._dynamo.config.trace_numpy = False

            @torch.compile
            def fn(x):
                offsets = torch.from_numpy(np.arange(8))  # break
                return x + offsets
        """),
    )
    valid = (
        Example("""
            import math
            import numpy as np
            import torch

            torch._dynamo.config.trace_numpy = False

            @torch.compile
            def fn(x):
                return x * math.sqrt(x.shape[0]) + np.pi
        """),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                return x * np.sqrt(x.shape[0])  # traced through torch._numpy
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.dynamo.enabled("trace_numpy"):
            return
        qualified = ctx.qualname(node.func)
        if qualified is not None and (qualified.startswith("numpy.") or qualified == "torch.from_numpy"):
            ctx.report(self, node)
