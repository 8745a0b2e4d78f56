import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import in_debug_branch


class PrintCall(Rule):
    id = "BS401"
    name = "print-call"
    gb_ids = ("GB0059",)
    message = "`print` cannot be traced: the graph breaks here, even for a constant string"
    fix_hint = ("remove it, move it out of the compiled code, or add print to "
                "torch._dynamo.config.reorderable_logging_functions (tensor and constant arguments)")
    captured_in_sets = ("ignore_logging_functions",)
    docs = """
    ## What it does
    Flags every `print(...)` call in compiled code, whatever it prints (`print("step")`
    breaks as much as `print(x)`). Calls under an `if self.verbose:` / `if debug:` flag are left
    alone: with the flag off, TorchDynamo never traces them; unless the code that builds the
    objects writes the flag out as on (`verbose: bool = True` in a config dataclass,
    `SimpleNamespace(debug=True)`, a `verbose=True` default that `__init__` stores, a module-level
    `DEBUG = True`, or an environment switch whose default is on).

    ## Why is this bad?
    TorchDynamo cannot put a side effect on stdout into a graph. By default it ends the graph at
    the call, runs `print` eagerly and starts a new graph after it (GB0059 "Failed to trace
    builtin operator"). Inside a loop or a `try` block the whole function is skipped instead.

    ## Example
    ```python
    h = self.encoder(x)
    print("encoded", h.shape)
    return self.head(h)
    ```

    ## Use instead
    ```python
    torch._dynamo.config.reorderable_logging_functions.add(print)   # once, at start-up
    ```
    With `print` registered, TorchDynamo records a call whose arguments are tensors and constants
    and replays it after the graph runs (tensors print their final values), without a break; a
    call that prints only constants, or a shape, still breaks. `ignore_logging_functions.add(print)`
    removes every break but drops the output under compile. Or move the print out of the compiled
    function.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            def log_shape(module, args):
                (x,) = args
                print(f"[{module.__class__.__name__}] input {tuple(x.shape)}")  # break

            class TinyCNN(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv2d(3, 8, 3, padding=1)
                    self.fc = nn.Linear(8, 10)
                    self.conv.register_forward_pre_hook(log_shape)  # runs inside the compiled call

                def forward(self, img):
                    h = torch.relu(self.conv(img))
                    return self.fc(h.mean(dim=(2, 3)))
        """, entry="TinyCNN()", inputs="torch.randn(2, 3, 8, 8)"),
        Example("""
            import torch
            from torch import nn

            class Warmup:
                def __init__(self, steps):
                    self.steps = steps

                def __bool__(self):
                    print("warmup steps:", self.steps)  # break
                    return self.steps > 0

            class Cell(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)
                    self.warmup = Warmup(3)

                def forward(self, x):
                    h = self.proj(x)
                    if self.warmup:  # runs `Warmup.__bool__`
                        h = h * 0.5
                    return h
        """, entry="Cell()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch
            from torch import nn

            class Gate:
                def __init__(self, steps):
                    self.steps = steps

                def __bool__(self):
                    print("gate steps:", self.steps)  # break
                    return self.steps > 0

            class Cell(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.proj(x)
                    gate = Gate(3)
                    if gate:  # a local object: `Gate.__bool__` runs
                        h = h * 0.5
                    return h
        """, entry="Cell()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                print("doubled")  # break
                return y + 1
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x)
                    print(h.shape, h.mean())  # break
                    return h.relu()
        """, entry="Model()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch
            from dataclasses import dataclass
            from torch import nn

            @dataclass
            class SamplerConfig:
                steps: int = 3
                verbose: bool = True  # a debug flag that ships switched on

            class Sampler(nn.Module):
                def __init__(self, cfg: SamplerConfig = SamplerConfig()):
                    super().__init__()
                    self.cfg = cfg
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    for i in range(self.cfg.steps):
                        x = self.fc(x)
                        if self.cfg.verbose and i % 2 == 0:
                            print("step", i)  # break
                    return x
        """, entry="Sampler()", inputs="torch.randn(2, 4)"),
        Example("""
            import os
            import torch

            DEBUG_SHAPES = os.environ.get("DEBUG_SHAPES", "1") == "1"  # on unless the environment says otherwise

            @torch.compile(backend="eager")
            def fn(x):
                y = x * 2
                if DEBUG_SHAPES:
                    print("y", tuple(y.shape))  # break
                return y + 1
        """),
        Example("""
            import torch
            from types import SimpleNamespace
            from torch import nn

            CONFIG = SimpleNamespace(channels=(3, 8, 16), verbose=True)

            class Stage(nn.Module):
                def __init__(self, cin, cout, verbose=False):
                    super().__init__()
                    self.conv = nn.Conv2d(cin, cout, 3, padding=1)
                    self.verbose = verbose

                def forward(self, x):
                    y = self.conv(x).relu()
                    if self.verbose:  # every construction passes the config's verbose, which is on
                        print(tuple(x.shape), "->", tuple(y.shape))  # break
                    return y

            class Backbone(nn.Module):
                def __init__(self, cfg=CONFIG):
                    super().__init__()
                    ch = cfg.channels
                    self.stages = nn.Sequential(*[Stage(a, b, cfg.verbose) for a, b in zip(ch[:-1], ch[1:])])

                def forward(self, x):
                    return self.stages(x).mean((2, 3))
        """, entry="Backbone()", inputs="torch.randn(1, 3, 8, 8)"),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.reorderable_logging_functions.add(print)

            @torch.compile
            def fn(x):
                print("scaling", x)  # replayed after the graph
                return x * 2
        """),
        Example("""
            import torch

            torch._dynamo.config.ignore_logging_functions.add(print)

            @torch.compile
            def fn(x):
                print("scaling")  # dropped while tracing
                return x * 2
        """),
        Example("""
            import torch

            def report(x):
                print(x.shape)

            @torch.compile
            def fn(x):
                return x * 2
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self, verbose=False):
                    super().__init__()
                    self.verbose = verbose
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x)
                    if self.verbose:
                        print("hidden", h.shape)
                    return h.relu()
        """, entry="Model()", inputs="torch.randn(2, 8)"),
        Example("""
            import os
            import torch

            DEBUG_SHAPES = os.environ.get("DEBUG_SHAPES", "0") == "1"  # off unless the environment turns it on
            TRACE = False

            @torch.compile(backend="eager")
            def fn(x):
                y = x * 2
                if DEBUG_SHAPES:
                    print("y", tuple(y.shape))
                if TRACE:  # a module flag written out as off: TorchDynamo never takes the branch
                    print("traced")
                return y + 1
        """),
        Example("""
            import torch

            verbose = True  # the module's flag: the function's own parameter shadows it

            @torch.compile(backend="eager")
            def fn(x, verbose=False):
                y = x * 2
                if verbose:
                    print("y", tuple(y.shape))
                return y + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) == "builtins.print" and not in_debug_branch(ctx):
            if not (ctx.dynamo.holds("reorderable_logging_functions", "builtins.print") and _replayable(node, ctx)):
                ctx.report(self, node)


def _replayable(call: cst.Call, ctx) -> bool:
    """Arguments TorchDynamo can defer: tensors and constants, at least one tensor (a print of
    constants only, or of a shape, still breaks in 2.13)."""
    arguments = [a.value for a in call.args if a.keyword is None and not a.star]
    tensors = [ctx.value(a) == v.TENSOR for a in arguments]
    constants = [isinstance(a, (cst.BaseNumber, cst.SimpleString)) for a in arguments]
    return any(tensors) and all(t or c for t, c in zip(tensors, constants)) and len(arguments) == len(call.args)
