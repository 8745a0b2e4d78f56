import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

# Iterating a dict view leaves nothing TorchDynamo has to rebuild when the callee breaks
# (measured: no second break); when an item breaks as it is made, it does not help (measured).
_DICT_VIEWS = frozenset({"items", "keys", "values"})
_CONSUMING_BUILTINS = frozenset(f"builtins.{name}" for name in (
    "all", "any", "sum", "min", "max", "list", "tuple", "set", "frozenset", "sorted", "dict"))
ITEMS_BREAK = ("this call steps through a generator whose items break as they are made: TorchDynamo cannot "
               "rebuild the half-consumed generator to resume after that break (GB8335, or GB0091 when the "
               "generator reads the caller's variables), so it breaks here too and runs the rest of the function "
               "eagerly")


class GeneratorArgument(Rule):
    id = "BS211"
    name = "break-in-call-given-a-generator"
    gb_ids = ("GB8335", "GB0091")
    message = ("this call is given a generator, and the function it calls breaks: TorchDynamo cannot rebuild the "
               "half-consumed generator to resume after that break (GB8335, or GB0091 when the generator reads "
               "the caller's variables), so it breaks here too and runs the rest of the function eagerly")
    fix_hint = ("fix the break inside the called function or in the generator's items; or, for a break in the "
                "function, pass a list or a tuple instead of a generator: `f(*[t(c) for t in ts])`")
    docs = """
    ## What it does
    Flags a call of a scanned function or class that is given a generator, unpacked
    (`Composed(*(t(c) for t in self.transforms))`) or as it is (`combine(x * w for w in ws)`, or
    a name bound to a generator expression), when the function called (or `__init__`, for a
    class) breaks the graph, itself or in a function it calls. Also a call that steps through a
    generator expression (a builtin such as `all`, `sum` or `tuple`, or a scanned function) whose
    items break as they are made: `all(torch.equal(a, b) for a, b in pairs)`.

    ## Why is this bad?
    To resume after a graph break inside a call, TorchDynamo rebuilds the caller's frame in
    generated code. A generator it has started to step holds an iterator it mutated, which it
    cannot rebuild ("Generator reconstruction with mutations", GB8335; "Read uninitialized
    cell", GB0091, when the generator reads the caller's variables). The break cannot be resumed
    from: TorchDynamo skips the whole calling function, which then runs eagerly, its own graph
    lost. A list or a tuple is rebuilt fine, so the same call given a list comprehension keeps
    only the called function's own break. A generator over a dict's `items()`, `keys()` or
    `values()` is rebuilt too. When the generator's own items break, TorchDynamo is stepping it
    when the break comes: it cannot resume either (and a list comprehension, a loop of its own,
    would make it skip the function too), so the break inside the items must be fixed.

    ## Example
    ```python
    class Composed:
        def __init__(self, *parts):
            assert parts           # breaks
            self.parts = parts

    def forward(self, c):
        return Composed(*(t(c) for t in self.transforms))   # breaks again: forward runs eagerly
    ```

    ## Use instead
    ```python
    def forward(self, c):
        return Composed(*[t(c) for t in self.transforms])   # only __init__'s own break remains
    ```
    """
    invalid = (
        Example("""
            import torch

            def combine(*parts):
                print("combining")  # break (another rule)
                return sum(parts)

            @torch.compile
            def fn(x, ws):
                return combine(*(x * w for w in ws)) + 1  # break
        """, inputs="(torch.rand(4), [1.0, 2.0])"),
        Example("""
            import torch

            class Composed:
                def __init__(self, *parts):
                    self.total = sum(parts)
                    print("composed")  # break (another rule)

            @torch.compile
            def fn(x):
                return Composed(*(x * i for i in range(3))).total + 1  # break
        """),
        Example("""
            import torch

            def combine(parts):
                total = sum(parts)
                print(total.shape)  # break (another rule)
                return total

            @torch.compile
            def fn(x):
                scaled = (x * i for i in range(3))
                return combine(scaled) + 1  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(xs, y):
                out = y * 2
                if all(  # break
                    torch.equal(t, y) for t in xs  # break (another rule)
                ):
                    out = out + 1
                return out
        """, inputs="([torch.ones(3), torch.ones(3)], torch.ones(3))"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(xs, ws):
                return sum(
                    x * w for x, w in zip(xs, ws)
                ) + 1
        """, inputs="([torch.ones(3), torch.ones(3)], [1.0, 2.0])"),
        Example("""
            import torch

            def combine(*parts):
                print("combining")  # break (another rule)
                return sum(parts)

            @torch.compile
            def fn(x, ws):
                return combine(*[x * w for w in ws]) + 1
        """, inputs="(torch.rand(4), [1.0, 2.0])"),
        Example("""
            import torch

            def combine(*parts):
                return sum(parts) + 1

            @torch.compile
            def fn(x):
                return combine(*(x * i for i in range(3)))
        """),
        Example("""
            import torch

            def combine(*parts):
                total = sum(parts)
                print(total.shape)  # break (another rule)
                return total

            @torch.compile
            def fn(x):
                named = {"a": x, "b": x * 2}
                return combine(*(t for t in named.values())) + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        callees = ctx.callees(node, constructors=True)
        if callees and any(_is_generator(arg.value, ctx) for arg in node.args):
            ctx.report(self, node, if_callees_break=tuple(callees))
            return
        generator = next((arg.value for arg in node.args if isinstance(arg.value, cst.GeneratorExp)), None)
        if generator is not None and (callees or _consumes(node, ctx)):
            for_in = generator.for_in  # its first iterable is made by the caller, before the call
            made_per_item = (generator.elt, *for_in.ifs, *((for_in.inner_for_in,) if for_in.inner_for_in else ()))
            ctx.report(self, node, ITEMS_BREAK, if_breaks_within=made_per_item)


def _consumes(call: cst.Call, ctx) -> bool:
    """A builtin that steps through the iterable it is given (`all(...)`, `sum(...)`, `"".join(...)`)."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "join":
        return isinstance(call.func.value, (cst.SimpleString, cst.ConcatenatedString))
    return ctx.qualname(call.func) in _CONSUMING_BUILTINS


def _is_generator(node: cst.BaseExpression, ctx) -> bool:
    if isinstance(node, cst.GeneratorExp):
        iterable = node.for_in.iter
        return not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
                    and iterable.func.attr.value in _DICT_VIEWS and not iterable.args)
    return v.sort_of(ctx.value(node)) == "generator"
