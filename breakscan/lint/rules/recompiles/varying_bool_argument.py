import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads


class VaryingBoolArgument(Rule):
    id = "BR018"
    name = "varying-bool-argument"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("the calls BREAKSCAN_TARGETS declares give this argument both True and False: TorchDynamo guards on "
               "a bool's value where it is first used, so the other value compiles the function again")
    fix_hint = ("expect one compile per value (both stay cached), or pick the branch outside the compiled "
                "function (one compiled function per setting)")
    docs = """
    ## What it does
    Flags the first use, in compiled code, of a bool parameter that the calls `BREAKSCAN_TARGETS`
    declares give both values (`"[dict(x=x, output_attentions=False), dict(x=x,
    output_attentions=True)]"`, read as written, never run): in the compiled function itself, or
    in a helper it passes the flag to, where TorchDynamo reads it.

    ## Why is this bad?
    TorchDynamo 2.13 treats a bool as a constant and never makes it dynamic: the first call
    guards `output_attentions == False`, and the other value fails the guard and compiles the
    function again. Both graphs stay cached, so a flag costs one extra compile (a warning), but
    each flag that varies doubles the graphs to compile.

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

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)  # inlined: the helper reads the flag, and guards it there

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)

    def on_Name(self, node: cst.Name, ctx) -> None:
        if v.is_varying_bool(ctx.local_value(node.value)) and self.reads.first_read(node, ctx):
            ctx.report(self, node, f"the calls BREAKSCAN_TARGETS declares give `{node.value}` both True and False: "
                                   "TorchDynamo guards on its value here, so the other value compiles the function "
                                   "again (a bool never becomes dynamic)")
