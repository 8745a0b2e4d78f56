import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import (
    assigned_values, first_size_use, holds_tensor_data, is_scalar_tensor, tensor_element,
)


class TensorScalarIndex(Rule):
    id = "BS104"
    name = "tensor-scalar-index"
    gb_ids = ("GB0033", "GB0124")
    message = "a tensor used as an integer index or slice bound must be read into Python: the graph breaks here"
    fix_hint = "index with a 1-d index tensor (index_select, gather) or a mask; keep slice bounds Python ints"
    docs = """
    ## What it does
    Flags subscripts that need a tensor's value as a Python integer:
    - a 0-d tensor computed in the compiled code used as an index (`x[x.argmax()]`,
      `w[i + 1]` after `i = scores.argmax()`), on a tensor or on a list;
    - a tensor as a slice bound (`x[:lengths.max()]`, `slice(ptr[i], ptr[i + 1])`);
    - a tensor indexing a Python list, tuple or `nn.ModuleList` (`self.heads[task_id]`);
    - an element of a tensor of one dimension used as an index (`perm[0]`, or `for idx in perm:
      x[..., idx]`), where the code says it has one dimension: made by `torch.arange`,
      `torch.tensor([...])`, `.flatten()` or `.view(-1)`, or given with one size by every call
      `BREAKSCAN_TARGETS` declares (`torch.full((4,), 500)`); as a warning where it does not say.

    Advanced indexing with index tensors of one or more dimensions (`x[idx]`, `x[:, perm]`,
    `t[rows, cols]`) keeps the graph and is not flagged. A subscript with several indices is never
    taken for a list or module container (those take one index). Under `capture_scalar_outputs`
    (or `fullgraph=True`) a tensor's slice bound is captured as a symbolic integer and is not
    flagged; a 0-d index still breaks (with no GB id: "Could not extract specialized integer
    from data-dependent expression"), and a Python container indexed by a tensor fails on a
    guard TorchDynamo cannot evaluate.

    ## Why is this bad?
    A 0-d integer index selects one element: TorchDynamo must turn the index into an integer it
    cannot know while tracing, so it breaks the graph (GB0033 "Data dependent operator"). Slice
    bounds and Python containers need a real `int` and call `.item()` (GB0124).

    ## Example
    ```python
    best = scores.argmax()
    return features[best]
    ```

    ## Use instead
    ```python
    best = scores.argmax()
    return features.index_select(0, best.view(1)).squeeze(0)
    ```
    or `torch.gather` / a one-hot product for per-row choices.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class TopOneRouter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = nn.Linear(16, 4)
                    self.experts = nn.ModuleList([nn.Linear(16, 16) for _ in range(4)])

                def forward(self, x):
                    scores = self.gate(x.mean(0))
                    idx = scores.argmax()
                    expert = self.experts[idx]  # break
                    return expert(x) * scores.softmax(-1)[idx]  # `idx` is an input of the graph after: no break
        """, entry="TopOneRouter()", inputs="torch.randn(5, 16)"),
        Example("""
            import torch

            @torch.compile
            def fn(src, indptr):
                sums = []
                for i in range(indptr.shape[0] - 1):
                    rows = slice(indptr[i], indptr[i + 1])  # break
                    sums.append(src[rows].sum(0))
                return torch.stack(sums)
        """, inputs="(torch.randn(6, 4), torch.tensor([0, 2, 6]))"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                pick = (x > 0).sum() % 3
                return x * [0.5, 1.0, 2.0][pick]  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return x[x.argmax()] * 2  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                table = torch.arange(16.0).view(4, 4)
                row = (x > 0).sum() % 4
                return table[row] + x.sum()  # break
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                count = (x > 0).sum()
                return x[:count] * 2  # break
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])

                def forward(self, x):
                    task = (x.sum() > 0).long()
                    return self.heads[task](x)  # break
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(y, perm):
                out = y[0] * 0
                for idx in perm:
                    out = out + y[..., idx]  # break
                return out
        """, inputs="(torch.ones(3, 3), torch.tensor([2, 0, 1]))"),
        Example("""
            import torch
            from torch import nn

            class Schedule:
                def __init__(self, steps=10):
                    self.levels = torch.linspace(0.1, 1.0, steps).tolist()  # Python floats

                def mix(self, x, noise, step):
                    level = self.levels[step]  # break
                    return level * x + (1 - level) * noise

            class Denoiser(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.schedule = Schedule()
                    self.net = nn.Linear(4, 4)

                def forward(self, x):
                    step = torch.randint(0, 10, ())
                    return self.net(self.schedule.mix(x, torch.randn_like(x), step))
        """, entry="Denoiser()", inputs="torch.randn(2, 4)"),
        Example("""
            import torch
            from torch import nn

            class Scheduler(nn.Module):
                def __init__(self, steps=100):
                    super().__init__()
                    self.register_buffer("alphas", torch.linspace(0.99, 0.01, steps))

                def _alpha(self, t):
                    return self.alphas[t]  # break

                def forward(self, sample, t):
                    previous = t - 10  # 0-d, computed in the graph (`t` itself is read and guarded)
                    return sample * self._alpha(t).sqrt() + self._alpha(previous)

            BREAKSCAN_TARGETS = {"Scheduler()": "[(torch.randn(4), torch.tensor(50)), (torch.randn(4), torch.tensor(40))]"}
        """, entry="Scheduler()", inputs="(torch.randn(4), torch.tensor(50))"),
        Example("""
            import torch
            from torch import nn

            class Schedule(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("alphas", torch.linspace(0.99, 0.5, 100))

                def alpha(self, t):
                    return self.alphas[t]  # break

                def forward(self, x, t):
                    return x * self.alpha(t[0])  # one timestep of a batch given one size: 0-d

            BREAKSCAN_TARGETS = {"Schedule()": "(torch.randn(4), torch.full((4,), 10))"}
        """, entry="Schedule()", inputs="(torch.randn(4), torch.full((4,), 10))"),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_scalar_outputs = True

            @torch.compile
            def fn(x):
                return x[: (x > 0).sum()].sum() * 2
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.tables = nn.ParameterList([nn.Parameter(torch.randn(5)) for _ in range(2)])

                def forward(self, x):
                    index = (x.abs() * 4).long().clamp(max=4).view(4, 2)
                    # a Parameter indexed by an index tensor: a gather, not a Python int
                    return torch.stack([self.tables[i][index[..., i]] for i in range(2)], dim=-1)
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                idx = x.argsort()
                best = x.view(2, 4).argmax(dim=1)
                return x[idx] + x[best].sum() + x[: x.shape[0] // 2].sum()
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                best = x.argmax()
                return x.index_select(0, best.view(1)) * 2
        """),
        Example("""
            import torch
            from torch import nn

            class Schedule(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("alphas", torch.linspace(0.99, 0.5, 100))

                def forward(self, x, t):
                    return x * self.alphas[t].view(-1, 1)  # each row's timestep: a gather

            BREAKSCAN_TARGETS = {"Schedule()": "(torch.randn(4, 3), torch.full((4,), 10))"}
        """, entry="Schedule()", inputs="(torch.randn(4, 3), torch.full((4,), 10))"),
        Example("""
            import torch
            from torch import nn

            def first(items):
                return items[0]

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(4, 4)])

                def forward(self, x):
                    t = first(self.layers)(x.view(2, 4))
                    t = first([t, t + 1])
                    rows = torch.arange(2).unsqueeze(-1)
                    best = t.argmax(dim=-1, keepdim=True)
                    return t[rows, best] * 2
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        # `slice(ptr[i], ptr[i + 1])` reads its bounds when it is built (probed), as `x[a:b]` does.
        if (ctx.qualname(node.func) == "builtins.slice" and not ctx.dynamo.enabled("capture_scalar_outputs")
                and any(not a.star and holds_tensor_data(a.value, ctx) for a in node.args)):
            ctx.report(self, node)

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        # `t[rows, cols]`: a list or a module container takes a single index, so this is a tensor.
        sequence = len(node.slice) == 1 and _is_python_sequence(node.value, ctx)
        # A tensor's slice bound is captured as a symbolic integer; a 0-d index still breaks.
        captured = not sequence and ctx.dynamo.enabled("capture_scalar_outputs")
        for element in node.slice:
            item = element.slice
            if isinstance(item, cst.Slice):
                needs_int = not captured and any(bound is not None and holds_tensor_data(bound, ctx)
                                for bound in (item.lower, item.upper, item.step))
            elif item.star:
                needs_int = False
            elif sequence:  # `self.experts[idx]`: the first use of `idx` breaks, and the graph after reads it as an int
                needs_int = holds_tensor_data(item.value, ctx) and first_size_use(item.value, ctx)
            else:
                needs_int = is_scalar_tensor(item.value, ctx) and first_size_use(item.value, ctx)
                source = None if needs_int else tensor_element(item.value, ctx)
                if source is not None and first_size_use(item.value, ctx):
                    ctx.report(self, node, f"{self.message} (when `{ctx.code(source)}` has one dimension: "
                                           f"`{ctx.code(item.value)}` is one of its elements, a 0-d tensor; breakscan "
                                           "cannot tell how many dimensions it has)", severity="warning")
                    return
            if needs_int:
                ctx.report(self, node)
                return


def _is_python_sequence(node: cst.BaseExpression, ctx) -> bool:
    """A list, tuple or module container: indexing it needs a Python int."""
    value = ctx.value(node)
    if isinstance(value, v.ModuleValue) or value == v.TENSORS or v.sort_of(value) in ("list", "tuple"):
        return True
    if not isinstance(node, cst.Name):
        return False
    values = assigned_values(node.value, ctx)
    return bool(values) and all(isinstance(value, (cst.List, cst.Tuple, cst.ListComp)) for value in values)
