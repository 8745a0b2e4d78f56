import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.state import persistent_attribute
from breakscan.lint.traverse import find_nodes, parent_map


class ContainerAttributeGrown(Rule):
    id = "BR009"
    name = "container-attribute-grown"
    kind = "recompile"
    gb_ids = ()
    message = ("a list attribute of the module grows here on every call of the compiled code: TorchDynamo guards "
               "on its length, so every call recompiles (until the recompile limit, then the function runs eagerly)")
    fix_hint = ("keep what the calls collect outside the compiled code (return it, and append it in the caller), "
                "or in a preallocated tensor buffer")
    docs = """
    ## What it does
    Flags a list, dict or set attribute of an `nn.Module` (built as `[]`, `{}`, `set()`,
    `collections.deque(maxlen=n)` (a list to TorchDynamo: it recompiles until the deque is full),
    `OrderedDict()`... in `__init__`), of the object whose method is compiled, or of an object of a class only ever
    built in an `__init__` and stored there (a helper the module holds), that the compiled code adds to
    (`append`, `extend`, `insert`, `+=`, `add`, `update`, `setdefault`, `d[key] = ...`) without
    taking anything out of it on every call (`pop`, `remove`, `clear`, `discard`, `del`, or
    storing a new container, outside any `if`: a cache evicted only when full grows until then).
    Reported where TorchDynamo installs the guard that fails: where the function first reads a
    list or a set; for a dict, where it first tests a key (`if key not in self.cache:`, guarded as
    a constant), else where `len()` reads it, else where it gives it a key (the guard on its
    emptiness: after a lookup in a `try`, say).

    ## Why is this bad?
    TorchDynamo guards on the length of a list it reads from an attribute (`len(self.history) ==
    2`), on whether a dict or set is empty and on a set's contents. A list the compiled code
    appends to on every call fails that guard on every next call: the function compiles again each
    time, and after 8 recompiles (`torch._dynamo.config.recompile_limit`) it runs eagerly: an
    error. A dict given a key, or a set an element, fails it when the key or the element is new:
    once, for keys the same from call to call (a warning). A list appended to and popped from in
    the same call keeps its length, and is not flagged.

    ## Example
    ```python
    def forward(self, x):
        self.history.append(x.mean())     # `self.history = []` in __init__
        return x * 2
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return x * 2, x.mean()            # the caller keeps the history
    ```
    """
    invalid = (
        Example("""
            from collections import deque

            import torch
            from torch import nn

            class Smoother:
                def __init__(self, window=3):
                    self.history = deque(maxlen=window)

                def __call__(self, probs):
                    self.history.append(probs)  # recompile
                    return torch.stack(tuple(self.history)).mean(0)

            class Segmenter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cls = nn.Linear(4, 3)
                    self.smoother = Smoother()

                def forward(self, x):
                    return self.smoother(self.cls(x).softmax(-1))
        """, entry="Segmenter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Tracker(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.history = []

                def forward(self, x):
                    self.history.append(x.mean())  # recompile
                    return x * 2
        """, entry="Tracker()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Stats(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stats = {}
                    self.seen = set()

                def forward(self, x):
                    y = x * 2
                    self.stats["mean"] = y.mean()  # recompile
                    return y
        """, entry="Stats()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Shapes(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.seen = set()

                def forward(self, x):
                    self.seen.add(x.shape[0])  # recompile
                    return x * 2
        """, entry="Shapes()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Memo(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cache = {}

                def forward(self, x):
                    key = x.shape[0]
                    if key not in self.cache:  # recompile
                        self.cache[key] = torch.arange(key) * 2
                    return x + self.cache[key]
        """, entry="Memo()", inputs="[torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Anchors(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cache = {}

                def grid(self, n):
                    try:
                        return self.cache[n]
                    except KeyError:
                        pass
                    grid = torch.arange(n) * 4
                    self.cache[n] = grid  # recompile
                    return grid

                def forward(self, x):
                    return x + self.grid(x.shape[0])
        """, entry="Anchors()", inputs="[torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Recent(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.means = {}

                def forward(self, x):
                    if len(self.means) >= 8:  # recompile
                        self.means.pop(next(iter(self.means)))  # evicted when full only: it grows until then
                    self.means[len(self.means)] = x.mean()
                    return x * 2
        """, entry="Recent()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch
            from torch import nn

            class FrameContext:
                def __init__(self, max_chunks=3):
                    self.max_chunks = max_chunks
                    self.chunks = []

                def push(self, chunk):
                    self.chunks.append(chunk.detach())  # recompile
                    if len(self.chunks) > self.max_chunks:  # evicted only once full: it grows until then
                        self.chunks.pop(0)
                    return torch.cat(self.chunks, dim=-1)

            class Streamer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.conv = nn.Conv1d(2, 2, 3, padding=1)
                    self.context = FrameContext()  # held by the module: its list outlives each call

                def forward(self, x):
                    return self.conv(self.context.push(x)).mean(-1)

            BREAKSCAN_TARGETS = {"Streamer()": "[torch.randn(1, 2, 4), torch.randn(1, 2, 4), torch.randn(1, 2, 4)]"}
        """, entry="Streamer()", inputs="[torch.randn(1, 2, 4), torch.randn(1, 2, 4), torch.randn(1, 2, 4)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Trace:
                def __init__(self):
                    self.names = []

                def mark(self, name):
                    self.names.append(name)  # called where forward runs eagerly: a frame with no tensor, never compiled

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trace = Trace()
                    self.fc = nn.Linear(4, 4)

                def forward(self, x):
                    for step in range(2):
                        self.trace.mark(f"step {step}")
                        x = self.fc(x)
                        print("step done")  # break (another rule)
                    return x
        """, entry="Net()", inputs="[torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4)]"),
        Example("""
            import torch

            class Window(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.window = [torch.zeros(())]

                def forward(self, x):
                    self.window.append(x.mean())
                    self.window.pop(0)  # the length stays what it was
                    return x * 2
        """, entry="Window()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Local(torch.nn.Module):
                def forward(self, x):
                    parts = []
                    parts.append(x * 2)  # a list of this call's own
                    return torch.cat(parts)
        """, entry="Local()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )

    def __init__(self) -> None:
        self.first_reads: dict[str, cst.Attribute] = {}  # attribute -> its first read in the function
        self.sized: dict[str, cst.Attribute] = {}  # attribute -> its first `len(...)` in the function
        self.reported: set[str] = set()

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        name = persistent_attribute(node, ctx, held=True)
        if name is not None:
            self.first_reads.setdefault(name, node)

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _GROWING:
            self._grown(func.value, ctx)
        elif len(node.args) == 1 and isinstance(node.args[0].value, cst.Attribute) and ctx.qualname(func) == "builtins.len":
            name = persistent_attribute(node.args[0].value, ctx, held=True)
            if name is not None:
                self.sized.setdefault(name, node.args[0].value)

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._grown(node.target, ctx)

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):  # `self.stats["mean"] = ...`
                self._grown(target.target.value, ctx)

    def _grown(self, holder: cst.BaseExpression, ctx) -> None:
        name = persistent_attribute(holder, ctx, held=True)
        if name is None or name in self.reported:
            return
        assert isinstance(holder, cst.Attribute)
        self.first_reads.setdefault(name, holder)
        sort = v.sort_of(ctx.value(holder))
        # A helper object's dict is often refilled under the same keys on every call (hook outputs):
        # only what such an object appends to is taken to grow.
        kept = persistent_attribute(holder, ctx) is not None
        if sort not in (("list", "dict", "set") if kept else ("list",)) or name in ctx.memoised(
                _shrunk_attributes, ctx.function.node):
            return
        self.reported.add(name)
        if sort == "list":
            ctx.report(self, self.first_reads[name])
        else:
            read = self.first_reads[name]
            if sort == "dict" and not _tests_constant_key(read, ctx):
                # The guard that fails is on its length or emptiness: where `len()` reads it, else
                # where its first key is stored.
                read = self.sized.get(name, holder)
            what = "a dict attribute of the module is given a key" if sort == "dict" else (
                "a set attribute of the module is given an element")
            ctx.report(self, read, f"{what} in compiled code: TorchDynamo guards on whether it is empty (a set, on "
                                   "its contents), so a call recompiles whenever the key or element is new (once, "
                                   "for one the same from call to call)", severity="warning")


def _tests_constant_key(read: cst.Attribute, ctx) -> bool:
    """`key in self.cache` / `not in`, with a key TorchDynamo guards as a constant: anything but a
    tensor (probed with ints, strings and tuples of them; an address from `data_ptr()` is not
    guarded so, which the lint does not tell apart)."""
    parents = ctx.memoised(parent_map, ctx.function.top_statement)
    target, comparison = parents.get(id(read)), parents.get(id(parents.get(id(read))))
    if not (isinstance(target, cst.ComparisonTarget) and isinstance(target.operator, (cst.In, cst.NotIn))
            and isinstance(comparison, cst.Comparison) and len(comparison.comparisons) == 1):
        return False
    return ctx.value(comparison.left) not in (v.TENSOR, v.MAYBE_TENSOR)


_GROWING = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
_SHRINKING = frozenset({"pop", "popitem", "remove", "discard", "clear"})


def _shrunk_attributes(function: cst.FunctionDef) -> frozenset[str]:
    """The attributes of `self` the function takes something out of, or stores anew
    (`self.items = []`), on every call: what it adds to them may not change their length from call
    to call. Not in a branch: a cache evicted when full (`if len(self.cache) >= n:`) grows until then."""
    shrunk = set()
    for node in find_nodes(function.body, (cst.Call, cst.Assign, cst.Del), prune=(cst.If, cst.IfExp)):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _SHRINKING:
                shrunk.add(_self_attribute(func.value))
        elif isinstance(node, cst.Assign):
            shrunk.update(_self_attribute(t.target) for t in node.targets)
        else:
            target = node.target
            shrunk.add(_self_attribute(target.value if isinstance(target, cst.Subscript) else target))
    return frozenset(shrunk - {None})


def _self_attribute(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None
