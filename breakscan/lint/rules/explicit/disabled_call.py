import libcst as cst

from breakscan.lint.index import DISABLE_NAMES
from breakscan.lint.rule import Example, Rule

NESTED_MESSAGE = "applying torch.compiler.disable inside compiled code is itself skipped (GB0007): the graph breaks here"


class DisabledCall(Rule):
    id = "BS902"
    name = "disabled-call"
    gb_ids = ("GB0098", "GB0099", "GB0007")
    message = "this function is excluded from compilation (torch.compiler.disable): calling it breaks the graph"
    fix_hint = "keep disabled code out of hot paths, or make it traceable (torch.library.custom_op for opaque kernels)"
    docs = """
    ## What it does
    Flags, in compiled code, calls to functions and methods decorated with
    `@torch.compiler.disable` / `@torch._dynamo.disable` (with or without arguments), calls to
    module-level wrappers `f = torch.compiler.disable(g)`, calls to submodules whose `forward`
    is disabled, objects built from classes whose `__init__` is disabled, `with Manager(...):`
    where the class's `__enter__` or `__exit__` is disabled, inline
    `torch.compiler.disable(g)(x)`, loops over an object whose class's `__iter__` is disabled,
    and nested functions decorated inside the compiled code; also functions decorated by a
    decorator of the same module that hands them to `torch.compiler.disable`
    (`wrapped = torch.compiler.disable(fn); return functools.wraps(fn)(wrapped)`). A
    call of a value that may be one of several functions (`self.act = ACTIVATIONS[kind]`, a
    module-level table) of which some are disabled is a warning.

    ## Why is this bad?
    A disabled function is a deliberate hole in the graph: TorchDynamo ends the graph at the
    call, runs the function eagerly and starts a new graph after it (GB0098 "Skip calling
    `torch.compiler.disable()`d function"; GB0099 for `recursive=False` and for disabled methods
    reached through `self`). Applying `torch.compiler.disable` inside compiled code is itself
    skipped (GB0007).

    ## Example
    ```python
    @torch.compiler.disable
    def log_stats(t):
        ...

    def forward(self, x):
        y = self.block(x)
        log_stats(y)
        return y
    ```

    ## Use instead
    Call disabled helpers outside the compiled function, or wrap opaque kernels with
    `torch.library.custom_op` so they become one node in the graph instead of a break.
    """
    invalid = (
        Example("""
            import functools
            import torch

            def reference_impl(fn):
                wrapped = torch.compiler.disable(fn, recursive=True)
                return functools.wraps(fn)(wrapped)

            @reference_impl
            def spatial_hash(coords, table_size):
                return (coords * 2654435761) % table_size

            @torch.compile
            def fn(x):
                idx = spatial_hash((x * 100).long(), 1024)  # break
                return x + idx
        """),
        Example("""
            import torch
            from torch import nn

            def fused(x):
                return torch.relu(x)

            @torch.compiler.disable
            def reference(x):
                return x.clamp(min=0)

            ACTIVATIONS = {"fused": fused, "reference": reference}

            class Block(nn.Module):
                def __init__(self, kind="reference"):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)
                    self.act = ACTIVATIONS[kind]  # one of a table of functions

                def forward(self, x):
                    return self.act(self.lin(x)) * 2  # break
        """, entry="Block()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            @torch.compiler.disable
            def log_stats(t):
                return t.mean()

            @torch.compile
            def fn(x):
                y = x * 2
                log_stats(y)  # break
                return y + 1
        """),
        Example("""
            import torch

            def reference_kernel(t):
                return t.cumsum(0)

            eager_kernel = torch.compiler.disable(reference_kernel)

            class Model(torch.nn.Module):
                @torch._dynamo.disable(recursive=False)
                def gather(self, x):
                    return x.flip(0)

                def forward(self, x):
                    y = eager_kernel(x)  # break
                    return self.gather(y) * 2  # break
        """, entry="Model()"),
        Example("""
            import torch

            def reference_kernel(t):
                return t.cumsum(0)

            @torch.compile
            def fn(x):
                @torch.compiler.disable  # break
                def dump(t):
                    return t.sum()

                y = torch.compiler.disable(reference_kernel)(x)  # break
                dump(y)  # break
                return y + 1
        """),
        Example("""
            import torch

            class Stats:
                @torch.compiler.disable
                def __init__(self, t):
                    self.mean = t.mean()

            @torch.compile
            def fn(x):
                stats = Stats(x)  # break
                return x - stats.mean
        """),
        Example("""
            import torch

            # Bound under another name, as libraries that support several torch versions do.
            no_compile = getattr(torch.compiler, "disable", None)

            @no_compile
            def summarize(t):
                return t.sum().item()

            @torch.compile
            def fn(x):
                total = summarize(x)  # break
                return x * total
        """),
        Example("""
            import torch
            from torch import nn

            class Blocks(nn.ModuleList):
                @torch.compiler.disable
                def __iter__(self):
                    return super().__iter__()

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = Blocks([nn.Linear(4, 4), nn.Linear(4, 4)])

                def forward(self, x):
                    for block in self.blocks:  # break
                        x = block(x)
                    return x
        """, entry="Net()", inputs="torch.randn(2, 4)"),
    )
    valid = (
        Example("""
            import torch

            @torch.compiler.allow_in_graph
            def scale(t):
                return t * 2

            @torch.compiler.disable
            def log_stats(t):
                return t.mean()

            @torch.compile
            def fn(x):
                hook = log_stats
                return scale(x) + 1
        """),
    )

    def __init__(self) -> None:
        self._walk = None
        self._nested: set[str] = set()

    def _nested_disabled(self, ctx) -> set[str]:
        if self._walk is not ctx:  # one context per walk of a function
            self._walk = ctx
            self._nested = set()
        return self._nested

    def on_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        # Only nested definitions reach rules: the walker visits a root's body, not its `def`.
        for decorator in node.decorators:
            expression = decorator.decorator
            if ctx.qualname(expression.func if isinstance(expression, cst.Call) else expression) in DISABLE_NAMES:
                self._nested_disabled(ctx).add(node.name.value)
                ctx.report(self, decorator, NESTED_MESSAGE)

    def on_With(self, node: cst.With, ctx) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call) and ctx.runs_disabled(item.item, ("__enter__", "__exit__")):
                ctx.report(self, item.item)  # `with Timer():` whose `__exit__` is disabled

    def on_For(self, node: cst.For, ctx) -> None:
        if ctx.runs_disabled(node.iter, ("__iter__",)):
            ctx.report(self, node.iter)  # `for layer in self.layers:` whose `__iter__` is disabled

    def on_CompFor(self, node: cst.CompFor, ctx) -> None:
        if ctx.runs_disabled(node.iter, ("__iter__",)):
            ctx.report(self, node.iter)

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Call) and ctx.qualname(func.func) in DISABLE_NAMES:
            ctx.report(self, node)  # torch.compiler.disable(g)(x)
        elif isinstance(func, cst.Name) and func.value in self._nested_disabled(ctx):
            ctx.report(self, node)
        elif len(callees := ctx.callees(node)) > 1 and any(c.disabled for c in callees):
            disabled = [c.qualname for c in callees if c.disabled]
            if len(disabled) == len(callees):
                ctx.report(self, node)
            else:  # `self.attn_fn`, one of a table of functions
                ctx.report(self, node, f"`{ctx.code(node.func)}` may be {', '.join(sorted(c.qualname for c in callees))}; "
                                       f"{', '.join(disabled)} is excluded from compilation (torch.compiler.disable): "
                                       "the graph breaks here whenever it is that one", severity="warning")
        elif ctx.calls_disabled(node):
            ctx.report(self, node)
