import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import find_nodes


class PerInstanceAttribute(Rule):
    id = "BR006"
    name = "per-layer-int-attribute"
    kind = "recompile"
    gb_ids = ()
    message = ("each compiled instance of this class holds another int here (set in `__init__` from a loop's "
               "int, or a layer built with one), and its instances are compiled one by one: they share one compiled `forward`, which "
               "TorchDynamo guards on the value, so every layer recompiles it (until the recompile limit, then "
               "the rest run eagerly)")
    fix_hint = ("compile the whole model once instead of each layer, keep the per-layer value out of the compiled "
                "code (a tensor buffer, or a choice made in `__init__`), or set "
                "`torch._dynamo.config.allow_unspec_int_on_nn_module = True`")
    docs = """
    ## What it does
    Flags the first read, in a module's compiled code, of an int attribute that `__init__` sets from
    a parameter (`self.layer_idx = layer_idx`), or of a torch layer it builds with one as a keyword
    argument (`self.conv = nn.Conv1d(c, c, 3, padding=dilation)`, whose `padding` TorchDynamo guards
    alike; a layer of another size is given an input of another size, whose guard fails first), when
    the scanned code builds the class with a loop's int for that parameter (`Block(i) for i in
    range(depth)`) and compiles the instances one by one (`layer.compile()` for each layer,
    `torch.compile(Block(i))` in a loop or comprehension), or calls them in a loop of a frame
    TorchDynamo runs eagerly (after a break it cannot resume from: each layer's `forward` is then
    compiled as a frame of its own), or through an `nn.Sequential` of them called there, with any
    value computed from the loop's int (`Coupling(dim, flip=bool(i % 2))`, built into a list the
    `ModuleList` is given). Reported where TorchDynamo guards the value: the read.

    ## Why is this bad?
    Instances of one class share one code object, `forward`, and TorchDynamo caches compiled
    code on the code object. It treats an nn.Module's int attributes as constants and guards on
    them (`self.layer_idx == 0`): the next layer, with another value, fails the guard and
    compiles `forward` again, and so does every layer after it, until the recompile limit (8),
    after which the remaining layers run eagerly. Compiling the whole model once traces each
    layer inline with its own constant and does not recompile; nor do values that are the same
    for every instance.

    ## Example
    ```python
    self.layers = nn.ModuleList([Block(layer_idx=i) for i in range(24)])
    for layer in self.layers:
        layer.compile()            # regional compilation, one layer at a time
    ...
    def forward(self, x):          # Block
        if self.layer_idx % 2:     # guarded per layer: 24 values, 8 recompiles, then eager
    ```

    ## Use instead
    ```python
    model.compile()                # the whole model: one trace with each layer's constant
    ```
    or decide in `__init__` (`self.scale = 2.0 if layer_idx % 2 else 1.0` as a buffer), or set
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` (one recompile, then dynamic).
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self, layer_idx):
                    super().__init__()
                    self.layer_idx = layer_idx
                    self.lin = nn.Linear(8, 8)

                def forward(self, x):
                    if self.layer_idx % 2 == 0:  # recompile
                        x = x * 2
                    return self.lin(x)

            def fn(x):
                blocks = [torch.compile(Block(i), backend="eager") for i in range(4)]
                with torch.no_grad():
                    for block in blocks:
                        x = block(x)
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Layer(nn.Module):
                def __init__(self, dim: int, depth: int):
                    super().__init__()
                    self.depth = depth
                    self.lin = nn.Linear(dim, dim)

                def forward(self, x):
                    return self.lin(x) / (self.depth + 1)  # recompile

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([Layer(8, depth=i) for i in range(3)])
                    for layer in self.layers:
                        layer.compile(backend="eager")

                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x

            def fn(x):
                with torch.no_grad():
                    return Stack()(x)
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Coupling(nn.Module):
                def __init__(self, dim, flip=False):
                    super().__init__()
                    self.flip = flip
                    self.net = nn.Linear(dim // 2, dim // 2)

                def forward(self, x):
                    a, b = x.chunk(2, dim=1)
                    if self.flip:  # recompile
                        a, b = b, a
                    return torch.cat([a, b + self.net(a)], dim=1)

            class Flow(nn.Module):
                def __init__(self, dim=4, depth=4):
                    super().__init__()
                    layers = []
                    for i in range(depth):
                        layers.append(Coupling(dim, flip=bool(i % 2)))
                    self.layers = nn.ModuleList(layers)

                def forward(self, x):
                    outs = []
                    for layer in self.layers:
                        outs.append(layer(x))
                        print("layer done")  # break (another rule)
                    return torch.stack(outs)
        """, entry="Flow()", inputs="[torch.randn(2, 4), torch.randn(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class Stage(nn.Module):
                def __init__(self, channels, dilation):
                    super().__init__()
                    self.conv = nn.Conv1d(channels, channels, 3, padding=dilation, dilation=dilation)

                def forward(self, x):
                    return x + self.conv(x)  # recompile

            class Encoder(nn.Module):
                def __init__(self, channels=4, depth=3):
                    super().__init__()
                    self.proj = nn.Conv1d(channels, channels, 1)
                    self.stages = nn.Sequential(*[Stage(channels, 2 ** i) for i in range(depth)])

                def forward(self, x):
                    h = self.proj(x)
                    try:
                        scale = float(h.abs().max())  # break (another rule)
                    except RuntimeError:
                        scale = 1.0
                    return self.stages(h / scale)
        """, entry="Encoder()", inputs="[torch.randn(2, 4, 16), torch.randn(2, 4, 16)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self, layer_idx):
                    super().__init__()
                    self.layer_idx = layer_idx
                    self.lin = nn.Linear(8, 8)

                def forward(self, x):
                    if self.layer_idx % 2 == 0:
                        x = x * 2
                    return self.lin(x)

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([Block(i) for i in range(4)])

                def forward(self, x):
                    for layer in self.layers:
                        x = layer(x)
                    return x

            def fn(x):
                model = torch.compile(Stack(), backend="eager")
                with torch.no_grad():
                    model(x)
                    return model(x)
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self, width):
                    super().__init__()
                    self.width = width
                    self.lin = nn.Linear(width, width)

                def forward(self, x):
                    return self.lin(x) * self.width

            def fn(x):
                blocks = [torch.compile(Block(8), backend="eager") for _ in range(4)]
                with torch.no_grad():
                    for block in blocks:
                        x = block(x)
                return x
        """, compiled=False),
    )

    def __init__(self) -> None:
        self.reported: set[str] = set()
        self.eager_calls: set[str] = set()  # the layers whose calls in an eager loop are reported

    def on_Call(self, node: cst.Call, ctx) -> None:
        """`for layer in self.layers: x = layer(x)` in a frame TorchDynamo runs eagerly (a break in
        the loop it cannot resume from): each layer's `forward` is then compiled as a frame of its
        own, and its per-layer attributes are guarded as if compiled one by one."""
        called = ctx.value(node.func)
        if not ctx.is_module(called) or not (ctx.loop_depth or _runs_in_a_loop(called)):
            return
        for callee in ctx.callees(node):
            owner = callee.bound_class or (callee.module.classes.get(callee.class_name or ""))
            if owner is None or callee.key in self.eager_calls:
                continue
            qualified = f"{owner.module.name}.{owner.name}"
            if qualified in ctx.call_sites.per_instance_compiles:
                continue  # compiled one by one anyway: reported in the layer itself
            read = _first_varying_read(ctx, callee, owner)
            if read is None:
                continue
            self.eager_calls.add(callee.key)
            attribute, parameter = read.attr.value, _varying_parameter(ctx, owner, read.attr.value)
            ctx.report_in(self, callee, read, f"`self.{attribute}` comes in `__init__` from `{parameter}`, which "
                                              "the scanned code builds each layer with another value of, and the "
                                              f"layers are called in a loop of a frame TorchDynamo runs eagerly "
                                              f"(`{ctx.code(node)}`): each is compiled as a frame of its own, "
                                              "sharing one compiled `forward` guarded on this value, so the next "
                                              "layer with another value recompiles it", only_if_eager=True)

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        attr = node.attr.value
        if attr in self.reported or ctx.function.class_name is None or ctx.value(node.value) != v.SELF:
            return
        build = _varying_build(ctx, attr)
        if build is None:
            return
        self.reported.add(attr)
        compiled, parameter = build
        message = (f"`self.{attr}` comes in `__init__` from `{parameter}`, which the scanned code gives a loop's int, "
                   f"and the instances are compiled one by one (`{compiled}`): they share one compiled `forward`, "
                   "guarded on this value")
        if ctx.dynamo.enabled("allow_unspec_int_on_nn_module"):
            ctx.report(self, node, f"{message}: the second layer recompiles it once, then "
                                   "`allow_unspec_int_on_nn_module` makes it dynamic", severity="warning")
        else:
            ctx.report(self, node, f"{message}, so every layer recompiles it (until the recompile limit, "
                                   f"{ctx.dynamo.number('recompile_limit')}, then the "
                                   "rest run eagerly)")


