import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import object_method_break


class HeldIteratorAdvanced(Rule):
    id = "BS215"
    name = "held-iterator-advanced"
    gb_ids = ("GB4347", "GB0811", "GB0253")
    message = ("this advances an iterator built outside the compiled code (kept by the module or the program): "
               "TorchDynamo cannot step an iterator it did not make: the graph breaks here")
    fix_hint = ("take the next item outside the compiled code and pass it in (`batch = next(self.batches)` "
                "before calling the compiled step), or make the iterator inside the compiled code")
    docs = """
    ## What it does
    Flags `next(it)`, a `for` loop over `it` and a generator's `send()`, `throw()` and
    `__next__()` in compiled code, where `it` is an iterator the model keeps from call to call:
    an attribute (of an nn.Module, or of an object only ever built in an `__init__` and stored
    there: a plain object the compiled code builds makes its iterator while traced) or a
    module-level name set to what calls `iter(...)`, `zip`, `map`,
    `enumerate`, `filter`, `reversed`, `itertools.cycle`/`chain`/`islice`/`repeat` or a
    generator function (a coroutine kept primed: `self.acc = running_stats(); next(self.acc)`)
    give. Which of them break is read from the catalogue, which probes each on an object made
    outside the compiled function; `itertools.count` is traced.

    ## Why is this bad?
    TorchDynamo models the iterators the compiled code makes itself, but it has no way to step
    one that already exists: `next()` on it is "Missing tp_iternext" (GB4347), a `for` loop
    "Missing tp_iter" (GB0811), a generator's `send()` "call_method on generator" (GB0253). The
    graph ends there, on every call, and the step runs eagerly.

    ## Example
    ```python
    class Trainer(nn.Module):
        def __init__(self, loader):
            super().__init__()
            self.batches = itertools.cycle(loader)

        def forward(self):
            x, y = next(self.batches)   # breaks
            return self.loss(self.net(x), y)
    ```

    ## Use instead
    ```python
        def forward(self, x, y):
            return self.loss(self.net(x), y)

    x, y = next(batches)    # outside the compiled code
    loss = compiled(x, y)
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            def running_mean():
                count, mean = 0, None
                while True:
                    frame = yield mean
                    count += 1
                    mean = frame if mean is None else mean + (frame - mean) / count

            class Normalizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.acc = running_mean()
                    next(self.acc)

                def forward(self, x):
                    mean = self.acc.send(x.detach())  # break
                    return x - mean
        """, entry="Normalizer()"),
        Example("""
            import itertools
            import torch
            from torch import nn

            class Mixer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.weights = itertools.cycle([0.25, 0.5, 0.75])

                def forward(self, x):
                    return x * next(self.weights)  # break
        """, entry="Mixer()"),
        Example("""
            import torch

            OFFSETS = iter([0.1 * i for i in range(100)])

            @torch.compile
            def fn(x):
                for offset in OFFSETS:  # break
                    return x + offset
                return x
        """),
    )
    valid = (
        Example("""
            import itertools
            import torch
            from torch import nn

            class Counter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.steps = itertools.count()

                def forward(self, x):
                    pairs = iter([(x, 1.0), (x * 2, 2.0)])
                    first, scale = next(pairs)
                    return first * scale + next(self.steps)
        """, entry="Counter()"),
        Example("""
            import torch

            def pairs(x):
                yield x, 1.0
                yield x * 2, 2.0

            @torch.compile
            def fn(x):
                total = x
                for item, scale in pairs(x):
                    total = total + item * scale
                return total
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if ctx.qualname(func) == "builtins.next" and node.args:
            self._advanced(node, node.args[0].value, "__next__", ctx)
        elif isinstance(func, cst.Attribute) and func.attr.value in ("send", "throw", "__next__"):
            self._advanced(node, func.value, func.attr.value, ctx)

    def on_For(self, node: cst.For, ctx) -> None:
        self._advanced(node.iter, node.iter, "__iter__", ctx)

    def _advanced(self, node: cst.CSTNode, iterator: cst.BaseExpression, method: str, ctx) -> None:
        held = ctx.value(iterator)
        if not (isinstance(held, v.ModuleValue) and not held.fresh and len(held.classes) == 1):
            return
        if isinstance(iterator, cst.Attribute) and ctx.value(iterator.value) == v.SELF and not _kept(ctx):
            return  # a plain object's, which the compiled code may build (its `__init__` traced with it)
        cls = next(iter(held.classes))
        if object_method_break(cls, method):
            ctx.report(self, node, f"this advances `{ctx.code(iterator)}`, {_described(cls)} built outside the "
                                   "compiled code: TorchDynamo cannot step an iterator it did not make: the graph "
                                   "breaks here")


def _kept(ctx) -> bool:
    """Whether the object whose method this is lives from call to call: an nn.Module, or an object
    of a class only ever built in an `__init__` and stored there."""
    cls = ctx.self_class
    return cls is not None and (ctx.self_is_module() or ctx.held_class(cls))


def _described(cls: str) -> str:
    """"a generator", "an `itertools.cycle`"."""
    if cls == "builtins.generator":
        return "a generator"
    if cls == "builtins.iterator":
        return "an iterator (`iter(...)`)"
    return f"a `{cls.removeprefix('builtins.')}` iterator"
