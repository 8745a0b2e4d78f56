import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import LOCK_CLASSES, UNSUPPORTED_FACTORIES


class UnsupportedContextManager(Rule):
    id = "BS601"
    name = "unsupported-context-manager"
    gb_ids = ("GB0142", "GB0208", "GB0008", "GB0007")
    message = "TorchDynamo cannot enter this context manager: it skips the whole function, which runs eagerly"
    fix_hint = "enter the context outside the compiled function, or drop it (torch.device: pass device= to factories)"
    docs = """
    ## What it does
    Flags `with` statements, in compiled code, over context managers that TorchDynamo 2.13
    cannot trace: `torch.device(...)`, `torch.random.fork_rng()`, `torch.backends.cuda.sdp_kernel()`,
    `torch.backends.cudnn.flags()` / `mkldnn.flags()`, `torch.autograd.detect_anomaly()` /
    `set_detect_anomaly()`, `torch.autograd.graph.saved_tensors_hooks()` / `save_on_cpu()` /
    `allow_mutation_on_saved_tensors()`, `torch.cuda.device_of()`, `torch._dynamo.config.patch()`,
    `contextlib.redirect_stdout/stderr`, `tempfile.TemporaryDirectory/NamedTemporaryFile`,
    `unittest.mock.patch`, and `threading.Lock` / `RLock` objects (`with self._lock:`).

    ## Why is this bad?
    Entering an unsupported context manager is a graph break TorchDynamo cannot resume from
    (GB0142 "Unsupported context manager", often with GB0208/GB0008/GB0007 for the call that
    builds it): it abandons the frame and the *whole* function runs eagerly, every call.
    `torch.no_grad()`, `torch.autocast(...)`, `torch.inference_mode()`, `record_function`,
    `torch.nn.attention.sdpa_kernel`, `contextlib.nullcontext()`, `warnings.catch_warnings()`,
    `@contextmanager` generators and user classes are supported and not flagged.

    ## Example
    ```python
    with torch.device(x.device):
        mask = torch.ones(n, n).tril()
    ```

    ## Use instead
    ```python
    mask = torch.ones(n, n, device=x.device).tril()
    ```
    (`torch.backends.cuda.sdp_kernel` → `torch.nn.attention.sdpa_kernel`; take locks outside.)
    """
    invalid = (
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
            elif _is_lock(ctx.value(manager)) or _module_level_lock(manager, ctx):
                ctx.report(self, manager)


def _is_lock(value) -> bool:
    return isinstance(value, v.ModuleValue) and bool(value.classes) and value.classes <= LOCK_CLASSES


def _module_level_lock(manager: cst.BaseExpression, ctx) -> bool:
    """`LOCK = threading.Lock()` at module level, entered as `with LOCK:` (no local of that name)."""
    return (isinstance(manager, cst.Name) and ctx.qualname(manager) is not None
            and ctx.module.assignments.get(manager.value) in LOCK_CLASSES)
