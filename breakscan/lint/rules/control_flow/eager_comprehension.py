import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class EagerComprehension(Rule):
    id = "BS207"
    name = "comprehension-after-unresumable-break"
    gb_ids = ("GB4347",)
    message = ("this comprehension runs eagerly, after a graph break TorchDynamo cannot resume from (in a `try` "
               "block or a loop): TorchDynamo then compiles it as a frame of its own, and cannot step its "
               "list or dict iterator (GB4347)")
    fix_hint = "fix the earlier break (then the function resumes in a compiled frame), or build the result with a loop"
    docs = """
    ## What it does
    Flags a list, set or dict comprehension over a list, a dict or a dict's `items()`, `keys()`
    or `values()` in compiled code that runs
    after a graph break TorchDynamo cannot resume from: a break inside a `try` block's body (the
    rest of the function then runs eagerly), or a break inside a loop (TorchDynamo skips the
    whole frame it was tracing, from the last break it resumed after).

    ## Why is this bad?
    Python 3.11 runs a comprehension as a function of its own, called with an iterator over the
    iterable. In code that runs eagerly, TorchDynamo compiles that inner function as a new frame
    and meets the iterator as its argument: a `list_iterator` or `dict_keyiterator` it cannot
    step ("Missing tp_iternext", GB4347). The comprehension breaks on every call, on top of the
    break that made the code eager. A comprehension over a `range` or a tuple is stepped fine; in
    code TorchDynamo resumes normally the comprehension is traced with its function.

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
                try:
                    y = helper(x)
                    zs = [y * i for i in range(3)]
                finally:
                    pass
                return zs
        """),
    )

    def on_ListComp(self, node: cst.ListComp, ctx) -> None:
        self._check(node, ctx)

    def on_SetComp(self, node: cst.SetComp, ctx) -> None:
        self._check(node, ctx)

    def on_DictComp(self, node: cst.DictComp, ctx) -> None:
        self._check(node, ctx)

    def _check(self, node: cst.ListComp | cst.SetComp | cst.DictComp, ctx) -> None:
        iterable = node.for_in.iter
        if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
                and iterable.func.attr.value in _DICT_VIEWS and not iterable.args):
            iterable = iterable.func.value  # `d.items()`: its iterator is the dict's kind too
        if v.sort_of(ctx.value(iterable)) in ("list", "dict"):
            ctx.report(self, node, only_if_eager=True)


_DICT_VIEWS = frozenset({"items", "keys", "values"})
