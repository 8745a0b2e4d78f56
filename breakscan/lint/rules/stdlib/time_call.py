import libcst as cst

from breakscan.lint.rule import Example, Rule


class TimeCall(Rule):
    id = "BS501"
    name = "time-call"
    gb_ids = ("GB0007",)
    message = "`time` functions are marked as skipped by TorchDynamo: calling one breaks the graph"
    fix_hint = "time the compiled call from outside, or use torch.profiler / CUDA events around it"
    docs = """
    ## What it does
    Flags calls to the `time` module (`time.time()`, `time.perf_counter()`, `time.monotonic()`,
    `time.sleep()`, `time.strftime()`...) inside code that runs under `torch.compile`.

    ## Why is this bad?
    Every function of the `time` module is on TorchDynamo's skip list: it cannot be put in a
    graph, so the graph ends at the call, the call runs eagerly, and a new graph starts after it
    (GB0007 "Attempted to call function marked as skipped"). Timing code inside a compiled
    function also measures tracing, not the kernels. A timer context manager (a `@contextmanager`
    generator, or a class's `__enter__`) that calls one on entering makes TorchDynamo run the
    whole frame using it eagerly (it cannot break while entering a context manager), so the call
    on leaving is not reported: it never breaks.

    ## Example
    ```python
    def forward(self, x):
        start = time.perf_counter()
        y = self.body(x)
        self.elapsed = time.perf_counter() - start
        return y
    ```

    ## Use instead
    ```python
    start = time.perf_counter()
    y = compiled_model(x)
    elapsed = time.perf_counter() - start
    ```
    """
    invalid = (
        Example("""
            import time
            import torch
            from torch import nn

            class Timer:
                def __init__(self, registry):
                    self.registry = registry

                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    self.registry["done"] = time.perf_counter()  # break
                    return False

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)
                    self.timings = {}

                def forward(self, x):
                    with Timer(self.timings):  # runs `__enter__`, and `__exit__` after the block
                        x = torch.tanh(self.proj(x))
                    return x
        """, entry="Encoder()", inputs="torch.randn(2, 8)"),
        Example("""
            import time
            import torch

            @torch.compile
            def fn(x):
                start = time.perf_counter()  # break
                y = x * 2
                return y + time.time() - start  # break
        """),
        Example("""
            import torch
            from time import monotonic

            class Model(torch.nn.Module):
                def forward(self, x):
                    y = torch.relu(x)
                    self.stamp = monotonic()  # break
                    return y * 2
        """, entry="Model()"),
        Example("""
            import time
            from contextlib import contextmanager

            import torch
            from torch import nn

            TIMINGS = {}

            @contextmanager
            def stage(name):
                start = time.perf_counter()  # break
                try:
                    yield
                finally:
                    TIMINGS[name] = time.perf_counter() - start  # the frame already runs eagerly

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    with stage("fc"):
                        return self.fc(x)
        """, entry="Block()", inputs="torch.randn(2, 4)"),
    )
    valid = (
        Example("""
            import time
            import torch

            @torch.compile
            def fn(x):
                return x * 2

            def timed(x):
                start = time.perf_counter()
                y = fn(x)
                return y, time.perf_counter() - start
        """),
        Example("""
            import time
            import torch

            @torch.compile
            def fn(x):
                if not torch.compiler.is_compiling():
                    start = time.perf_counter()
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified is not None and qualified.startswith("time."):
            ctx.report(self, node)
