import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule


class ModuleIntAttributeUpdated(Rule):
    id = "BR001"
    name = "module-int-attribute-updated"
    kind = "recompile"
    gb_ids = ()
    message = ("an int attribute of the module updated from its own value in compiled code: TorchDynamo "
               "specialises module int attributes, so every call recompiles (until the recompile limit, "
               "then the function runs eagerly)")
    fix_hint = ("keep the counter as a 0-d tensor buffer (`self.register_buffer(\"step\", torch.zeros((), "
                "dtype=torch.long))`), or update it outside the compiled code")
    docs = """
    ## What it does
    Flags `self.count += 1` (and `self.count = self.count + 1`) in compiled code, where
    `count` is an int attribute of an `nn.Module` (set to an int in `__init__`).

    ## Why is this bad?
    TorchDynamo 2.13 treats an nn.Module's int attributes as constants and guards on their value
    (`self.step == 0`). An attribute that the compiled code itself changes fails that guard on the
    next call, so every call compiles the function again, and after 8 recompiles
    (`torch._dynamo.config.recompile_limit`) TorchDynamo gives up and runs it eagerly.
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` makes the attribute dynamic after
    one recompile; a tensor buffer avoids recompiling at all. An attribute set to a constant
    (`self.step = 0`) without being read first does not recompile, and is not flagged.

    ## Example
    ```python
    def forward(self, x):
        self.step += 1
        return x * self.step
    ```

    ## Use instead
    ```python
    self.register_buffer("step", torch.zeros((), dtype=torch.long))   # in __init__
    ...
    def forward(self, x):
        self.step += 1          # an in-place update of the buffer: no guard on its value
        return x * self.step
    ```
    """
    invalid = (
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = 0

                def forward(self, x):
                    self.step += 1  # recompile
                    return x * self.step
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Warmup(torch.nn.Module):
                def __init__(self, total: int = 100):
                    super().__init__()
                    self.total = total
                    self.seen = 0

                def forward(self, x):
                    self.seen = self.seen + x.shape[0]  # recompile
                    return x * min(1.0, self.seen / self.total)
        """, entry="Warmup()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )
    valid = (
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("step", torch.zeros((), dtype=torch.long))

                def forward(self, x):
                    self.step += 1
                    return x * self.step
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Reset(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = 0

                def forward(self, x):
                    self.step = 1
                    return x * 2
        """, entry="Reset()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        if self._int_attribute_of_self(node.target, ctx):
            ctx.report(self, node)

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            if self._int_attribute_of_self(target.target, ctx) and _reads(node.value, target.target):
                ctx.report(self, node)

    @staticmethod
    def _int_attribute_of_self(target: cst.BaseExpression, ctx) -> bool:
        return (isinstance(target, cst.Attribute) and ctx.value(target.value) == v.SELF
                and ctx.value(target) == v.INT)


def _reads(value: cst.BaseExpression, target: cst.Attribute) -> bool:
    """`value` reads the attribute `target` names (`self.seen + n` reads `self.seen`)."""
    wanted = target.deep_clone()
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.deep_equals(wanted):
                found.append(node)

    value.visit(Finder())
    return bool(found)
