import libcst as cst

from breakscan.lint.rule import Example
from breakscan.lint.rules.control_flow.breaking_call_in_comprehension import BreakingCallInComprehension
from breakscan.lint.semantics.iteration import iterated_sort


class BreakingCallInEnumerate(BreakingCallInComprehension):
    """BS216's question for `enumerate(...)`: TorchDynamo steps through it as a generator."""

    id = "BS217"
    name = "breaking-call-in-enumerate-comprehension"
    gb_ids = ("GB8335",)
    message = ("this comprehension steps through `enumerate(...)` and calls, for each item, a function that breaks: "
               "to resume after that break TorchDynamo must rebuild the half-stepped enumerate generator, which it "
               "cannot (GB8335), so it gives up on the whole function, which runs eagerly")
    fix_hint = ("fix the break inside the called function; or count by hand over a list "
                "(`[f(i, t) for i, t in zip(range(len(parts)), parts)]`), whose iterators TorchDynamo can rebuild")
    docs = """
    ## What it does
    Flags a list, set or dict comprehension in compiled code that iterates `enumerate(...)` of a
    list, a tuple or a tensor (directly, or as one of `zip`'s iterables), and whose item calls a
    scanned function, method or module that breaks the graph on every path through it. Not
    `enumerate(range(n))` nor `enumerate(d.items())`, which TorchDynamo resumes after (probed). A
    break written in the item itself (`[t.item() * i for i, t in enumerate(parts)]`) makes it give
    up on the function too; that break's own rule reports it.

    ## Why is this bad?
    TorchDynamo 2.13 runs `enumerate` as a generator. When a function called for an item breaks,
    it must rebuild that generator, half-stepped, to resume the comprehension, and cannot
    ("Generator reconstruction with mutations", GB8335). It then gives up on the whole function:
    none of it is compiled, not even the code before the comprehension (probed), and the called
    function is compiled as a frame of its own.

    ## Example
    ```python
    outs = [head(x) * w for i, (head, w) in enumerate(zip(heads, weights))]   # each head breaks
    ```

    ## Use instead
    Fix the break in the called function; or count with a `range` zipped in, which TorchDynamo
    can rebuild: `[head(x) * i for head, i in zip(heads, range(len(heads)))]`.
    """
    invalid = (
        Example("""
            import torch

            def normalize(t):
                print("normalizing", t.shape)  # break (another rule)
                return t / t.norm()

            @torch.compile
            def fn(x):
                y = x.sin()
                parts = [y, y * 2]
                scaled = [normalize(t) * i for i, t in enumerate(parts)]  # break
                return sum(scaled)
        """, inputs="torch.rand(4)"),
        Example("""
            import torch

            def decode(row):
                return row * len(row.tolist())  # break (another rule)

            @torch.compile
            def fn(x):
                y = x.cos()
                rows = [decode(r) + i for i, r in enumerate(y)]  # break
                return torch.stack(rows)
        """, inputs="torch.rand(3, 2)"),
    )
    valid = (
        Example("""
            import torch

            def normalize(t):
                print("normalizing", t.shape)  # break (another rule)
                return t / t.norm()

            @torch.compile
            def fn(x):
                y = x.sin()
                scaled = [normalize(y * i) for i, _ in enumerate(range(2))]  # a range's iterator: rebuilt
                named = {"a": y, "b": y * 2}
                shifted = [normalize(t) + i for i, (k, t) in enumerate(named.items())]
                return sum(scaled) + sum(shifted)
        """, inputs="torch.rand(4)"),
        Example("""
            import torch

            def normalize(t):
                return t / t.norm()

            @torch.compile
            def fn(x):
                parts = [x, x * 2]
                return sum(normalize(t) * i for i, t in enumerate(parts))  # nothing breaks
        """, inputs="torch.rand(4)"),
    )

    abandons_frame = True

    def cannot_rebuild(self, iterable: cst.BaseExpression, ctx) -> bool:
        if not (isinstance(iterable, cst.Call) and ctx.qualname(iterable.func) == "builtins.enumerate"
                and iterable.args and iterable.args[0].keyword is None and not iterable.args[0].star):
            return False
        counted = iterable.args[0].value
        if isinstance(counted, cst.Call) and ctx.qualname(counted.func) == "builtins.range":
            return False
        return iterated_sort(counted, ctx) != "dict"
