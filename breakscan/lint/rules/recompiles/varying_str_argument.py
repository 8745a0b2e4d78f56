import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads


class VaryingStrArgument(Rule):
    id = "BR011"
    name = "varying-str-argument"
    kind = "recompile"
    gb_ids = ()
    message = ("the calls BREAKSCAN_TARGETS declares give this argument different strings: TorchDynamo guards on "
               "a string's value where it is first used, so every new string recompiles the function")
    fix_hint = ("pick the branch outside the compiled function (one compiled function per mode), or keep one "
                "value per compiled function")
    docs = """
    ## What it does
    Flags the first use, in compiled code, of a string parameter that the calls
    `BREAKSCAN_TARGETS` declares give different strings (`"[(x, 'mean'), (x, 'sum')]"`, read as
    written, never run): in the compiled function itself, or in a helper it passes the string
    to. Passing the string on to a helper is not a use: TorchDynamo reads it, and guards on it,
    where the helper compares it, formats it or hands it to torch.

    ## Why is this bad?
    TorchDynamo 2.13 treats a string as a constant: the first call guards `reduction == 'mean'`,
    and each new string fails the guard and compiles the function again. Automatic dynamic
    shapes make ints and floats dynamic after a recompile, never strings: every distinct value
    costs a compile, until the recompile limit (8), after which the function runs eagerly.

    ## Example
    ```python
    @torch.compile
    def criterion(pred, target, reduction):
        loss = (pred - target).abs()
        return loss.sum() if reduction == "sum" else loss.mean()
    ```

    ## Use instead
    ```python
    @torch.compile
    def summed(pred, target):
        return (pred - target).abs().sum()

    @torch.compile
    def averaged(pred, target):
        return (pred - target).abs().mean()
    ```
    """
    invalid = (
        Example("""
            import torch

            def reduce(loss, reduction):
                if reduction == "sum":  # recompile
                    return loss.sum()
                return loss.mean()

            def criterion(pred, target, reduction):
                return reduce((pred - target).abs(), reduction)  # passed on: read in the helper

            BREAKSCAN_TARGETS = {
                "criterion": "[(torch.randn(4), torch.randn(4), 'mean'), (torch.randn(4), torch.randn(4), 'sum')]",
            }
        """, entry="criterion", inputs="[(torch.randn(4), torch.randn(4), 'mean'), "
                                       "(torch.randn(4), torch.randn(4), 'sum')]"),
        Example("""
            import torch

            def pooled(x, mode="mean"):
                if mode == "mean":  # recompile
                    return x.mean(-1)
                return x.amax(-1)

            BREAKSCAN_TARGETS = {"pooled": "[torch.randn(2, 5), {'x': torch.randn(2, 5), 'mode': 'max'}]"}
        """, entry="pooled", inputs="[torch.randn(2, 5), {'x': torch.randn(2, 5), 'mode': 'max'}]"),
        Example("""
            import torch

            def pooled(x, mode="mean"):
                if mode == "mean":  # recompile
                    return x.mean(-1)
                return x.amax(-1)

            @torch.compile
            def summary(x):
                return pooled(x, "max") + x.sum(-1)  # a helper here, compiled itself too

            BREAKSCAN_TARGETS = {"pooled": "[torch.randn(2, 5), {'x': torch.randn(2, 5), 'mode': 'max'}]"}
        """, entry="pooled", inputs="[torch.randn(2, 5), {'x': torch.randn(2, 5), 'mode': 'max'}]"),
    )
    valid = (
        Example("""
            import torch

            def criterion(pred, target, reduction):
                loss = (pred - target).abs()
                return loss.sum() if reduction == "sum" else loss.mean()

            BREAKSCAN_TARGETS = {
                "criterion": "[(torch.randn(4), torch.randn(4), 'sum'), (torch.randn(4), torch.randn(4), 'sum')]",
            }
        """, entry="criterion", inputs="[(torch.randn(4), torch.randn(4), 'sum'), "
                                       "(torch.randn(4), torch.randn(4), 'sum')]"),
    )

    def __init__(self) -> None:
        self.reads = FirstReads()

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)  # inlined: the helper reads the string, and guards it there

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)
        read = self.reads.first_field_read(node, ctx)
        if read is not None and v.is_varying_str(read[1]):  # `cfg.mode` of objects built with other strings
            self._report(node, read[0], ctx)

    def on_Name(self, node: cst.Name, ctx) -> None:
        if v.is_varying_str(ctx.local_value(node.value)) and self.reads.first_read(node, ctx):
            self._report(node, node.value, ctx)

    def _report(self, node: cst.BaseExpression, name: str, ctx) -> None:
        ctx.report(self, node, f"the calls BREAKSCAN_TARGETS declares give `{name}` different strings: "
                               "TorchDynamo guards on its value here, so every new string recompiles the function "
                               f"(until the recompile limit, {ctx.dynamo.number('recompile_limit')})")