def _runs_in_a_loop(called: v.Value) -> bool:
    """An `nn.Sequential` of the scanned layers: its own `forward` calls them in a loop, which
    TorchDynamo does not trace as a frame of its own (torch's code) where its caller runs eagerly."""
    return isinstance(called, v.ModuleValue) and "torch.nn.Sequential" in called.classes


def _varying_parameter(ctx, owner, attr: str) -> str | None:
    """The `__init__` parameter `self.attr` is set from, when the scanned code builds `owner` with
    values of it that a loop varies."""
    qualified = f"{owner.module.name}.{owner.name}"
    varying = ctx.call_sites.varying_builds.get(qualified, set())
    for cls in ctx.class_lineage(owner):
        init = cls.methods.get("__init__")
        if init is None:
            continue
        # Stored as given, or a layer built with it (`nn.Conv1d(c, c, 3, padding=dilation)`, whose
        # `padding` TorchDynamo guards as it guards an int of the module's own).
        parameters = [cls.attr_params[attr]] if attr in cls.attr_params else sorted(cls.attr_built_with.get(attr, ()))
        params = init.node.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)][1:]  # after `self`
        for parameter in parameters:
            if parameter in varying or (parameter in positional and positional.index(parameter) in varying):
                return parameter
    return None


def _first_varying_read(ctx, function, owner) -> cst.Attribute | None:
    """The first `self.<attr>` the function reads whose value a loop varies per instance."""
    if not ctx.call_sites.varying_builds.get(f"{owner.module.name}.{owner.name}"):
        return None
    for node in find_nodes(function.node.body, (cst.Attribute,), prune=(cst.FunctionDef, cst.Lambda)):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" and (
                _varying_parameter(ctx, owner, node.attr.value) is not None):
            return node
    return None


def _varying_build(ctx, attr: str) -> tuple[str, str] | None:
    """(the per-instance compile, the `__init__` parameter) when `self.attr` differs per compiled
    instance of this function's class."""
    qualified = f"{ctx.module.name}.{ctx.function.class_name}"
    compiled = ctx.call_sites.per_instance_compiles.get(qualified)
    info = ctx.find_class(qualified)
    parameter = _varying_parameter(ctx, info, attr) if compiled is not None and info is not None else None
    return (compiled, parameter) if compiled is not None and parameter is not None else None
