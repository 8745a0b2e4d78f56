import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import converts_without_break, holds_tensor_data

CONVERSIONS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.complex"})


class TensorToNumber(Rule):
    id = "BS103"
    name = "tensor-to-number"
    gb_ids = ("GB0124", "GB0059")
    message = "`int()`/`float()`/`bool()` of a tensor reads its value into Python: the graph breaks here"
    fix_hint = "keep the value as a 0-d tensor (tensor ops accept it), or convert a shape (`x.shape[0]`), not data"
    captured_by = ("capture_scalar_outputs",)
    docs = """
    ## What it does
    Flags `int(t)`, `float(t)`, `bool(t)` and `complex(t)` where `t` is tensor data, such as
    `int(mask.sum())`. Conversions of shapes and sizes (`int(x.shape[0])`, `float(x.size(-1))`)
    are plain Python numbers and are not flagged.

    ## Why is this bad?
    Converting a tensor calls `.item()` under the hood: TorchDynamo cannot know the number while
    tracing, so by default (`capture_scalar_outputs=False`) it ends the graph and runs the
    conversion eagerly (GB0124; `complex()` fails earlier, GB0059).

    ## Example
    ```python
    n = int(mask.sum())
    scale = float(x.abs().max())
    ```

    ## Use instead
    ```python
    n = mask.sum()            # a 0-d tensor stays in the graph
    scale = x.abs().max()
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scale = float(x.abs().max())  # break
                return x / scale
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if int((x > 0).sum()) > 2:  # break
                    return x * 2
                return x
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    valid = bool(x.isfinite().all())  # break
                    return x * valid
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scale = 1.0  # a float on the first iteration, a tensor from the second on
                for step in range(3):
                    x = x / float(scale)  # break
                    scale = x.abs().max()
                return x
        """),
        Example("""
            import torch
            from torch import nn

            class Detections:
                def __init__(self, boxes, scores, min_score=0.5):
                    self.boxes = boxes
                    self.scores = scores
                    self.min_score = min_score

                def confident(self):
                    return bool((self.scores > self.min_score).any())  # break

            class Filter(nn.Module):
                def forward(self, x):
                    dets = Detections(x * 2, x.sigmoid())
                    return dets.boxes * dets.confident()  # break (another rule)
        """, entry="Filter()"),
    )
    valid = (
        Example("""
            import torch

            torch._dynamo.config.capture_scalar_outputs = True

            @torch.compile
            def fn(x):
                return x * float(x.sum())
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x, scale):
                if not isinstance(scale, (int, float)):
                    scale = scale.mean()
                else:
                    scale = float(scale)  # `scale` is a Python number on this branch
                return x * scale
        """, inputs="(torch.randn(8), 0.5)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                n = int(x.shape[0])
                return x * float(x.size(0)) + n
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x, steps):
                    return x * int(steps)
        """, entry="Model()", inputs="(torch.randn(8), 3)"),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                rows = int(np.ceil(x.shape[0] / 3))  # a float NumPy computed from a size
                return x[:rows]
        """),
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            def resample(x, scales):
                if isinstance(scales, (int, float)):
                    scales = [scales] * 2
                size = [int(round(n * s)) for n, s in zip(x.shape[-2:], scales)]  # numbers: no break
                return F.interpolate(x, size=size)

            class Model(nn.Module):
                def forward(self, x, output_shape=None):
                    if output_shape is not None:
                        x = resample(x, [m / n for n, m in zip(x.shape[-2:], output_shape)])
                    return x
        """, entry="Model()", inputs="(torch.randn(1, 1, 4, 4), (8, 8))"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if (len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star
                and ctx.qualname(node.func) in CONVERSIONS and holds_tensor_data(node.args[0].value, ctx)
                and not converts_without_break(node.args[0].value, ctx)):
            ctx.report(self, node)
