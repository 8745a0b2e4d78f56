import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import (
    converts_without_break,
    first_size_use,
    holds_tensor_data,
    is_constant_tensor,
)

_ALL = None
_SIZE = frozenset({"size"})
# Where each callee takes integer sizes: which positional arguments (None: all of them, or one
# tuple of them) and which keywords. Methods are keyed by their bare name, functions qualified.
INT_ARGUMENTS: dict[str, tuple[tuple[int, ...] | None, frozenset[str]]] = {
    **{name: (_ALL, _SIZE) for name in ("torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn")},
    "torch.eye": (_ALL, frozenset({"n", "m"})),
    "torch.arange": (_ALL, frozenset({"start", "end", "step"})),
    "torch.full": ((0,), _SIZE),
    "torch.linspace": ((2,), frozenset({"steps"})),
    "torch.logspace": ((2,), frozenset({"steps"})),
    "torch.nn.functional.pad": ((1,), frozenset({"pad"})),
    **{name: (_ALL, _SIZE)
       for name in ("view", "reshape", "expand", "repeat", "tile", "new_zeros", "new_ones", "new_empty")},
    "new_full": ((0,), _SIZE),
    "narrow": ((1, 2), frozenset({"start", "length"})),
    "topk": ((0,), frozenset({"k"})),
    "split": ((0,), frozenset({"split_size"})),
    # NumPy, traced by TorchDynamo as tensors: a size made from traced NumPy data is data too
    **{name: ((0,), frozenset({"shape"})) for name in ("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full")},
    "numpy.arange": (_ALL, frozenset({"start", "stop", "step"})),
}


class TensorSizeArgument(Rule):
    id = "BS108"
    name = "tensor-size-argument"
    gb_ids = ("GB0033",)
    message = "a tensor passed where an integer size is expected must be read into Python: the graph breaks here"
    fix_hint = "size tensors from shapes (`x.shape[1]`) or model constants; keep lengths as masks, not sizes"
    captured_by = ("capture_scalar_outputs",)
    docs = """
    ## What it does
    Flags tensor data passed as an integer size or count: `torch.arange(lengths.max())`,
    `torch.zeros(n, d)` or `x.new_zeros(b, n)` with `n = mask.sum()`, `x.view(n, -1)`,
    `x.expand(n, -1)`, `x.repeat(n)`, `x.narrow(0, 0, n)`, `x.topk(k)`, `F.pad(x, (0, n))`,
    `torch.full((n,), v)`, `torch.linspace(a, b, n)`.

    ## Why is this bad?
    A size must be a Python (symbolic) integer. TorchDynamo turns a tensor there into a
    data-dependent integer it cannot use for a shape, and breaks the graph (GB0033 "Data
    dependent operator"). Under `capture_scalar_outputs` (or `fullgraph=True`) the integer is
    captured as an unbacked symbol and the graph holds: nothing is flagged then.

    ## Example
    ```python
    max_len = lengths.max()
    mask = torch.arange(max_len, device=x.device)[None, :] < lengths[:, None]
    ```

    ## Use instead
    ```python
    max_len = x.shape[1]      # the padded length is already a shape
    mask = torch.arange(max_len, device=x.device)[None, :] < lengths[:, None]
    ```
    """
    invalid = (
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                counts = np.sum([1, 2])  # NumPy data under TorchDynamo
                blocks = np.zeros((2, counts), dtype=np.int32)  # break
                return x * blocks.shape[1]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                lengths = (x.abs() * 4).long() + 1
                max_len = lengths.max()
                steps = torch.arange(max_len, device=x.device)  # break
                return steps[None, :] < lengths[:, None]
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                n = (x > 0).sum() * 0 + 2
                return x.view(1, 8).expand(n, -1) * 2  # break
        """),
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                pad = (x > 0).sum()
                return F.pad(x, (0, pad)) + 1  # break
        """),
    )
    valid = (
        Example("""
            import numpy as np
            import torch

            def schedule(d):  # `d` a Python float: its NumPy logs are read as numbers
                return [np.exp(e) for e in np.arange(2 * np.log(d), 2 * np.log(0.05), 2 * np.log(0.5))]

            @torch.compile
            def fn(x, d: float):
                return x * len(schedule(d))
        """, inputs="(torch.ones(3), 2.0)"),
        Example("""
            import torch

            torch._dynamo.config.capture_scalar_outputs = True

            @torch.compile
            def fn(x):
                n = (x > 0).sum() + 1
                return torch.zeros(n) + torch.arange(n).sum()
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                chunks = torch.div(x.size(1), 2, rounding_mode="trunc") - 1  # from Python numbers only
                return x.new_zeros((x.size(0), chunks + 1, 2))
        """, inputs="torch.randn(3, 8)"),
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(x):
                n = x.shape[0]
                steps = torch.arange(n, device=x.device)
                return F.pad(x.view(2, -1).expand(2, -1), (0, 2)).sum() + steps
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                return torch.full((4,), x.sum()) + x.clamp(max=x.mean()).sum()
        """),
        Example("""
            import math

            import torch
            import torch.nn.functional as F

            def same_padding(size: int, stride: int):
                if isinstance(size, torch.Tensor):  # never, for a size read from a shape
                    return torch.clamp((size / stride).ceil() * stride - size, min=0)
                return max(math.ceil(size / stride) * stride - size, 0)

            @torch.compile
            def fn(x):
                pad = same_padding(x.shape[-1], 3)
                return F.pad(x, (pad // 2, pad - pad // 2))
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        qualified = ctx.qualname(func)
        if qualified is not None:
            callee = qualified
        elif isinstance(func, cst.Attribute) and ctx.is_tensor(func.value):
            callee = func.attr.value
        else:
            return
        if callee not in INT_ARGUMENTS:
            return
        positions, keywords = INT_ARGUMENTS[callee]
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        sizes = positional if positions is None else [positional[i] for i in positions if i < len(positional)]
        sizes += [a.value for a in node.args if a.keyword is not None and a.keyword.value in keywords]
        # A float NumPy result of Python numbers (`np.log(d)` of a float) is read as a number (probed).
        tensors = [size for size in _flatten(sizes)
                   if holds_tensor_data(size, ctx) and not is_constant_tensor(size, ctx)
                   and not converts_without_break(size, ctx)]
        # Evaluate every first use: each one is spent by this break.
        if tensors and any([first_size_use(size, ctx) for size in tensors]):
            ctx.report(self, node)


def _flatten(sizes: list[cst.BaseExpression]) -> list[cst.BaseExpression]:
    """Sizes given one by one or as one tuple/list: `zeros(n, d)`, `zeros((n, d))`."""
    flat = []
    for size in sizes:
        if isinstance(size, (cst.Tuple, cst.List)):
            flat.extend(_flatten([element.value for element in size.elements]))
        else:
            flat.append(size)
    return flat
