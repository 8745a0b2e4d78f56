import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import data_operand, holds_tensor_data, jump_holder, undecided_guard


class TensorIf(Rule):
    id = "BS201"
    name = "tensor-if"
    gb_ids = ("GB0170",)
    message = "`if` on a tensor's value: TorchDynamo cannot pick a branch while tracing, the graph breaks"
    fix_hint = "compute both sides and select with torch.where, or branch with torch.cond"
    docs = """
    ## What it does
    Flags `if` and `elif` statements whose condition depends on tensor data (`if x.sum() > 0:`,
    `if not mask.any():`, `if mask is not None and mask.any():`), not on shapes, dtypes, Python
    flags or `None` checks (`if x.shape[0] > 2:` is fine). A condition that converts first
    (`if x.sum().item() > 0:`, `if bool(t):`) breaks at the conversion: that is BS101 / BS103.

    ## Why is this bad?
    The branch taken depends on values that only exist at run time, so TorchDynamo ends the
    graph at the condition, evaluates it eagerly, and traces the branch taken as a new graph
    (GB0170 "Data-dependent branching").

    ## Example
    ```python
    if x.sum() > 0:
        x = x * 2
    ```

    ## Use instead
    ```python
    x = torch.where(x.sum() > 0, x * 2, x)
    ```
    or `torch.cond(pred, true_fn, false_fn, (x,))` when the branches differ in work.
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class MultiTaskLoss(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.weights = {"cls": 1.0, "reg": 0.5}
                    self.last = {}

                def forward(self, logits, labels, pred, target):
                    losses = {"cls": F.cross_entropy(logits, labels), "reg": F.l1_loss(pred, target)}
                    total = 0.0
                    for name, value in losses.items():  # `value`: each loss, a tensor
                        total = total + self.weights[name] * value
                        self.last[name] = value.detach()
                    if self.last["reg"] > 10.0:  # break
                        total = total * 0.5
                    return total
        """, entry="MultiTaskLoss()",
                inputs="(torch.randn(4, 3), torch.randint(0, 3, (4,)), torch.randn(4, 2), torch.randn(4, 2))"),
        Example("""
            import torch
            from torch import nn

            class Normalizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    self.peak = x.abs().max()  # set here, read by the method it calls
                    return self.rescale(self.proj(x))

                def rescale(self, x):
                    if self.peak > 1:  # break
                        return x / self.peak
                    return x
        """, entry="Normalizer()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch
            from torch import nn

            class Tracker(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    self.track(x)
                    if self.spread > 1:  # break
                        x = x / self.spread
                    return self.proj(x)

                def track(self, x):
                    self.spread = x.std()  # set by the method forward called first
        """, entry="Tracker()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            def flatten(probas, labels):
                return probas.reshape(-1, probas.shape[1]), labels.reshape(-1)

            def per_class(probas, labels):
                kept = []
                for c in range(probas.size(1)):
                    fg = (labels == c).type_as(probas)  # `*flatten(...)` passed it: a tensor
                    if fg.sum() == 0:  # break
                        continue
                    kept.append((fg - probas[:, c]).abs().mean())
                return torch.stack(kept).mean()

            @torch.compile
            def fn(probas):
                return per_class(*flatten(probas, probas.argmax(1)))
        """, inputs="torch.rand(2, 3, 4, 4)"),
        Example("""
            import torch
            from torch import nn

            class Base(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)

                @property
                def gain(self):
                    return self.proj.weight.norm()  # a torch layer's weight: a tensor

            class Model(Base):
                def forward(self, x):
                    if self.proj.bias is not None:
                        x = x + 1
                    if self.gain > 1:  # break
                        x = x * 2
                    return self.proj(x)
        """, entry="Model()", inputs="torch.randn(2, 4)"),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                period = np.lcm(4, 6)  # traced as NumPy data, though its inputs are Python ints
                if x.shape[0] % period != 0:  # break
                    x = x * 2
                return x
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x, t):
                if isinstance(t, torch.Tensor):
                    if t.sum() > 0:  # break
                        return x * t
                return x
        """, inputs="(torch.randn(8), torch.randn(8))"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if x.sum() > 0:  # break
                    return x * 2
                return x - 1
        """),
        Example("""
            import torch

            def bump(x):
                if x.sum() > 0:  # break
                    return x + 1
                return x

            @torch.compile
            def fn(x):
                for _ in range(3):
                    x = bump(x)
                if x.mean() > 0:  # not a break: a break in a loop makes TorchDynamo run the rest of fn eagerly
                    x = x * 2
                return x
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if x.shape[0] > 16:
                    return x
                elif not (x > 0).any():  # break
                    return x - 1
                return x * 2
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x, mask=None):
                    if mask is not None and mask.any():  # break
                        x = x.masked_fill(mask, 0.0)
                    return x * 2
        """, entry="Model()", inputs="(torch.randn(8), torch.randn(8) > 0)"),
        Example("""
            import torch

            @torch.compile
            def fn(x, y):
                if (  # break
                    (x < 0.5).any()
                    or (y < 0.5).any()
                ):
                    return x + 1
                return x - 1
        """, inputs="(torch.rand(8), torch.rand(8))"),
        Example("""
            import torch

            @torch.compile
            def fn(x, y):
                if (
                    x.sum() > y.sum()  # break
                ):
                    return x + 1
                return x - 1
        """, inputs="(torch.rand(8), torch.rand(8))"),
        Example("""
            from dataclasses import dataclass

            import torch
            from torch import nn

            @dataclass
            class Output:
                loss: object
                steps: int

            class Stats:
                def __init__(self, peak, count):
                    self.peak = peak
                    self.count = count

            class Model(nn.Module):
                def summarize(self, x):
                    return Output(x.pow(2).mean(), steps=2), Stats(x.max(), x.shape[0])

                def forward(self, x):
                    out, stats = self.summarize(x)
                    for _ in range(out.steps):  # a Python int the object was built with
                        x = x * 0.5
                    if stats.count > 2:
                        x = x + 1
                    if out.loss > 1.0:  # break
                        x = x / 2
                    if stats.peak > 0:  # break
                        x = x - 1
                    return x
        """, entry="Model()"),
        Example("""
            import collections
            from typing import NamedTuple

            import torch
            from torch import nn

            Output = collections.namedtuple("Output", "loss logits")
            Tableau = NamedTuple("Tableau", [("weights", torch.Tensor), ("order", int)])
            HEUN = Tableau(torch.tensor([0.5, 0.5]), 2)

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 4)

                def forward(self, x):
                    logits = self.proj(x)
                    return Output(logits.pow(2).mean(), logits)

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = Head()

                def forward(self, x):
                    out = self.head(x)
                    y = out.logits
                    for _ in range(HEUN.order):  # a Python int
                        y = y * 0.5
                    if out.loss > 10:  # break
                        y = y / 2
                    for weight in HEUN.weights:
                        if weight == 1.0:  # break
                            y = y + 1
                    return y
        """, entry="Model()", inputs="torch.randn(2, 8)"),
        Example("""
            import collections

            import torch
            from torch import nn

            Tableau = collections.namedtuple("Tableau", "alpha, beta")

            def rk_step(y, tableau):
                for i, (alpha_i, beta_i) in enumerate(zip(tableau.alpha, tableau.beta)):
                    if alpha_i == 1.0:  # break
                        y = y + beta_i * i
                return y

            class Solver(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.tableau = Tableau(alpha=torch.tensor([0.5, 1.0]), beta=torch.tensor([0.25, 0.75]))

                def forward(self, y):
                    return rk_step(y, tableau=self.tableau)
        """, entry="Solver()", inputs="torch.randn(4)"),
        Example("""
            import torch
            from torch import nn

            class Scale(nn.Module):
                def forward(self, x, scale=1.0):
                    if scale > 1:  # break
                        return x / scale
                    return x

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.scale = Scale()

                def forward(self, x):
                    return self.scale(x, **{"scale": x.std()})  # the module's forward is given a tensor
        """, entry="Model()"),
        Example("""
            import torch

            _TABLE = torch.arange(10)  # a module-level tensor
            _DTYPE = torch.get_default_dtype()

            @torch.compile
            def fn(x):
                if _DTYPE == torch.float32:
                    x = x * 2
                if _TABLE[0] == 0:  # break
                    return x + 1
                return x
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                stats = {}
                for name in ("low", "high"):
                    stats[name] = x.amax() if name == "high" else x.amin()  # under keys the loop makes
                if stats["high"] > 2 * stats["low"]:  # break
                    return x / 2
                return x
        """),
        Example("""
            import torch
            from torch import nn

            class SkippingList(nn.ModuleList):
                def __iter__(self):  # the loops over it run this
                    draws = torch.rand(len(self))
                    for i, layer in enumerate(super().__iter__()):
                        if draws[i] > 0.1:  # break
                            yield layer

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = SkippingList([nn.Linear(8, 8), nn.Linear(8, 8)])

                def forward(self, x):
                    for layer in self.layers:
                        x = x + layer(x)
                    return x
        """, entry="Encoder()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch
            from torch import nn

            class WarmupNorm(nn.BatchNorm1d):
                def forward(self, x):
                    # a buffer BatchNorm1d registers: a tensor
                    if self.num_batches_tracked < 10:  # break
                        x = x * 0.5
                    return super().forward(x)
        """, entry="WarmupNorm(8)", inputs="torch.randn(4, 8)"),
    )
    valid = (
        Example("""
            import torch

            def check_regularization(reg):
                if reg < 0:  # `reg`: the compiled function's untyped parameter, passed on as it came
                    raise ValueError("reg must be >= 0")

            @torch.compile
            def fn(cost, reg):
                check_regularization(reg)
                return (-cost / reg).softmax(-1)
        """, inputs="(torch.rand(3, 4), 0.1)"),
        Example("""
            import torch

            def check_unbalanced(unbalanced):
                if unbalanced is not None and unbalanced <= 0:  # a number where it is not None
                    raise ValueError("unbalanced must be > 0")

            @torch.compile
            def fn(cost, reach=None, unbalanced=None):
                if reach is not None:
                    unbalanced = 2 * reach ** 2  # computed from `reach` as from a number
                check_unbalanced(unbalanced)
                return cost.softmax(-1) if unbalanced is None else (cost / unbalanced).softmax(-1)
        """, inputs="(torch.rand(3, 4), 0.5)"),
        Example("""
            import torch
            from torch import nn

            class Tracker(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)
                    self.spread = 1.0

                def forward(self, x):
                    self.track(x, keep=False)
                    if self.spread > 1:  # the float `__init__` set: `track` returned before storing
                        x = x / self.spread
                    return self.proj(x)

                def track(self, x, keep: bool):
                    if not keep:
                        return
                    self.spread = x.std()
        """, entry="Tracker()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch
            from torch import nn

            class Normalizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    self.rows = x.shape[0]  # a Python int
                    return self.rescale(self.proj(x))

                def rescale(self, x):
                    if self.rows > 1:
                        return x / self.rows
                    return x
        """, entry="Normalizer()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            def autocast_on(device):
                try:
                    return torch.is_autocast_enabled(device)
                except TypeError:
                    return torch.is_autocast_cpu_enabled()  # a Python bool, as torch declares

            @torch.compile
            def fn(x):
                if autocast_on(x.device.type):
                    x = x.half()
                return x + 1
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                seen = 0
                for step in range(3):
                    if seen > 1:  # an int on every iteration
                        x = x * 2
                    seen = seen + x.dim()
                return x
        """),
        Example("""
            import torch

            def apply(x, kind):
                if kind == "double":  # a tensor never equals a string: Python values
                    return x * 2
                return x

            @torch.compile
            def fn(x, mode):
                return apply(x, mode)
        """, inputs="(torch.randn(8), 'double')"),
        Example("""
            import torch

            def shift(t, amount):
                if amount == 0:  # handed over in *pair: not known to be a tensor
                    return t
                return t.roll(amount, 0)

            @torch.compile
            def fn(x):
                parts = [shift(*pair) for pair in zip(x.chunk(2), (0, 1))]
                return torch.cat(parts)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if x.shape[0] > 2:
                    return x * 2
                return x - 1
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return torch.where(x.sum() > 0, x * 2, x - 1)
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x, mask=None):
                    if mask is not None and x.dim() == 1:
                        x = x.masked_fill(mask, 0.0)
                    if self.training:
                        x = x * 2
                    return x
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x, t):
                if isinstance(t, torch.Tensor):
                    return x * t
                if t > 0.5:  # past the return, `t` is not a tensor
                    return x * 2
                return x
        """, inputs="(torch.randn(8), 0.75)"),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x, **options):
                    repeats = options.get("repeats", 1)
                    if repeats > 1:  # a keyword option, not tensor data
                        x = x.repeat(repeats)
                    return x
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Attend(nn.Module):
                def forward(self, x, context=None, inverted=False):
                    if inverted:  # a flag, whatever `context` became
                        return -x
                    return x + context

            class PreNorm(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fn = Attend()

                def forward(self, x, **kwargs):
                    kwargs.update(context=kwargs["context"] * 2)  # that key only
                    return self.fn(x, **kwargs)

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.block = PreNorm()

                def forward(self, x):
                    return self.block(x, context=x, inverted=False)
        """, entry="Model()"),
    )

    def on_If(self, node: cst.If, ctx) -> None:
        if holds_tensor_data(node.test, ctx):
            ctx.report(self, data_operand(node.test, ctx), start_at=jump_holder(node, node.test, ctx),
                       end_at=node.test, guard=undecided_guard(node.test, ctx))
