import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.iteration import iterated_sort
from breakscan.lint.traverse import find_nodes, subtree_ids


class EagerComprehension(Rule):
    id = "BS207"
    name = "comprehension-after-unresumable-break"
    gb_ids = ("GB4347",)
    message = ("this comprehension runs eagerly, after a graph break TorchDynamo cannot resume from (in a `try` "
               "block, a loop or a `with` block it cannot break under): TorchDynamo then compiles it as a frame "
               "of its own, and cannot step its list, dict or module container's iterator (GB4347)")
    fix_hint = "fix the earlier break (then the function resumes in a compiled frame), or build the result with a loop"
    docs = """
    ## What it does
    Flags a list, set or dict comprehension over a list, a dict or a dict's `items()`, `keys()`
    or `values()`, or over an `nn.ModuleList`, `nn.Sequential`, `nn.ModuleDict` or parameter
    container (and their views) in compiled code that runs
    after a graph break TorchDynamo cannot resume from: a break inside a `try` block's body (the
    rest of the function then runs eagerly), inside the `with` block of a context manager it
    cannot break under (a `@contextmanager` function or method, an object with its own
    `__enter__`), or inside a loop (TorchDynamo skips the whole frame it was tracing, from the
    last break it resumed after). `*args` is a tuple and `**kwargs` a dict.

    ## Why is this bad?
    Python 3.11 runs a comprehension as a function of its own, called with an iterator over the
    iterable. In code that runs eagerly, TorchDynamo compiles that inner function as a new frame
    and meets the iterator as its argument: a `list_iterator` or `dict_keyiterator` it cannot
    step ("Missing tp_iternext", GB4347). The comprehension breaks on every call, on top of the
    break that made the code eager. A comprehension over a `range` or a tuple is stepped fine; in
    code TorchDynamo resumes normally the comprehension is traced with its function.

    TorchDynamo compiles a frame only when it sees torch in it: a name the comprehension reads
    from the function holding a tensor, an nn.Module (`self` in a module's method) or a list,
    tuple or dict of tensors, or a global naming a torch module (or a NumPy one). A comprehension
    over Python values alone (`[names[i] for i in order]`) runs eagerly and does not break. When
    a name it reads holds a value breakscan cannot tell, the finding is a warning that names it.

    ## Example
    ```python
    def forward(self, x):
        order = list(range(len(self.keys)))
        try:
            x = self.helper(x)        # breaks: the rest of forward runs eagerly
            outs = [x * i for i in order]
        finally:
            self.reset()
        return outs
    ```

    ## Use instead
    ```python
    def forward(self, x):
        x = self.helper(x)            # out of the try block: TorchDynamo resumes after it
        return [x * i for i in range(len(self.keys))]
    ```
    """
    invalid = (
        Example("""
            import torch

            def helper(x):
                torch._dynamo.graph_break()  # break (another rule)
                return x + 1

            @torch.compile
            def fn(x):
                order = [1, 2]
                order.insert(0, order.pop())
                try:
                    y = helper(x)
                    zs = [y * i for i in order]  # break
                finally:
                    pass
                return zs
        """),
        Example("""
            import torch

            def helper(x):
                torch._dynamo.graph_break()  # break (another rule)
                return x + 1

            @torch.compile
            def fn(x):
                names = {"a": 1, "b": 2}
                parts = {k: x * w for k, w in names.items()}  # break
                for _ in range(2):
                    x = helper(x)
                order = list(range(2))
                return [x * i for i in order], parts  # break
        """),
        Example("""
            import contextlib

            import torch
            from torch import nn

            class Wrapper(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.reserved = ["scale"]

                @contextlib.contextmanager
                def hooks(self):
                    yield

                def forward(self, x, **kwargs):
                    with self.hooks():
                        torch._dynamo.graph_break()  # break (another rule)
                        kept = {k: w for k, w in kwargs.items() if k not in self.reserved}  # break
                        return x * (len(kept) + 1)
        """, entry="Wrapper()"),
        Example("""
            import torch
            from torch import nn

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
                    self.heads = nn.ModuleDict({"a": nn.Linear(8, 2)})

                def forward(self, x):
                    for _ in range(2):
                        torch._dynamo.graph_break()  # break (another rule)
                    outs = [block(x) for block in self.blocks]  # break
                    return outs, [head(x) for head in self.heads.values()]  # break
        """, entry="Stack()"),
    )
    valid = (
        Example("""
            import torch

            def helper(x):
                torch._dynamo.graph_break()  # break (another rule)
                return x + 1

            @torch.compile
            def fn(x):
                order = [1, 2]
                y = helper(x)
                return [y * i for i in order]
        """),
        Example("""
            import torch

            def helper(x):
                torch._dynamo.graph_break()  # break (another rule)
                return x + 1

            @torch.compile
            def fn(x):
                names = ["a", "b"]
                order = [1, 0]
                try:
                    y = helper(x)
                    zs = [y * i for i in range(3)]
                    picked = [names[i] for i in order]
                finally:
                    pass
                return zs, picked
        """),
    )

    def on_ListComp(self, node: cst.ListComp, ctx) -> None:
        self._check(node, ctx)

    def on_SetComp(self, node: cst.SetComp, ctx) -> None:
        self._check(node, ctx)

    def on_DictComp(self, node: cst.DictComp, ctx) -> None:
        self._check(node, ctx)

    def _check(self, node: cst.ListComp | cst.SetComp | cst.DictComp, ctx) -> None:
        if iterated_sort(node.for_in.iter, ctx) is None:
            return
        traced, unsure = _compiled_frame(node, ctx)
        if traced:
            ctx.report(self, node, only_if_eager=True)
        elif unsure is not None:
            ctx.report(self, node, only_if_eager=True, unknown=unsure)


