from breakscan.lint.rule import Example, FunctionRule


class FreshBackend(FunctionRule):
    id = "BR004"
    name = "backend-made-per-call"
    kind = "recompile"
    gb_ids = ()
    message = ("this function is compiled again and again with a backend object made anew each time: "
               "TorchDynamo's cache matches the backend by identity, so every call compiles it again "
               "(until the recompile limit, then it runs eagerly)")
    fix_hint = "create the backend (and the compiled function) once, outside the function or loop, and reuse it"
    docs = """
    ## What it does
    Flags a function or module that the scanned code passes to `torch.compile(...)` inside a
    function body or a loop, with a `backend=` that is a new object on each run of that code: a
    `lambda`, a call (`functools.partial(...)`, `make_backend()`), or a name the same function
    binds to a nested `def`, a lambda or a call; in a function body, only when the function runs
    more than once (the scanned code calls it in a loop or from two places). Reported at the
    compiled function, where TorchDynamo reports the recompile.

    ## Why is this bad?
    Compiled code is cached on the function's code object, with a guard that the backend is the
    one it was compiled for (`BACKEND_MATCH`). A backend object made per call never matches the
    cached one: every call compiles again, and after 8 recompiles TorchDynamo gives up and runs
    the function eagerly. Backends named by string (`backend="inductor"`) match however often
    `torch.compile` is called, and are not flagged.

    ## Example
    ```python
    def predict(x):
        return torch.compile(model, backend=lambda gm, inputs: gm)(x)
    ```

    ## Use instead
    ```python
    def eager_backend(gm, inputs):
        return gm

    compiled = torch.compile(model, backend=eager_backend)   # once

    def predict(x):
        return compiled(x)
    ```
    """
    invalid = (
        Example("""
            import torch

            def scale(x):  # recompile
                return x * 2

            def fn(x):
                for _ in range(3):
                    x = torch.compile(scale, backend=lambda gm, inputs: gm)(x)
                return x
        """, compiled=False),
        Example("""
            import torch

            def shift(x):  # recompile
                return x + 1

            def run(x):
                def backend(gm, inputs):
                    return gm
                return torch.compile(shift, backend=backend)(x)

            def fn(x):
                for _ in range(3):
                    x = run(x)
                return x
        """, compiled=False),
    )
    valid = (
        Example("""
            import torch

            def scale(x):
                return x * 2

            def build():
                return torch.compile(scale, backend=lambda gm, inputs: gm)

            def fn(x):
                step = build()  # built once, called many times: one compile
                for _ in range(3):
                    x = step(x)
                return x
        """, compiled=False),
        Example("""
            import torch

            def scale(x):
                return x * 2

            def fn(x):
                for _ in range(3):
                    x = torch.compile(scale, backend="eager")(x)
                return x
        """, compiled=False),
        Example("""
            import torch

            def identity_backend(gm, inputs):
                return gm

            def scale(x):
                return x * 2

            def fn(x):
                for _ in range(3):
                    x = torch.compile(scale, backend=identity_backend)(x)
                return x
        """, compiled=False),
    )

    def check_function(self, ctx) -> None:
        call = ctx.entry_in(ctx.call_sites.fresh_backends)
        if call is not None:
            ctx.report(self, ctx.function_start, f"this function is compiled with a backend made anew on every run "
                                                f"of `{call}`: TorchDynamo matches the backend by identity, so every "
                                                "call compiles it again (until the recompile limit, "
                                                f"{ctx.dynamo.number('recompile_limit')}, then it runs eagerly)")
