from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import UNSUPPORTED_FACTORIES, untraceable_gb_id
from breakscan.lint.traverse import ancestors, children, find_nodes, parent_map

# torch.nn layers that create nn.Parameters with their default arguments (verified: GB0264).
# Parameter-free layers (ReLU, Dropout, pooling, Flatten, losses, Sequential of those) are traced.
ALWAYS_PARAMETERISED = frozenset(
    f"torch.nn.{name}"
    for name in (
        "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
        "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "Embedding", "EmbeddingBag", "RNN", "LSTM",
        "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention", "PReLU", "Transformer",
        "TransformerEncoderLayer", "TransformerDecoderLayer", "Embedding.from_pretrained",
        "EmbeddingBag.from_pretrained",
    )
)
# Normalisation layers: parameterised unless their affine flag is passed as False.
AFFINE_FLAG = {
    **{f"torch.nn.{name}": "elementwise_affine" for name in ("LayerNorm", "RMSNorm")},
    **{f"torch.nn.{name}": "affine" for name in (
        "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
        "LazyBatchNorm2d", "LazyBatchNorm3d",
    )},
}


def _canonical(qualified: str) -> str:
    """`torch.nn.modules.linear.Linear` -> `torch.nn.Linear`."""
    if qualified.startswith("torch.nn.modules."):
        parts = qualified.split(".")
        return "torch.nn." + ".".join(parts[4:])
    return qualified