def _compiled_frame(node: cst.ListComp | cst.SetComp | cst.DictComp, ctx) -> tuple[bool, cst.Name | None]:
    """Whether TorchDynamo compiles the comprehension's own frame, and else the name that decides
    it when its value is not known. It compiles a frame only when it sees torch there
    (`has_tensor_in_frame`): a global naming a torch (or, tracing NumPy, a NumPy) module, or a
    local holding a tensor, an nn.Module or a list, tuple or dict of tensors. The comprehension's
    locals are the function's names it reads; the iterable of its first `for` is not one (the
    function evaluates it and passes an iterator)."""
    outside = subtree_ids(node.for_in.iter)
    outside |= {id(a.attr) for a in find_nodes(node, (cst.Attribute,))}
    outside |= {id(a.keyword) for a in find_nodes(node, (cst.Arg,)) if a.keyword is not None}
    own = {n.value for comp in find_nodes(node, (cst.CompFor,)) for n in find_nodes(comp.target, (cst.Name,))}
    unsure = None
    for name in find_nodes(node, (cst.Name,)):
        if id(name) in outside or name.value in own:
            continue
        value = ctx.local_value(name.value)
        if value is None:
            module = ctx.qualname(name)
            if module and catalogue.is_library_module(module) and (
                    not module.startswith("numpy") or ctx.dynamo.enabled("trace_numpy")):
                return True, None
            continue
        holds = _holds_torch(value, ctx)
        if holds:
            return True, None
        if holds is None and unsure is None:
            unsure = name
    return False, unsure


def _holds_torch(value: v.Value, ctx) -> bool | None:
    """What `has_tensor_in_frame` finds in a local: a tensor, a module, or a container of them;
    None when the value is not known."""
    if ctx.is_module(value) or (value == v.SELF and ctx.self_is_module()) or (
            isinstance(value, v.Kind) and (value.family or value.name) in ("tensor", "tensors")):
        return True
    if value in (v.UNKNOWN, v.MAYBE_TENSOR):
        return None
    inside = v.held(value)
    return False if inside is None else _holds_torch(inside, ctx)
