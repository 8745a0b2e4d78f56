import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

# nn.Module hook registrations (`v.MODULE_HOOK_METHODS`; verified: GB0467 while building the
# RemovableHandle). Tensor hooks (`tensor.register_hook`, `register_post_accumulate_grad_hook`) are traced.
GLOBAL_HOOK_FUNCTIONS = frozenset(
    f"torch.nn.modules.module.{name}"
    for name in ("register_module_forward_hook", "register_module_forward_pre_hook", "register_module_full_backward_hook")
)


class HookRegistration(Rule):
    id = "BS803"
    name = "hook-registration"
    gb_ids = ("GB0467",)
    message = "registering a module hook inside compiled code cannot be traced: the graph breaks here"
    fix_hint = "register the hook once, outside forward (after building the model)"
    docs = """
    ## What it does
    Flags `module.register_forward_hook(...)`, `register_forward_pre_hook`,
    `register_full_backward_hook`, `register_backward_hook`, state-dict hooks and the global
    `torch.nn.modules.module.register_module_*_hook` in compiled code.

    ## Why is this bad?
    Registering builds a `RemovableHandle`, whose `__init__` TorchDynamo 2.13 cannot trace
    (GB0467 "setattr() on unsupported type"): the graph ends at the call. A hook registered in
    `forward` is also added again on every call. Hooks registered before compiling are traced;
    tensor hooks (`tensor.register_hook`) are traced too and not flagged.

    ## Example
    ```python
    def forward(self, x):
        self.encoder.register_forward_hook(self._save_features)
        return self.head(self.encoder(x))
    ```

    ## Use instead
    ```python
    model.encoder.register_forward_hook(save_features)   # once, before torch.compile(model)
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = nn.Linear(8, 8)
                    self.features = []

                def forward(self, x):
                    y = x * 2
                    self.encoder.register_forward_hook(lambda m, i, o: self.features.append(o))  # break
                    return self.encoder(y)
        """, entry="Model()"),
    )
    valid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = nn.Linear(8, 8)
                    self.features = []
                    self.encoder.register_forward_hook(lambda m, i, o: self.features.append(o))

                def forward(self, x):
                    return self.encoder(x)
        """, entry="Model()"),
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = nn.Linear(8, 8)

                def forward(self, x):
                    y = self.encoder(x)
                    y.register_hook(lambda grad: grad.clamp(-1, 1))
                    return y
        """, entry="Model()", inputs="torch.randn(8, requires_grad=True)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in v.MODULE_HOOK_METHODS:
            if ctx.value(func.value) not in (v.TENSOR, v.TENSORS, v.MAYBE_TENSOR):
                ctx.report(self, node)
        elif ctx.qualname(func) in GLOBAL_HOOK_FUNCTIONS:
            ctx.report(self, node)