class ModuleConstruction(Rule):
    id = "BS801"
    name = "module-construction"
    gb_ids = ("GB0264", "GB0208", "GB0119")
    message = "building an nn layer with parameters inside compiled code creates nn.Parameters: the graph breaks here"
    fix_hint = "build the layer once in __init__ (self.proj = nn.Linear(...)) and call it in forward"
    docs = """
    ## What it does
    Flags construction of `torch.nn` layers that own parameters (`nn.Linear`, `nn.Conv2d`,
    `nn.Embedding`, `nn.LayerNorm`, `nn.BatchNorm2d`, `nn.LSTM`, `nn.MultiheadAttention`...) in
    compiled code, including the lazy-init pattern `if not hasattr(self, "proj"): self.proj = nn.Linear(...)`.

    Also flags building one of the project's own `nn.Module` classes in compiled code when
    TorchDynamo cannot finish its `__init__`: the class's `__init__` builds such a layer (or an
    `nn.Parameter`), the construction sits in a `with` block whose context manager TorchDynamo
    cannot enter (`with tqdm(total=n) as bar: solver = DPMSolver(model, ...)`), or it comes after
    a break TorchDynamo cannot resume from (in a loop, a `try` body...), where the function runs
    eagerly and TorchDynamo compiles the class's `__init__` as a frame of its own (probed). Those
    findings are placed where TorchDynamo reports them: on `super().__init__()` (GB0119
    "Uninitialized nn.Module") and on the layer built in `__init__` (GB0264).

    ## Why is this bad?
    The layer's `__init__` creates `nn.Parameter`s, and TorchDynamo 2.13 does not trace the
    Parameter constructor (GB0264; GB0208 for the `LazyBatchNorm*` layers): the graph ends where
    the layer is built. Besides, a layer built in `forward` gets fresh random weights on every
    call and is never trained.
    Parameter-free layers (`nn.ReLU()`, `nn.Dropout()`, pooling, losses) and normalisation built
    with `affine=False` / `elementwise_affine=False` are traced and not flagged, and so is a
    parameter-free module class of the project built in traced code.

    ## Example
    ```python
    def forward(self, x):
        proj = nn.Linear(x.shape[-1], self.dim)
        return proj(x)
    ```

    ## Use instead
    ```python
    def __init__(self, in_dim, dim):
        super().__init__()
        self.proj = nn.Linear(in_dim, dim)      # or nn.LazyLinear(dim)

    def forward(self, x):
        return self.proj(x)
    ```
    """
    invalid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, x):
                    y = x * 2
                    proj = nn.Linear(8, 8)  # break
                    return proj(y)
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    if not hasattr(self, "norm"):
                        self.norm = nn.LayerNorm(8)  # break
                    return self.norm(x)
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()  # break
                    self.proj = nn.Linear(8, 8)  # break

                def forward(self, x):
                    return self.proj(x)

            @torch.compile
            def fn(x):
                head = Head()
                return head(x * 2) + 1
        """),
        Example("""
            import torch
            from torch import nn

            class Solver(nn.Module):
                def __init__(self, scale):
                    super().__init__()  # break
                    self.scale = scale

                def step(self, x):
                    return x * self.scale

            @torch.compile
            def fn(x):
                for _ in range(2):
                    x = x + 1
                    print("step")  # break (another rule)
                return Solver(2.0).step(x)
        """),
        Example("""
            import torch
            from torch import nn

            class Distance(nn.Module):
                def __init__(self):
                    super().__init__()  # break
                    self.power = 2

            class Loss(nn.Module):
                def __init__(self, scale):
                    super().__init__()  # break
                    self.scale = scale
                    self.distance = Distance()

                def forward(self, x):
                    return x.pow(self.distance.power).mean() * self.scale

            @torch.compile
            def fn(x):
                for _ in range(2):
                    x = x + 1
                    print("step")  # break (another rule)
                return Loss(2.0)(x)
        """),
    )
    valid = (
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    act = nn.GELU()
                    drop = nn.Dropout(0.1)
                    norm = nn.LayerNorm(8, elementwise_affine=False)
                    return drop(act(norm(self.proj(x))))
        """, entry="Model()"),
        Example("""
            import torch
            import torch.nn as nn

            class Model(nn.Module):
                def forward(self, x):
                    pool = nn.MaxPool1d(2)
                    loss = nn.MSELoss()
                    y = pool(x.view(1, 1, 8))
                    return loss(y, torch.zeros_like(y))
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Solver(nn.Module):
                def __init__(self, model, scale=2.0):
                    super().__init__()
                    self.model = model
                    self.scale = scale

                def step(self, x):
                    return self.model(x) * self.scale

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Linear(8, 8)

                def forward(self, x):
                    solver = Solver(self.net)
                    return solver.step(x) + 1
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if qualified is None:
            return
        if not qualified.startswith("torch.nn."):
            self._project_module(node, qualified, ctx)
            return
        if _is_parameterised(_canonical(qualified), node):
            ctx.report(self, node)

    def _project_module(self, node: cst.Call, qualified: str, ctx) -> None:
        """`Head()` / `DPMSolver(model)`: a scanned nn.Module class whose `__init__` TorchDynamo cannot finish."""
        if not isinstance(ctx.value(node), v.ModuleValue):
            return
        info = ctx.find_class(qualified)
        if info is None or not ctx.is_module_class(info):
            return
        init = ctx.method_of(info, "__init__")
        if init is None:
            return
        supers, layers = _init_calls(init)
        if not supers:
            return
        if layers:
            name = info.name
            for call in supers:
                self._report_in(ctx, init, call, f"`{name}` is built in compiled code and its `__init__` creates "
                                                 "nn.Parameters: TorchDynamo leaves it uninitialised and the graph breaks here")
            for call in layers:
                self._report_in(ctx, init, call)
        elif _in_untraceable_with(node, ctx):
            for call in supers:
                self._report_in(ctx, init, call, f"`{info.name}` is built inside a `with` block TorchDynamo cannot "
                                                 "enter: its `__init__` is not traced and the graph breaks here")
        else:  # probed: built by code running eagerly, each `__init__` up the chain is a frame TorchDynamo compiles
            self._built_eagerly(info, ctx, set())

    def _built_eagerly(self, info, ctx, seen: set[str]) -> None:
        """Each `super().__init__()` up the class's chain breaks; so do those of the module classes
        its `__init__`s build in turn (probed: a loss built eagerly that builds its distance module)."""
        message = (f"`{info.name}` is built where the function runs eagerly, after a break TorchDynamo cannot "
                   "resume from: TorchDynamo compiles each `__init__` it runs as a frame of its own and cannot "
                   "trace the module before it is initialised, so the graph breaks here")
        for cls in ctx.class_lineage(info):
            own = cls.methods.get("__init__")
            if own is None:
                continue  # inherited: the parent's `__init__` runs
            own_supers = _init_calls(own)[0]
            if not own_supers or own.key in seen:
                break  # the chain of `super().__init__()` calls ends here (or was followed already)
            seen.add(own.key)
            for call in own_supers:
                self._report_in(ctx, own, call, message, only_if_eager=True)
            for built in _built_modules(own, ctx):
                self._built_eagerly(built, ctx, seen)

    def _report_in(self, ctx, function, node: cst.CSTNode, message: str | None = None, *,
                   only_if_eager: bool = False) -> None:
        # The break is inside another function (the class's `__init__`): place it there.
        ctx.report_in(self, function, node, message, only_if_eager=only_if_eager)


def _is_parameterised(qualified: str, node: cst.Call) -> bool:
    if qualified in ALWAYS_PARAMETERISED or qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return qualified in ALWAYS_PARAMETERISED
    return qualified in AFFINE_FLAG and not _affine_disabled(node, AFFINE_FLAG[qualified])


def _init_calls(init) -> tuple[list[cst.Call], list[cst.Call]]:
    """The `super().__init__()` calls of an `__init__`, and the parameterised torch.nn layers and
    `nn.Parameter`s it builds (not those of functions or lambdas nested in it)."""
    supers: list[cst.Call] = []
    layers: list[cst.Call] = []
    for part in children(init.node):
        for node in find_nodes(part, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)):
            func = node.func
            if (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call)
                    and dotted_name(func.value.func) == "super"):
                supers.append(node)
                continue
            qualified = init.module.qualify(dotted_name(func))
            if qualified and qualified.startswith("torch.nn."):
                qualified = _canonical(qualified)
                if _is_parameterised(qualified, node) or qualified.endswith(".Parameter"):
                    layers.append(node)
    return supers, layers


def _built_modules(init, ctx) -> list:
    """The project's nn.Module classes an `__init__` builds (`self.distance = Distance()`)."""
    found = []
    for node in find_nodes(init.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)):
        name = dotted_name(node.func)
        info = ctx.find_class(init.module.qualify(name)) if name else None
        if info is not None and ctx.is_module_class(info):
            found.append(info)
    return found


def _in_untraceable_with(call: cst.Call, ctx) -> bool:
    """Whether `call` sits in a `with` block (of the function being walked) whose context manager
    TorchDynamo cannot enter."""
    body = ctx.function.node.body
    untraceable = False
    for holder in ancestors(call, ctx.memoised(parent_map, ctx.function.top_statement)):
        if holder is body:
            return untraceable
        if isinstance(holder, cst.With) and any(_untraceable_manager(item.item, ctx) for item in holder.items):
            untraceable = True
    return False


def _untraceable_manager(item: cst.BaseExpression, ctx) -> bool:
    if not isinstance(item, cst.Call):
        return False
    qualified = ctx.qualname(item.func)
    return qualified is not None and (qualified in UNSUPPORTED_FACTORIES or untraceable_gb_id(qualified) is not None)


def _affine_disabled(node: cst.Call, keyword: str) -> bool:
    """True unless the affine flag is left at its default (True) or passed as `True`;
    a non-literal flag is given the benefit of the doubt."""
    flag = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == keyword), None)
    return flag is not None and not (isinstance(flag, cst.Name) and flag.value == "True")
