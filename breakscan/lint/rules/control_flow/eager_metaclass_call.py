import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import find_nodes


class EagerMetaclassCall(Rule):
    id = "BS214"
    name = "metaclass-call-in-eager-code"
    gb_ids = ("GB0006",)
    message = ("an object whose metaclass defines `__call__` is built with tensors or modules where the function "
               "runs eagerly, after a break TorchDynamo cannot resume from: TorchDynamo compiles the metaclass's "
               "`__call__` as a frame of its own and cannot call `super().__call__` there, so the graph breaks here")
    fix_hint = ("fix the earlier break (the construction is then traced with its function), or build the object "
                "outside the compiled code and pass it in")
    docs = """
    ## What it does
    Flags the `super().__call__(...)` of a metaclass's `__call__` (a class built with
    `metaclass=Meta`, directly or through a base, where `Meta.__call__` post-processes each new
    object) when compiled code builds such an object, given a tensor or a module, in code that
    runs eagerly after a break TorchDynamo cannot resume from (in a loop, in a `try` block, in a
    `with` block it cannot break under).

    ## Why is this bad?
    Where a function runs eagerly, TorchDynamo compiles each frame it calls that holds a tensor
    or a module, the metaclass's `__call__` among them. There `super()` is a class object passed
    in, and TorchDynamo 2.13 cannot call its `__call__` ("Attempted to call a super() attribute
    that is not a function or method", GB0006): a second break on every call. Traced with its
    caller, the same construction breaks nothing; built from Python numbers alone, the frame
    holds no torch value and is not compiled.

    ## Example
    ```python
    def solve(self, y0):
        for step in self.schedule:
            y0 = self.advance(y0, step)     # breaks inside the loop: the rest runs eagerly
        return Result(y0)                   # Result's metaclass runs super().__call__(y0)
    ```

    ## Use instead
    Fix the break in the loop, or build the object from the returned tensor outside the compiled
    function.
    """
    invalid = (
        Example("""
            import torch

            class Checked(type):
                def __call__(cls, *args, **kwargs):
                    return super().__call__(*args, **kwargs)  # break

            class Scaled(metaclass=Checked):
                def __init__(self, value):
                    self.value = value

            @torch.compile
            def fn(x):
                for _ in range(2):
                    torch._dynamo.graph_break()  # break (another rule)
                return Scaled(x).value * 2
        """),
    )
    valid = (
        Example("""
            import torch

            class Checked(type):
                def __call__(cls, *args, **kwargs):
                    return super().__call__(*args, **kwargs)

            class Scaled(metaclass=Checked):
                def __init__(self, value):
                    self.value = value

            @torch.compile
            def fn(x):
                return Scaled(x).value * 2
        """),
        Example("""
            import torch

            class Checked(type):
                def __call__(cls, *args, **kwargs):
                    return super().__call__(*args, **kwargs)

            class Scaled(metaclass=Checked):
                def __init__(self, value):
                    self.value = value

            @torch.compile
            def fn(x):
                for _ in range(2):
                    torch._dynamo.graph_break()  # break (another rule)
                return x * Scaled(2.0).value
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified is None:
            held = ctx.value(node.func)  # `solver = SOLVERS[method]`: one of several classes
            names = set(held.names) if isinstance(held, v.Callables) else set()
        else:
            names = {qualified}
        calls = {}
        for name in names:
            info = ctx.find_class(name)
            meta = _metaclass(info, ctx) if info is not None else None
            call = ctx.method_of(meta, "__call__") if meta is not None else None
            if call is not None:
                calls[call.key] = call
        if not calls or not any(_holds_torch(ctx.value(a.value)) for a in node.args):
            return
        for call in calls.values():
            for found in find_nodes(call.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                assert isinstance(found, cst.Call)
                if _calls_super_call(found):
                    ctx.report_in(self, call, found, only_if_eager=True)


def _holds_torch(value: v.Value) -> bool:
    """What makes TorchDynamo compile a frame holding it: a tensor, a module, tensors in a container."""
    return value in (v.TENSOR, v.TENSORS) or isinstance(value, v.ModuleValue)


def _metaclass(info, ctx):
    """The scanned metaclass the class is built with (its own `metaclass=` or a scanned base's)."""
    for cls in ctx.class_lineage(info):
        for keyword in cls.node.keywords:
            if keyword.keyword is not None and keyword.keyword.value == "metaclass":
                name = dotted_name(keyword.value)
                found = ctx.find_class(cls.module.qualify(name)) if name else None
                return found
    return None


def _calls_super_call(call: cst.Call) -> bool:
    """`super().__call__(...)` or `super(Meta, cls).__call__(...)`."""
    func = call.func
    return (isinstance(func, cst.Attribute) and func.attr.value == "__call__" and isinstance(func.value, cst.Call)
            and isinstance(func.value.func, cst.Name) and func.value.func.value == "super")
