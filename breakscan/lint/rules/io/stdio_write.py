import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import in_debug_branch

STDIO_CALLS = frozenset(
    f"sys.{stream}.{method}" for stream in ("stdout", "stderr", "__stdout__", "__stderr__")
    for method in ("write", "writelines", "flush")
)


class StdioWrite(Rule):
    id = "BS405"
    name = "stdio-write"
    gb_ids = ("GB0156",)
    message = "writing to `sys.stdout`/`sys.stderr` cannot be traced: the graph breaks here"
    fix_hint = "write outside the compiled code (after the compiled call returns)"
    docs = """
    ## What it does
    Flags `sys.stdout.write(...)`, `sys.stderr.write(...)`, their `writelines` and `flush`
    in compiled code, also through an attribute that holds the stream (`self.stream = stream or
    sys.stderr`, or `self.stream = stream` whose default `sys.stderr` no construction overrides).
    Calls under an `if self.verbose:` / `if debug:` flag are left alone.

    ## Why is this bad?
    A file object's methods are opaque to TorchDynamo: the graph ends at the call, the call runs
    eagerly and a new graph starts after it (GB0156 "Unsupported method call").

    ## Example
    ```python
    sys.stderr.write(f"step {step}\\n")
    ```

    ## Use instead
    Report progress from the training loop, outside the compiled function.
    """
    invalid = (
        Example("""
            import sys

            import torch
            from torch import nn

            class Progress:
                def __init__(self, total, stream=None):
                    self.total = total
                    self.stream = stream or sys.stderr

                def update(self, i):
                    self.stream.write(f"\\r{i + 1}/{self.total}")  # break

            class Sampler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(4, 4)
                    self.bar = Progress(2)

                def forward(self, x):
                    x = self.net(x)
                    self.bar.update(0)
                    return self.net(x)
        """, entry="Sampler()", inputs="torch.randn(2, 4)"),
        Example("""
            import sys

            import torch
            from torch import nn

            class ProgressLine:
                def __init__(self, stream=sys.stderr):
                    self.stream = stream

                def update(self, text):
                    self.stream.write(text)  # break

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(4, 4)
                    self.progress = ProgressLine()

                def forward(self, x):
                    x = self.net(x)
                    self.progress.update("step")
                    return self.net(x)
        """, entry="Model()", inputs="torch.randn(2, 4)"),
        Example("""
            import sys
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                sys.stdout.write("forward\\n")  # break
                return y + 1
        """),
        Example("""
            import torch
            from sys import stderr

            @torch.compile
            def fn(x):
                y = x * 2
                stderr.flush()  # break
                return y + 1
        """),
    )
    valid = (
        Example("""
            import sys

            import torch
            from torch import nn

            class Collected:
                def __init__(self):
                    self.lines = []

                def write(self, text):
                    self.lines.append(text)

            class ProgressLine:
                def __init__(self, stream=sys.stderr):
                    self.stream = stream

                def update(self, text):
                    self.stream.write(text)

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(4, 4)
                    self.progress = ProgressLine(Collected())

                def forward(self, x):
                    x = self.net(x)
                    self.progress.update("step")
                    return self.net(x)
        """, entry="Model()", inputs="torch.randn(2, 4)"),
        Example("""
            import sys
            import torch

            @torch.compile
            def fn(x):
                return x * 2

            def main():
                sys.stdout.write(str(fn(torch.ones(2)).shape))
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in STDIO_CALLS and not in_debug_branch(ctx):
            ctx.report(self, node)
