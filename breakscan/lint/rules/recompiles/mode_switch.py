import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads

# torch.nn classes whose forward reads `self.training` (or builds one that does): where TorchDynamo
# guards the mode of a compiled module. Checked against the installed torch's sources by the tests.
TRAINING_DEPENDENT_MODULES = frozenset({
    "AlphaDropout", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "FeatureAlphaDropout", "GRU", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LSTM",
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d", "MultiheadAttention", "RNN", "RReLU", "SyncBatchNorm", "Transformer",
    "TransformerDecoderLayer", "TransformerEncoderLayer",
})


class ModeSwitch(Rule):
    id = "BR003"
    name = "train-eval-switch"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the compiled module's code depends on its training mode here, and the scanned code switches "
               "a compiled instance between `.train()` and `.eval()`: TorchDynamo guards on the mode, so the "
               "first call in the other mode compiles it again")
    fix_hint = ("expect one compile per mode (later switches reuse both), or keep evaluation out of the "
                "training loop's compiled module")
    docs = """
    ## What it does
    Flags, in the `forward` of an `nn.Module` that the scanned code compiles and switches between
    training and evaluation (`model.train()` and `model.eval()`, or `.eval()` after a call in the
    training mode a module starts in), the first place whose result depends on the mode: a read
    of `self.training`, or a call of a submodule whose forward reads it (`Dropout`, `BatchNorm`,
    `InstanceNorm`, `RNN`/`LSTM`/`GRU`, `MultiheadAttention`, the `Transformer` layers...).
    Submodules of the compiled module's own classes are followed, and so is the mode passed on to
    a helper (`drop_path(x, self.drop_prob, self.training)`): it is read where the helper first
    uses it. A step `BREAKSCAN_TARGETS` declares between calls (`lambda m: m.eval()`) switches
    the mode too, and so does calling a module reached through a container (`for block in
    self.blocks: block(x)`). Reported where TorchDynamo guards the mode.

    ## Why is this bad?
    TorchDynamo 2.13 guards `self.training == True` (or `self._modules['drop'].training`) where
    the compiled code reads the mode: the first call after a switch fails that guard and
    compiles the module again. Both compiled versions are kept, so later switches cost nothing,
    but each mode costs a full compile, and the recompile counts towards the recompile limit
    (8) with every other guard that fails. A module whose code never reads the mode (only
    `Linear`, activations, normalisation without running statistics) does not recompile and is
    not flagged. When the scanned code also calls the module under `torch.no_grad()` (the usual
    evaluation), the grad-mode guard fails first and that one recompile is BR005's.

    ## Example
    ```python
    compiled = torch.compile(model)
    for epoch in range(epochs):
        model.train()
        train_one_epoch(compiled)
        model.eval()
        evaluate(compiled)       # compiles `forward` again, in eval mode
    ```

    ## Use instead
    Expect one compile per mode and budget for it (a warning, not a fault), or evaluate with
    the uncompiled `model` when evaluation is rare, so that only the training graph is compiled.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            def drop_path(x, drop_prob: float = 0.0, training: bool = False):
                if drop_prob == 0.0 or not training:  # recompile
                    return x
                keep = x.new_empty(x.shape[0], 1).bernoulli_(1 - drop_prob)
                return x * keep / (1 - drop_prob)

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.mlp = nn.Linear(8, 8)

                def forward(self, x):
                    return x + drop_path(self.mlp(x), 0.1, self.training)

            BREAKSCAN_TARGETS = {"Block()": "[torch.randn(2, 8), lambda m: m.eval(), torch.randn(2, 8)]"}
        """, entry="Block()", inputs="[torch.randn(2, 8), lambda m: m.eval(), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            def sample_depths(n_rays, n_samples, perturb: bool):
                z = torch.linspace(0.0, 1.0, n_samples).expand(n_rays, n_samples)
                if perturb:  # recompile
                    z = z + torch.rand_like(z) / n_samples
                return z

            class Renderer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.field = nn.Linear(1, 2)

                def forward(self, rays):
                    z = sample_depths(rays.shape[0], 4, perturb=self.training)
                    raw = self.field(z[..., None])
                    if self.training:  # guarded already, where the helper used it
                        raw = raw + torch.randn_like(raw)
                    return raw.sum(1)

            BREAKSCAN_TARGETS = {"Renderer()": "[torch.randn(3, 3), lambda m: m.eval(), torch.randn(3, 3)]"}
        """, entry="Renderer()", inputs="[torch.randn(3, 3), lambda m: m.eval(), torch.randn(3, 3)]"),
        Example("""
            import torch
            from torch import nn

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1)) for _ in range(2))

                def forward(self, x):
                    for block in self.blocks:
                        x = x + block(x)  # recompile
                    return x

            BREAKSCAN_TARGETS = {"Stack()": "[torch.randn(2, 8), lambda m: m.eval(), torch.randn(2, 8)]"}
        """, entry="Stack()", inputs="[torch.randn(2, 8), lambda m: m.eval(), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)

                def forward(self, x):
                    y = self.lin(x)
                    if self.training:  # recompile
                        y = y * 2
                    return y

            def fn(x):
                model = Net()
                compiled = torch.compile(model, backend="eager")
                for _ in range(2):
                    model.train()
                    compiled(x)
                    model.eval()
                    compiled(x)
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 4)
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    return self.drop(self.lin(x))  # recompile

            def fn(x):
                model = torch.compile(Classifier(), backend="eager")
                model(x)
                model.eval()
                return model(x)
        """, compiled=False),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Classifier(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 4)
                    self.drop = nn.Dropout(0.1)

                def forward(self, x):
                    return self.drop(self.lin(x))

            def fn(x):
                model = Classifier()
                model.eval()
                compiled = torch.compile(model, backend="eager")
                compiled(x)
                return compiled(x)
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Projection(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 4)

                def forward(self, x):
                    return torch.relu(self.lin(x))

            def fn(x):
                model = Projection()
                compiled = torch.compile(model, backend="eager")
                for _ in range(2):
                    model.train()
                    compiled(x)
                    model.eval()
                    compiled(x)
                return x
        """, compiled=False),
    )

    def __init__(self) -> None:
        self.reported = False  # one finding per function: the first guard on the mode is the one that fails
        self.reads = FirstReads()

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)
        # Passed on to a function it inlines (`drop_path(x, p, self.training)`), the mode is read there,
        # which reports it: later reads here find it guarded already.
        if node.attr.value == "training" and ctx.value(node.value) == v.SELF:
            if not self.reads.passed_on(node, ctx):
                self._report(node, ctx, "`self.training` is read")
            elif self.reads.read_by_callee(node, ctx):
                self.reported = True

    def on_Name(self, node: cst.Name, ctx) -> None:
        if ctx.is_called and v.is_mode(ctx.local_value(node.value)) and self.reads.first_read(node, ctx) and (
                not self.reported):
            switch = next((s for root, s in ctx.call_sites.mode_flips.items() if root not in ctx.call_sites.state_switches), None)
            if switch is not None:
                self.reported = True
                ctx.report(self, node, f"`{node.value}`, a module's training mode, is first used here, in code a "
                                       f"compiled module the scanned code switches between training and evaluation "
                                       f"(`{switch}`) runs: TorchDynamo guards on the mode, so the first call in the "
                                       "other mode compiles it again (once; later switches reuse both)")

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)
        func = node.func
        if isinstance(func, cst.Attribute) and ctx.value(func.value) == v.SELF:
            dependent = _mode_dependent(ctx.value(func))
            if dependent:
                self._report(node, ctx, f"`self.{func.attr.value}` ({dependent[0]}) reads `self.training`")
        elif isinstance(func, cst.Name) and ctx.local_value(func.value) is not None:
            # `for blk in self.blocks: blk(x)`: a module reached through a container
            dependent = _mode_dependent(ctx.value(func))
            if dependent:
                self._report(node, ctx, f"`{func.value}` ({dependent[0]}, held in a container of the module) reads "
                                        "`self.training`")

    def _report(self, node: cst.CSTNode, ctx, what: str) -> None:
        if self.reported or ctx.function.class_name is None:
            return
        switch = _switched_root(ctx)
        if switch is None:
            return
        self.reported = True
        ctx.report(self, node, f"{what} in a compiled module the scanned code switches between training and "
                               f"evaluation (`{switch}`): TorchDynamo guards on the mode, so the first call in the "
                               "other mode compiles it again (once; later switches reuse both)")


def _mode_dependent(module: v.Value) -> list[str]:
    """The torch.nn classes a module value may be (or hold) whose forward reads the mode."""
    if not isinstance(module, v.ModuleValue):
        return []
    return sorted(c.rsplit(".", 1)[-1] for c in module.classes
                  if c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in TRAINING_DEPENDENT_MODULES)


def _switched_root(ctx) -> str | None:
    """The `.train()`/`.eval()` call of a compiled module whose forward runs this class's code:
    the module's class, its bases, and the classes of its submodules, followed through the project."""
    sites = ctx.call_sites
    own = f"{ctx.module.name}.{ctx.function.class_name}"
    for root, switch in sites.mode_flips.items():
        if root in sites.state_switches:
            continue  # evaluated under no_grad too: the grad-mode guard fails first (BR005 reports it)
        seen, queue = set(), [root]
        while queue:
            name = queue.pop()
            if name == own:
                return switch
            if name in seen:
                continue
            seen.add(name)
            info = ctx.find_class(name)
            if info is None:
                continue
            for cls in ctx.class_lineage(info):
                queue.append(f"{cls.module.name}.{cls.name}")
                for classes in cls.attr_classes.values():
                    queue.extend(classes)
    return None
