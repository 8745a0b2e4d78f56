import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class AssertObject(Rule):
    id = "BS210"
    name = "assert-on-object"
    gb_ids = ("GB0055", "GB0112")
    message = ("`assert` on an object or on a list, tuple or dict of tensors or objects: TorchDynamo turns the "
               "assert into a `torch._assert` call it cannot give that value to, and the graph breaks")
    fix_hint = "assert what you mean: `assert len(items) > 0`, `assert obj is not None`"
    docs = """
    ## What it does
    Flags an `assert` whose condition is an nn.Module, an object of a scanned class, or a list,
    tuple or dict holding tensors or such objects (`assert tensors, "need one"` on a `*tensors`
    parameter, `assert self.layers` on a ModuleList).

    ## Why is this bad?
    TorchDynamo traces `assert cond` as a call of `torch._assert(cond)`. That works for a tensor
    condition and for a Python constant, but a module, an object or a container of tensors cannot
    be passed to the call ("Failed to convert args/kwargs to proxy", GB0055; GB0112 for tensors in
    a container), and the graph breaks at the assert, on every call. A list of Python numbers or
    strings is a constant, and does not break.

    ## Example
    ```python
    def forward(self, *features):
        assert features, "need at least one feature map"
        assert self.blocks
    ```

    ## Use instead
    ```python
    def forward(self, *features):
        assert len(features) > 0, "need at least one feature map"
        assert len(self.blocks) > 0
    ```
    """
    invalid = (
        Example("""
            import torch

            def concat(*features):
                assert features, "need at least one feature map"  # break
                return torch.cat(features)

            @torch.compile
            def fn(x):
                return concat(x, x + 1)
        """),
        Example("""
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = torch.nn.ModuleList([torch.nn.Linear(8, 8)])

                def forward(self, x):
                    assert self.blocks  # break
                    return self.blocks[0](x)

            model = Model()

            def fn(x):
                return model(x)
        """),
        Example("""
            import torch

            class Step:
                def __init__(self, scale):
                    self.scale = scale

            @torch.compile
            def fn(x):
                steps = (Step(2.0), Step(3.0))
                assert steps  # break
                return x * steps[0].scale
        """),
    )
    valid = (
        Example("""
            import torch

            def concat(*features):
                assert len(features) > 0, "need at least one feature map"
                names = ["a", "b"]
                assert names
                assert (features[0] >= 0).all()
                return torch.cat(features)

            @torch.compile
            def fn(x):
                return concat(x.abs(), x.abs() + 1)
        """),
    )

    def on_Assert(self, node: cst.Assert, ctx) -> None:
        value = ctx.value(node.test)
        if value == v.TENSORS or _holds_objects(value):
            ctx.report(self, node)


def _holds_objects(value: v.Value) -> bool:
    """An object (a module, an instance of a scanned class), or a container holding one."""
    if isinstance(value, v.ModuleValue):
        return True
    held = v.held(value)
    return held is not None and (held == v.TENSORS or held == v.TENSOR or _holds_objects(held))
