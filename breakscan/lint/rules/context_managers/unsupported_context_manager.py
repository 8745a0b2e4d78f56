import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.index import FunctionInfo
from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import LOCK_CLASSES, UNSUPPORTED_FACTORIES
from breakscan.lint.traverse import find_nodes


class UnsupportedContextManager(Rule):
    id = "BS601"
    name = "unsupported-context-manager"
    gb_ids = ("GB0142", "GB0208", "GB0008", "GB0007")
    message = ("TorchDynamo cannot enter this context manager: the graph ends here and the rest of the function runs "
               "eagerly")
    skips_frame = True
    fix_hint = ("enter the context outside the compiled function, or drop it (torch.device: pass device= to "
                "factories; an object of your own class: build it in the `with` statement)")
    docs = """
    ## What it does
    Flags `with` statements, in compiled code, over context managers that TorchDynamo 2.13
    cannot trace: `torch.device(...)`, `torch.random.fork_rng()`, `torch.backends.cuda.sdp_kernel()`,
    `torch.backends.cudnn.flags()` / `mkldnn.flags()`, `torch.autograd.detect_anomaly()` /
    `set_detect_anomaly()`, `torch.autograd.graph.saved_tensors_hooks()` / `save_on_cpu()` /
    `allow_mutation_on_saved_tensors()`, `torch.cuda.device_of()`, `torch._dynamo.config.patch()`,
    `contextlib.redirect_stdout/stderr`, `tempfile.TemporaryDirectory/NamedTemporaryFile`,
    `unittest.mock.patch`, and `threading.Lock` / `RLock` objects (`with self._lock:`). Also an
    object of a scanned class with its own `__enter__` that the compiled code did not build: kept
    in an attribute (`with self.scope:`), at module level, or given to the compiled function.
    And a call of a scanned function that returns one of those factories' managers (`with
    self.rng_scope():` where it returns `torch.random.fork_rng(...)`; a warning when it returns
    another manager on other paths), with the factory's call in it.

    ## Why is this bad?
    Entering an unsupported context manager is a graph break TorchDynamo cannot resume from
    (GB0142 "Unsupported context manager", often with GB0208/GB0008/GB0007 for the call that
    builds it): it compiles the function up to the `with` and runs the rest of it eagerly,
    every call (inside a `try` block, where it cannot compile a part, the whole function).
    `torch.no_grad()`, `torch.autocast(...)`, `torch.inference_mode()`, `record_function`,
    `torch.nn.attention.sdpa_kernel`, `contextlib.nullcontext()`, `warnings.catch_warnings()`,
    `@contextmanager` generators and objects of user classes built in the compiled code
    (`with Timer():`) are supported and not flagged. An object of a user class made before the
    compiled code runs is not: TorchDynamo "does not know how to enter" it (probed).

    ## Example
    ```python
    with torch.device(x.device):
        mask = torch.ones(n, n).tril()
    ```

    ## Use instead
    ```python
    mask = torch.ones(n, n, device=x.device).tril()
    ```
    (`torch.backends.cuda.sdp_kernel` → `torch.nn.attention.sdpa_kernel`; take locks outside;
    build a user context manager where it is entered: `with Scope(self.name):`.)
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Consistency(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(8, 4)

                def rng_scope(self):
                    return torch.random.fork_rng(devices=[])  # break

                def forward(self, x):
                    with self.rng_scope():  # break
                        first = self.head(x.relu())
                    return first + self.head(x)
        """, entry="Consistency()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                n = x.shape[0]
                with torch.device(x.device):  # break
                    mask = torch.ones(n, n).tril()
                return mask @ x
        """),
        Example("""
            import threading
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)
                    self._lock = threading.Lock()

                def forward(self, x):
                    y = self.proj(x)
                    with self._lock:  # break
                        self.last = y.detach()
                    return y * 2
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                with torch.random.fork_rng():  # break
                    noise = torch.randn(8)
                return y + noise
        """),
        Example("""
            import threading
            import torch

            CACHE_LOCK = threading.Lock()

            @torch.compile
            def fn(x):
                y = x * 2
                with CACHE_LOCK:  # break
                    z = y + 1
                return z
        """),
        Example("""
            import torch

            class Scope:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    return False

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scope = Scope()

                def forward(self, x):
                    y = x * 2
                    with self.scope:  # break
                        y = y + 1
                    return y
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import contextlib
            import warnings
            import torch
            from torch.nn.attention import SDPBackend, sdpa_kernel

            @torch.compile
            def fn(x):
                with torch.no_grad(), torch.autocast("cpu", enabled=False):
                    y = x * 2
                with contextlib.nullcontext(), warnings.catch_warnings():
                    y = y + 1
                with sdpa_kernel(SDPBackend.MATH), torch.profiler.record_function("block"):
                    y = y.relu()
                return y
        """),
        Example("""
            import contextlib
            import torch

            @contextlib.contextmanager
            def scope(name):
                yield name

            class Timer:
                def __enter__(self):
                    return self

                def __exit__(self, *exc):
                    return False

            @torch.compile
            def fn(x):
                with scope("block"), Timer():
                    y = torch.ones(8, device=x.device)
                return x + y
        """),
    )

    def on_With(self, node: cst.With, ctx) -> None:
        for item in node.items:
            manager = item.item
            if isinstance(manager, cst.Call) and ctx.qualname(manager.func) in UNSUPPORTED_FACTORIES:
                ctx.report(self, manager)
            elif _is_lock(ctx.value(manager)) or _module_level(manager, ctx) in LOCK_CLASSES:
                ctx.report(self, manager)
            elif _made_before(manager, ctx):
                ctx.report(self, manager)
            elif isinstance(manager, cst.Call) and (made := _returned_unsupported(manager, ctx)) is not None:
                callee, returned, every = made
                ctx.report(self, manager, f"`{ctx.code(manager.func)}()` returns `{ctx.code(returned.func)}(...)`, a "
                                          "context manager TorchDynamo cannot enter: the graph ends here and the rest "
                                          "of the function runs eagerly", severity=None if every else "warning")
                ctx.report_in(self, callee, returned, "this builds a context manager TorchDynamo cannot trace (a "
                                                      "`with` over it breaks again): the graph breaks here")


def _returned_unsupported(manager: cst.Call, ctx) -> tuple[FunctionInfo, cst.Call, bool] | None:
    """`with self.rng_scope():` where the method returns `torch.random.fork_rng(...)`: the function,
    that call, and whether every `return` of it gives one (else it is entered on some paths only)."""
    callee = ctx.callee(manager)
    if callee is None:
        return None
    returns = [r.value for r in find_nodes(callee.node.body, (cst.Return,), prune=(cst.FunctionDef, cst.Lambda))
               if isinstance(r, cst.Return)]
    unsupported = [value for value in returns if isinstance(value, cst.Call)
                   and callee.module.qualify(dotted_name(value.func)) in UNSUPPORTED_FACTORIES]
    if not unsupported:
        return None
    return callee, unsupported[0], len(unsupported) == len(returns)


def _is_lock(value) -> bool:
    return isinstance(value, v.ModuleValue) and bool(value.classes) and value.classes <= LOCK_CLASSES


def _module_level(manager: cst.BaseExpression, ctx) -> str | None:
    """The class `NAME = Class(...)` at module level builds, entered as `with NAME:` (no local of that name)."""
    if isinstance(manager, cst.Name) and ctx.qualname(manager) is not None:
        return ctx.module.assignments.get(manager.value)
    return None


def _made_before(manager: cst.BaseExpression, ctx) -> bool:
    """An object of scanned classes, each with its own `__enter__`, that the compiled code did
    not build: an attribute's, a module-level one, or an input of the compiled function (a helper's
    parameter may be an object its compiled caller built)."""
    value = ctx.value(manager)
    built_at_module_level = _module_level(manager, ctx)
    if built_at_module_level is not None:
        names = {built_at_module_level}
    elif isinstance(value, v.ModuleValue) and not value.fresh and value.classes:
        if ctx.is_passed_in(manager) and not ctx.is_root:
            return False
        names = set(value.classes)
    else:
        return False
    classes = [ctx.find_class(name) for name in names]
    return all(info is not None and not ctx.is_module_class(info) and ctx.method_of(info, "__enter__") is not None
               for info in classes)
