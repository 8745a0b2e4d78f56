import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import assigned_values

KEPT_METHOD = ("this call breaks while `{name}`, an object this function built, keeps a method of its own in an "
               "attribute (`self.f = self.f_default`): TorchDynamo cannot rebuild that bound method to resume after "
               "the break (Reconstruction failure, GB0092), so it breaks here too and runs the function eagerly")


class FreshObjectMethod(Rule):
    id = "BS209"
    name = "break-in-method-of-object-built-here"
    gb_ids = ("GB0092",)
    message = ("this calls a method of an object this function built, and the method breaks: TorchDynamo cannot "
               "rebuild the bound method to resume after that break (Reconstruction failure, GB0092), so it "
               "breaks here too and runs the rest of the function eagerly")
    fix_hint = ("fix the break inside the method (or the function called); or build the object outside the compiled "
                "code (in `__init__`), or call the method from a helper the object is passed to")
    docs = """
    ## What it does
    Flags a method call (`solver.integrate(t)`, `Solver(y).integrate(t)`, `make().step(x)`) on
    an object of a scanned class that is not an nn.Module, when the function making the call
    built the object (there, or in a call that returned it) and the method breaks the graph
    (itself, or in a function it calls). Also any call that breaks while an object the function
    built keeps one of its own methods in an attribute (`self.f = self.f_default` in its
    `__init__`), an nn.Module or not: that bound method has nothing to be rebuilt from either
    (probed; torchsde's `ForwardSDE`). Not in a loop, where TorchDynamo skips the frame instead,
    nor when the object's `__init__` breaks: the object is then built before the frame
    TorchDynamo resumes in, where it is an object passed in (botorch's `NormalQMCEngine`).

    ## Why is this bad?
    To resume after a graph break inside a call, TorchDynamo rebuilds the caller's frame in
    generated code, the method being called included. A method bound to an object that was
    built while tracing has nothing to be rebuilt from ("Reconstruction failure", GB0092): the
    break cannot be resumed from, and TorchDynamo skips the whole function, which then runs
    eagerly, its own graph lost. An object passed in (or read from an attribute) is rebuilt
    from where it came from, so the same call in a helper the object is passed to, or on an
    object built in `__init__`, resumes normally after the method's own break.

    ## Example
    ```python
    class Solver:
        def integrate(self, t):
            if (self.y * t).sum() > 0:   # breaks
                ...

    def forward(self, x):
        solver = Solver(x)
        return solver.integrate(x) + 1   # breaks again: forward falls back to eager
    ```

    ## Use instead
    ```python
    def integrate(solver, t):
        return solver.integrate(t)

    def forward(self, x):
        return integrate(Solver(x), x) + 1   # only the method's own break remains
    ```
    """
    invalid = (
        Example("""
            import torch

            class Solver:
                def __init__(self, y):
                    self.y = y

                def integrate(self, t):
                    z = self.y * t
                    if z.sum() > 0:  # break (another rule)
                        z = z + 1
                    return z

            @torch.compile
            def fn(x):
                solver = Solver(x)
                return solver.integrate(x) + 1  # break
        """),
        Example("""
            import torch

            class Solver:
                def __init__(self, y):
                    self.y = y

                def integrate(self, t):
                    return step(self.y * t)

            def step(z):
                if z.sum() > 0:  # break (another rule)
                    z = z + 1
                return z

            class Holder:
                def __init__(self, y):
                    self.y = y

                def make(self):
                    return Solver(self.y)

            @torch.compile
            def fn(x):
                return Holder(x).make().integrate(x) + 1  # break
        """),
        Example("""
            import torch

            class Plain:
                def __init__(self):
                    self.f = self.f_default

                def f_default(self, x):
                    return x * 2

            def breaking(x):
                print("break")  # break (another rule)
                return x + 1

            @torch.compile
            def fn(x):
                w = Plain()
                y = breaking(x)  # break
                return w.f(y)
        """),
    )
    valid = (
        Example("""
            import torch

            class Engine:
                def __init__(self, x):
                    torch._dynamo.graph_break()  # break (another rule)
                    self.x = x

                def step(self):
                    torch._dynamo.graph_break()  # break (another rule)
                    return self.x * 2

            @torch.compile
            def fn(x):
                engine = Engine(x)
                return engine.step() + 1
        """),
        Example("""
            import torch

            class Solver:
                def __init__(self, y):
                    self.y = y

                def integrate(self, t):
                    z = self.y * t
                    if z.sum() > 0:  # break (another rule)
                        z = z + 1
                    return z

            def integrate(solver, t):
                return solver.integrate(t)

            @torch.compile
            def fn(x):
                return integrate(Solver(x), x) + 1
        """),
        Example("""
            import torch

            class Solver:
                def __init__(self, y):
                    self.y = y

                def integrate(self, t):
                    return self.y * t + 1

            @torch.compile
            def fn(x):
                solver = Solver(x)
                return solver.integrate(x) + 1
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.loop_depth:
            return  # in a loop, the callee's break makes TorchDynamo skip the frame instead
        receiver = ctx.value(node.func.value) if isinstance(node.func, cst.Attribute) else None
        if not (isinstance(receiver, v.ModuleValue) and receiver.fresh):
            keeper = next((name for name, value in ctx.live_values().items()
                           if _keeps_own_methods(value, ctx) and _constructed_here(name, ctx)), None)
            callees = ctx.callees(node, constructors=True) if keeper is not None else []
            if callees:
                ctx.report(self, node, KEPT_METHOD.format(name=keeper), if_callees_break=tuple(callees))
            return
        classes = [ctx.find_class(name) for name in receiver.classes]
        if any(info is None or ctx.is_module_class(info) for info in classes):
            return  # an nn.Module built in the function is another kind of object to TorchDynamo
        callees = ctx.callees(node)
        # An `__init__` that breaks builds the object before the frame TorchDynamo resumes in:
        # there it is an object passed in, and its methods' breaks are their own.
        # (Every class the object may be built from must have one that breaks.)
        inits = [ctx.method_of(info, "__init__") for info in classes if info is not None]
        unless = tuple(init for init in inits if init is not None) if None not in inits else ()
        if callees:
            ctx.report(self, node, if_callees_break=tuple(callees), unless_callees_break=unless)


def _keeps_own_methods(value: v.Value, ctx) -> bool:
    """An object this function built whose class keeps one of its methods in an attribute."""
    if not (isinstance(value, v.ModuleValue) and value.fresh):
        return False
    classes = [ctx.find_class(name) for name in value.classes]
    return any(info is not None and any(c.attr_methods for c in ctx.class_lineage(info)) for info in classes)


def _constructed_here(name: str, ctx) -> bool:
    """Every assignment of the name in the function builds an object of a scanned class: one a
    call returned may have come back from a call that broke, and is rebuilt from there."""
    values = assigned_values(name, ctx)
    return bool(values) and all(isinstance(value, cst.Call) and ctx.find_class(ctx.qualname(value.func) or "")
                                for value in values)
