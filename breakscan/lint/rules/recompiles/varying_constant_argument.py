import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads


class VaryingConstantArgument(Rule):
    id = "BR018"
    name = "varying-constant-argument"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the calls BREAKSCAN_TARGETS declares give this argument both True and False, or other functions, "
               "classes or dtypes: TorchDynamo guards on which value it is where it is first used, so each other "
               "value compiles the function again")
    fix_hint = ("expect one compile per value (each stays cached), or pick the value outside the compiled "
                "function (one compiled function per setting)")
    docs = """
    ## What it does
    Flags the first use, in compiled code, of a parameter that the calls `BREAKSCAN_TARGETS`
    declares give both bool values (`"[dict(x=x, output_attentions=False), dict(x=x,
    output_attentions=True)]"`), or different objects they name: functions, classes or dtypes of
    the module or of torch (`"[(x, F.silu), (x, F.gelu)]"`); read as written, never run. A bool is
    reported where TorchDynamo reads it: in the compiled function itself, or in a helper it passes
    the flag to; an object at the compiled function's `def`, where TorchDynamo guards a function
    by its code as the frame starts. Likewise a parameter given a tensor by some calls and None
    by others (an optional mask passed on some calls only: the others leave it to its default),
    where it is first used (`if mask is not None`); and other lists, tuples or dicts of
    constants (`["a"]`, then `["a", "b"]`), whose length and items TorchDynamo guards there, and
    lists of tensors of other lengths (`[bag(), bag()]`, then three), whose length it guards; a
    tuple unpacked as it is (`lo, hi = clip`) is guarded where its items are first used. Objects
    of one class of the file built with both values of a bool (`Options()`, then
    `Options(greedy=False)`) are guarded where the attribute is first read (`options.greedy`).

    ## Why is this bad?
    TorchDynamo 2.13 treats a bool, a function, a class or a dtype as a constant and never makes
    it dynamic: the first call guards `output_attentions == False` (or which function
    `activation` is), and another value fails the guard and compiles the function again. Each
    graph stays cached, so a few values cost a few extra compiles (a warning); more than the
    recompile limit (8) and the function runs eagerly.

    ## Example
    ```python
    out = model(x, output_attentions=False)
    out, weights = model(x, output_attentions=True)   # recompiles
    ```

    ## Use instead
    Keep one setting per compiled model (or accept one compile per setting), and compute what
    the flag would skip unconditionally when it is cheap.
    """
    invalid = (
        Example("""
            import torch

            def attend(q, k, return_weights):
                weights = (q @ k.transpose(-2, -1)).softmax(-1)
                out = weights @ k
                return (out, weights) if return_weights else (out, None)  # recompile

            def layer(x, output_attentions=False):
                return attend(x, x, output_attentions)  # passed on: read in the helper

            BREAKSCAN_TARGETS = {
                "layer": "[dict(x=torch.randn(2, 4, 8), output_attentions=False),"
                         " dict(x=torch.randn(2, 4, 8), output_attentions=True)]",
            }
        """, entry="layer", inputs="[dict(x=torch.randn(2, 4, 8), output_attentions=False), "
                                  "dict(x=torch.randn(2, 4, 8), output_attentions=True)]"),
        Example("""
            import torch
            import torch.nn.functional as F

            def mlp(x, w, activation=F.silu):  # recompile
                return activation(x @ w)

            BREAKSCAN_TARGETS = {"mlp": "[(torch.randn(3, 8), torch.randn(8, 8), F.silu), (torch.randn(3, 8), torch.randn(8, 8), F.gelu)]"}
        """, entry="mlp", inputs="[(torch.randn(3, 8), torch.randn(8, 8), F.silu), "
                                "(torch.randn(3, 8), torch.randn(8, 8), F.gelu)]"),
        Example("""
            import torch
            from torch import nn

            def bag(n: int = 4):
                ids = torch.randint(1, 50, (2, n))
                ids[:, n // 2:] *= 0
                return ids

            class ItemTower(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.table = nn.EmbeddingBag(50, 4)

                def forward(self, fields):
                    pooled = torch.stack([self.table(ids) for ids in fields], dim=1)  # recompile
                    return pooled.sum(1)

            BREAKSCAN_TARGETS = {"ItemTower()": "[([bag(), bag()],), ([bag(), bag(), bag()],)]"}
        """, entry="ItemTower()", inputs="[([bag(), bag()],), ([bag(), bag(), bag()],)]"),
        Example("""
            import torch
            from torch import nn

            def make_graph(n=5):
                a = (torch.rand(n, n) > 0.5).float()
                return torch.randn(n, 4), ((a + a.t()) > 0).float()

            class GraphPool(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(4, 4)

                def forward(self, graphs):
                    pooled = []
                    for x, adj in graphs:  # recompile
                        pooled.append((adj @ self.lin(x)).mean(0))
                    return torch.stack(pooled)

            BREAKSCAN_TARGETS = {"GraphPool()": "[([make_graph() for _ in range(2)],), ([make_graph() for _ in range(3)],)]"}
        """, entry="GraphPool()", inputs="[([make_graph() for _ in range(2)],), ([make_graph() for _ in range(3)],)]"),
        Example("""
            import torch
            from typing import Optional

            def masked_mean(x, mask: Optional[torch.Tensor] = None):
                if mask is not None:  # recompile
                    x = x * mask
                return x.mean(-1)

            BREAKSCAN_TARGETS = {"masked_mean": "[torch.randn(2, 5), (torch.randn(2, 5), torch.rand(2, 5) > 0.5)]"}
        """, entry="masked_mean", inputs="[torch.randn(2, 5), (torch.randn(2, 5), torch.rand(2, 5) > 0.5)]"),
        Example("""
            import torch
            import torch.nn.functional as F

            def shade(points, normals=None):
                if normals is not None:  # recompile
                    points = points + normals
                return points.relu()

            def cloud(with_normals):
                normals = F.normalize(torch.randn(6, 3), dim=-1) if with_normals else None
                return {"points": torch.randn(6, 3), "normals": normals}

            BREAKSCAN_TARGETS = {"shade": "[cloud(False), cloud(True)]"}  # what a torch function of a tensor gives
        """, entry="shade", inputs="[cloud(False), cloud(True)]"),
        Example("""
            import torch

            def pooled(parts):
                return torch.stack([p.relu() for p in parts]).mean(0)  # recompile

            def bag(n):
                return ([torch.randn(4) for _ in range(n)],)

            BREAKSCAN_TARGETS = {"pooled": "[bag(2), bag(3)]"}  # the list a helper's comprehension makes
        """, entry="pooled", inputs="[bag(2), bag(3)]"),
        Example("""
            import torch
            from torch import nn
            from typing import Optional

            class Tabular(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.num = nn.Linear(2, 4)
                    self.cat = nn.Embedding(8, 4)

                def forward(self, x_num, x_cat: Optional[torch.Tensor] = None):
                    h = self.num(x_num)
                    if x_cat is not None:  # recompile
                        h = h + self.cat(x_cat).sum(1)
                    return h

            def categories(b):
                return torch.stack([torch.randint(0, c, (b,)) for c in (3, 8)], 1)

            BREAKSCAN_TARGETS = {"Tabular()": "[torch.randn(4, 2), (torch.randn(4, 2), categories(4))]"}
        """, entry="Tabular()", inputs="[torch.randn(4, 2), (torch.randn(4, 2), categories(4))]"),
        Example("""
            import torch
            from torch import nn

            class MultiHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = nn.ModuleDict({name: nn.Linear(4, 2) for name in ("a", "b")})

                def forward(self, x, names):
                    active = names if names is not None else ["a"]  # recompile
                    return [self.heads[name](x) for name in active]

            BREAKSCAN_TARGETS = {"MultiHead()": "[(torch.randn(2, 4), ['a']), (torch.randn(2, 4), ['a', 'b'])]"}
        """, entry="MultiHead()", inputs="[(torch.randn(2, 4), ['a']), (torch.randn(2, 4), ['a', 'b'])]"),
        Example("""
            import torch
            from torch import nn

            class RunningNorm(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("mean", torch.zeros(4))

                def forward(self, obs, clip=(-5.0, 5.0)):
                    z = obs - self.mean
                    lo, hi = clip
                    return z.clamp(lo, hi)  # recompile

            BREAKSCAN_TARGETS = {"RunningNorm()": "[(torch.randn(2, 4),), (torch.randn(2, 4), (-10.0, 10.0))]"}
        """, entry="RunningNorm()", inputs="[(torch.randn(2, 4),), (torch.randn(2, 4), (-10.0, 10.0))]"),
        Example("""
            import torch

            class DecodeOptions:
                def __init__(self, greedy=True, width=4):
                    self.greedy = greedy
                    self.width = width

            def decode(logits, options):
                if options.greedy:  # recompile
                    return logits.argmax(-1)
                return torch.multinomial(logits.softmax(-1), 1).squeeze(-1)

            BREAKSCAN_TARGETS = {"decode": "[(torch.randn(2, 6), DecodeOptions()), (torch.randn(2, 6), DecodeOptions(greedy=False))]"}
        """, entry="decode", inputs="[(torch.randn(2, 6), DecodeOptions()), (torch.randn(2, 6), DecodeOptions(greedy=False))]"),
    )
    valid = (
        Example("""
            import torch

            def layer(x, output_attentions=False):
                weights = (x @ x.transpose(-2, -1)).softmax(-1)
                return (weights @ x, weights) if output_attentions else (weights @ x, None)

            BREAKSCAN_TARGETS = {
                "layer": "[dict(x=torch.randn(2, 4, 8), output_attentions=True),"
                         " dict(x=torch.randn(2, 4, 8), output_attentions=True)]",
            }
        """, entry="layer", inputs="[dict(x=torch.randn(2, 4, 8), output_attentions=True), "
                                  "dict(x=torch.randn(2, 4, 8), output_attentions=True)]"),
    )

    def __init__(self) -> None:
        self.reads = FirstReads()
        self.objects: set[str] = set()  # the object parameters reported
        self.literal_calls: set[int] = set()  # `id` of the calls given a varying literal (or items of one) reported

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)  # inlined: the helper reads the flag, and guards it there

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)
        read = self.reads.first_field_read(node, ctx)
        if read is not None and v.varying_constant(read[1]) == "bool":  # `cfg.normalize`, True, then False
            given, guard = _GUARDED_WHERE_READ["bool"]
            ctx.report(self, node, f"the calls BREAKSCAN_TARGETS declares build `{read[0].partition('.')[0]}` with "
                                   f"`{node.attr.value}` {given}: TorchDynamo guards on {guard} here, so the other "
                                   "one compiles the function again")

    def on_Name(self, node: cst.Name, ctx) -> None:
        varying = v.varying_constant(ctx.local_value(node.value))
        if varying == "object":
            # A Python function is guarded by its code as the frame starts (`activation.__code__`):
            # the recompile is the compiled function's, at its `def`, wherever the value is used.
            if ctx.is_root and node.value not in self.objects:
                self.objects.add(node.value)
                ctx.report(self, ctx.function_start, f"the calls BREAKSCAN_TARGETS declares give `{node.value}` other "
                                                     "functions, classes or dtypes: TorchDynamo guards on which one "
                                                     "it is (a function by its code, as the frame starts), so each "
                                                     "other one compiles the function again")
        elif varying in _GUARDED_WHERE_READ and self.reads.first_read(node, ctx):
            call = id(self.reads.argument_of.get(id(node), node))
            if varying == "literal" and call in self.literal_calls:
                return  # `z.clamp(lo, hi)`, both items of one varying tuple: one guard fails first
            self.literal_calls.add(call)
            given, guard = _GUARDED_WHERE_READ[varying]
            ctx.report(self, node, f"the calls BREAKSCAN_TARGETS declares give `{node.value}` {given}: TorchDynamo "
                                   f"guards on {guard} here, so the other one compiles the function again")


# What the declared calls give, and what TorchDynamo guards where the value is first read, by kind.
_GUARDED_WHERE_READ = {
    "bool": ("both True and False", "its value (a bool never becomes dynamic)"),
    "literal": ("other lists, tuples or dicts of constants (or other items of them)", "their length and items"),
    "optional": ("a tensor on some calls and None on others", "which it is"),
    "length": ("lists or tuples of tensors of other lengths", "the length"),
}
