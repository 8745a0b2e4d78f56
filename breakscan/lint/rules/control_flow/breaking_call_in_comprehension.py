import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.iteration import iterated_sort
from breakscan.lint.traverse import find_nodes


class BreakingCallInComprehension(Rule):
    id = "BS216"
    name = "breaking-call-in-dict-comprehension"
    gb_ids = ("GB0092", "GB4347")
    message = ("this comprehension steps through a dict or a module container and calls, for each item, a "
               "function that breaks: to resume after that break TorchDynamo must rebuild the comprehension's "
               "half-stepped dict iterator, which it cannot (GB0092, GB4347), so it breaks here too and runs the "
               "rest of the function eagerly")
    fix_hint = ("fix the break inside the called function; or step through a list of the items "
                "(`for layer in list(self.layers)`, `for k, v in list(d.items())`), whose iterator TorchDynamo "
                "can rebuild")
    docs = """
    ## What it does
    Flags a list, set or dict comprehension in compiled code that iterates a dict, one of its
    views (`d.items()`, `d.values()`, `d.keys()`) or an `nn.ModuleList`, `nn.ModuleDict` or
    `nn.Sequential` (directly, or as one of `zip`'s iterables), and whose item calls a scanned
    function, method or module that breaks the graph on every path through it (`[head(x) for
    head in self.heads]` where each head prints; not a function that breaks in a branch only). Not a break written in the item itself (`[v.item() for v in d.values()]`),
    nor a comprehension over a list, a tuple, a `range` or `enumerate(...)`: those TorchDynamo
    resumes after (probed).

    ## Why is this bad?
    Python 3.11 runs a comprehension as a function of its own, given an iterator over the
    iterable, and TorchDynamo traces it inline. When a function called for an item breaks, it
    resumes the comprehension in generated code and must rebuild that iterator, half-stepped: a
    dict's (a module container iterates its `_modules` dict) it cannot rebuild ("Reconstruction
    failure", GB0092; "Missing tp_iternext", GB4347). It compiles the function up to the
    comprehension and runs the rest of it eagerly: what follows is lost, not only split.

    ## Example
    ```python
    def forward(self, x):
        return torch.stack([head(x) for head in self.heads])   # each head breaks
    ```

    ## Use instead
    Fix the break in the head; or, if it must stay, step through a list:
    ```python
    def forward(self, x):
        return torch.stack([head(x) for head in list(self.heads)])
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)

                def forward(self, x):
                    print("head", x.shape)  # break (another rule)
                    return self.lin(x)

            class MultiHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = nn.ModuleList(Head() for _ in range(2))

                def forward(self, x):
                    return torch.stack([head(x) for head in self.heads]).mean(0)  # break
        """, entry="MultiHead()", inputs="torch.randn(3, 4)"),
        Example("""
            import torch

            def normalize(t):
                print("normalizing", t.shape)  # break (another rule)
                return t / t.norm()

            @torch.compile
            def fn(x):
                features = {"a": x, "b": x * 2}
                scaled = {name: normalize(t) for name, t in features.items()}  # break
                return sum(scaled.values())
        """, inputs="torch.rand(4)"),
        Example("""
            import torch
            from torch import nn

            class Adapter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 4)})

                def check(self, t):
                    if t.sum() > 0:  # break (another rule)
                        return t
                    return -t

                def forward(self, xs):
                    return [self.check(block(x)) for block, x in zip(self.blocks.values(), xs)]  # break
        """, entry="Adapter()", inputs="([torch.randn(2, 4), torch.randn(2, 4)],)"),
    )
    valid = (
        Example("""
            import os

            import torch

            def as_tensor(item):
                if isinstance(item, str) and os.path.exists(item):  # a path only: breaks on that path
                    return torch.load(item)
                return item

            @torch.compile
            def fn(x):
                named = {"a": x, "b": x * 2}
                return torch.stack([as_tensor(t) for t in named.values()]).sum(0)
        """, inputs="torch.rand(4)"),
        Example("""
            import torch

            def normalize(t):
                print("normalizing", t.shape)  # break (another rule)
                return t / t.norm()

            @torch.compile
            def fn(x):
                features = [x, x * 2]
                scaled = [normalize(t) for t in features]  # a list's iterator: rebuilt
                return sum(scaled)
        """, inputs="torch.rand(4)"),
        Example("""
            import torch

            def normalize(t):
                return t / t.norm()

            @torch.compile
            def fn(x):
                features = {"a": x, "b": x * 2}
                scaled = {name: normalize(t) for name, t in features.items()}  # nothing breaks
                return sum(scaled.values())
        """, inputs="torch.rand(4)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                features = {"a": x, "b": x * 2}
                totals = [t.sum().item() for t in features.values()]  # break (another rule)
                return torch.tensor(totals)
        """, inputs="torch.rand(4)"),
    )

    def __init__(self) -> None:
        self.reported: set[int] = set()
        # `id` of each call in the item of a comprehension met so far -> the innermost one (the walk
        # meets a comprehension before the calls in it)
        self.held_by: dict[int, cst.ListComp | cst.SetComp | cst.DictComp] = {}

    def on_ListComp(self, node: cst.ListComp, ctx) -> None:
        self._met(node)

    def on_SetComp(self, node: cst.SetComp, ctx) -> None:
        self._met(node)

    def on_DictComp(self, node: cst.DictComp, ctx) -> None:
        self._met(node)

    def _met(self, comprehension: cst.ListComp | cst.SetComp | cst.DictComp) -> None:
        for item in _item_nodes(comprehension):
            for call in find_nodes(item, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)):
                self.held_by[id(call)] = comprehension

    def on_Call(self, node: cst.Call, ctx) -> None:
        comprehension = self.held_by.get(id(node))
        if comprehension is None or id(comprehension) in self.reported:
            return
        iterable = comprehension.for_in.iter
        iterables = ([a.value for a in iterable.args if a.keyword is None and not a.star]
                     if isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) == "builtins.zip" else [iterable])
        if not any(self.cannot_rebuild(it, ctx) for it in iterables):
            return
        items = _item_nodes(comprehension)
        calls = [call for item in items for call in find_nodes(item, (cst.Call,), prune=(cst.Lambda,))
                 if isinstance(call, cst.Call)]
        callees = [callee for call in calls for callee in ctx.callees(call, constructors=True)]
        if callees:
            self.reported.add(id(comprehension))
            # Only a function that breaks on every path: one that breaks in a branch (loading an
            # image given a path) may return what it was given, and the comprehension goes on.
            ctx.report(self, comprehension, if_callees_break=tuple(callees), callees_surely=True,
                       skips_frame=not self.abandons_frame, abandons_frame=self.abandons_frame)

    # What TorchDynamo does when it cannot rebuild the iterator: it gives up on the whole frame
    # (True) or compiles the frame up to the comprehension and runs the rest eagerly (False).
    abandons_frame = False

    def cannot_rebuild(self, iterable: cst.BaseExpression, ctx) -> bool:
        """Whether TorchDynamo cannot rebuild the comprehension's iterator over `iterable`, half-stepped."""
        return iterated_sort(iterable, ctx) in ("dict", "modules")


def _item_nodes(comprehension: cst.ListComp | cst.SetComp | cst.DictComp) -> tuple[cst.BaseExpression, ...]:
    """What the comprehension computes for each item: its element, or its key and value."""
    if isinstance(comprehension, cst.DictComp):
        return comprehension.key, comprehension.value
    return (comprehension.elt,)
