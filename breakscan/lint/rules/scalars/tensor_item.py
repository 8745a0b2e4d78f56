import libcst as cst

from breakscan.lint.rule import Example, Rule


class TensorItem(Rule):
    id = "BS101"
    name = "tensor-item"
    gb_ids = ("GB0124",)
    message = "`.item()` copies a tensor value into Python: the graph breaks here"
    fix_hint = "keep the value as a 0-d tensor, or set torch._dynamo.config.capture_scalar_outputs = True"
    captured_by = ("capture_scalar_outputs",)
    docs = """
    ## What it does
    Flags `Tensor.item()` inside code that runs under `torch.compile`.

    ## Why is this bad?
    `.item()` turns tensor data into a Python number. TorchDynamo cannot know that number while
    tracing, so by default (`capture_scalar_outputs=False`) it ends the graph, runs `.item()`
    eagerly and starts a new graph after it (GB0124).

    ## Example
    ```python
    scale = x.abs().max().item()
    return x / scale
    ```

    ## Use instead
    ```python
    scale = x.abs().max()   # a 0-d tensor stays in the graph
    return x / scale
    ```
    Or, when the scalar really is needed, `torch._dynamo.config.capture_scalar_outputs = True`.
    """
    invalid = (
        Example("""
            from functools import partial

            import torch
            from torch import nn

            def sinkhorn(x, y, blur=0.05):
                diameter = (x.max(0).values - x.min(0).values).norm().item()  # break
                return (x.mean(0) - y.mean(0)).pow(2).sum() * diameter * blur

            def kernel(x, y, name="energy"):
                return torch.cdist(x, y).mean()

            routines = {  # a table of functions: calling an entry runs one of them
                "sinkhorn": {"tensorized": sinkhorn},
                "energy": {"tensorized": partial(kernel, name="energy")},
            }

            class SamplesLoss(nn.Module):
                def __init__(self, loss="sinkhorn"):
                    super().__init__()
                    self.loss = loss

                def forward(self, x, y):
                    return routines[self.loss]["tensorized"](x, y)
        """, entry="SamplesLoss()", inputs="(torch.randn(5, 3), torch.randn(4, 3))"),
        Example("""
            import torch
            from torch import nn

            class Base(nn.Module):
                def forward(self, x):
                    return self.scale(x)

                def scale(self, x):
                    return x

            class Model(Base):  # runs the inherited forward: self.scale is this override
                def scale(self, x):
                    return x / x.abs().max().item()  # break
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                @property
                def scale(self):
                    return self.proj.weight.abs().max().item()  # break

                def forward(self, x):
                    return self.proj(x) * self.scale  # reading the property runs it
        """, entry="Model()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scale = x.abs().max().item()  # break
                return x / scale
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if (x > 0).sum().item() > 2:  # break
                    return x * 2
                return x
        """),
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def forward(self, x):
                    return x * x.norm().item() + x.mean()  # break
        """, entry="Model()"),
        Example("""
            import torch
            from torch import nn

            class Probed(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
                    self.norms = {}
                    for i, layer in enumerate(self.layers):
                        layer.register_forward_hook(self._recorder(f"layer{i}"))

                def _recorder(self, name):
                    def record(module, inputs, output):  # runs inside the compiled call
                        self.norms[name] = output.norm().item()  # break
                    return record

                def forward(self, x):
                    for layer in self.layers:
                        x = torch.relu(layer(x))
                    return x
        """, entry="Probed()", inputs="torch.randn(2, 8)"),
    )
    valid = (
        Example("""
            import torch
            from typing import Optional

            def padding_mask(lengths, max_length: Optional[int] = None):
                if max_length is None:
                    max_length = int(lengths.max().item())  # not traced: every call passes a size
                return torch.arange(max_length) >= lengths[:, None]

            @torch.compile
            def fn(x, lengths):
                mask = padding_mask(lengths, max_length=x.shape[1])
                return x.masked_fill(mask[..., None], 0.0)
        """, inputs="(torch.randn(2, 5, 3), torch.tensor([5, 3]))"),
        Example("""
            import torch

            torch._dynamo.config.capture_scalar_outputs = True

            @torch.compile
            def fn(x):
                return x / x.abs().max().item()
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                scale = x.abs().max()
                return x / scale
        """),
        Example("""
            import torch

            def report(x):
                return x.sum().item()  # not reached from the compiled code

            @torch.compile
            def fn(x):
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "item" and not node.args:
            # `.item()` is a tensor method; receivers the value inference lost track of (elements of
            # lists of tensors, attributes) are tensors too, unless they are plainly Python values.
            if ctx.is_tensor(func.value):
                ctx.report(self, node)
            elif not _plain_python(func.value):
                ctx.report(self, node, unknown=func.value)


def _plain_python(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.BaseNumber, cst.BaseString, cst.Dict, cst.List, cst.Tuple, cst.Set))
