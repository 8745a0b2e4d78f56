import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import subtree_ids

TO_STRING_BUILTINS = frozenset({"builtins.str", "builtins.repr", "builtins.ascii"})
TO_STRING_DUNDERS = frozenset({"__repr__", "__str__"})
# Builtins that read text as a string (probed on `f"{x.sum()}"`: each breaks; `bool()` does not).
TEXT_READING_BUILTINS = frozenset({"builtins.len", "builtins.str", "builtins.hash"})


class TensorToString(Rule):
    id = "BS407"
    name = "tensor-to-string"
    gb_ids = ("GB0059", "GB0569", "GB0208", "GB0088", "GB0033", "GB9648", "GB0156", "GB4880")
    message = "turning a tensor into text needs its values: the graph breaks here"
    fix_hint = "format shapes/dtypes instead of values, or build the text outside the compiled code"
    docs = """
    ## What it does
    Flags conversions of tensor *values* to text in compiled code: `str(x)`, `repr(x)`,
    `x.__repr__()`, `"%s" % x` / `"%.3f" % loss`, and f-string conversions `f"{x!r}"` /
    `f"{x!s}"`. `f"{x}"` and `"{:.3f}".format(x)` are flagged where the text is used as a string:
    `len()`, `str()`, `hash()`, `+`, a comparison or `in`, indexing, a dict key, a method
    (`.upper()`), joining several (`" | ".join(f"{k}={v:.4f}" for k, v in losses.items())`),
    there or in a function it is passed to. Text from metadata (`str(x.shape)`,
    `f"{x.dtype}"`) is fine and not flagged, nor is text built only for an exception or an
    `assert` message, which is never formatted unless it fails.

    ## Why is this bad?
    The string depends on the tensor's data, which does not exist while tracing.
    TorchDynamo keeps `f"{x}"` as a format it fills in later: returning it, nesting it in
    another f-string or testing its truth is fine, but reading it as a string fails (GB0088, the
    whole function then runs eagerly; GB0059 for `str()`, GB9648 for `==`, GB4880 for indexing, GB0156
    for a method).
    `str(x)` breaks with GB0059, `repr(x)` with GB0569 "repr() on tensor", `x.__repr__()` with
    GB0208; `%`-formatting (GB0208, GB0059, GB0088, GB0033) and `f"{x!r}"` cannot even resume:
    TorchDynamo compiles the function up to there and runs the rest of it eagerly.

    ## Example
    ```python
    tag = "scores=%s" % scores
    ```

    ## Use instead
    ```python
    tag = f"scores shape={tuple(scores.shape)}"
    ```
    Or return the tensor and format it after the compiled call.
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F

            @torch.compile
            def fn(pred, target):
                losses = {"l1": F.l1_loss(pred, target), "mse": F.mse_loss(pred, target)}
                summary = " | ".join(f"{k}={v:.4f}" for k, v in losses.items())  # break
                return sum(losses.values()), summary
        """, inputs="(torch.randn(4), torch.randn(4))"),
        Example("""
            import torch
            from torch import nn

            class Tagger(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    width = len(f"{y.mean()}")  # break
                    return y * width
        """, entry="Tagger()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            def scaled(x, key):
                if key == "0.000":  # break
                    return x
                return x * 2

            @torch.compile
            def fn(x):
                return scaled(x, "{:.3f}".format(x.sum()))
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                label = str(y.sum())  # break
                return y + len(label)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                text = repr(y)  # break
                return y + 1, text
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                summary = "max=%.3f" % y.max()  # break
                return y + 1, summary
        """),
        Example("""
            import torch
            from torch import nn

            class Vae(nn.Module):
                def _summarize(self, recon, kl):
                    self.stats = {
                        "recon": "%.4f" % recon,  # break
                        "kl": "%.4f" % kl,  # the frame runs eagerly from the break above: no second break
                    }

                def forward(self, x):
                    recon, kl = x.pow(2).mean(), x.abs().mean()
                    self._summarize(recon.detach(), kl.detach())
                    return recon + kl
        """, entry="Vae()", inputs="torch.randn(4, 8)"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                label = f"mean={y.mean()}"
                if label:  # its truth is known: a non-empty format
                    y = y + 1
                return y, f"[{label}] shape={tuple(y.shape)}"
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                label = str(tuple(y.shape)) + repr(y.dtype) + "n=%d" % y.shape[0]
                return y + len(label)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                if x.dim() != 1:
                    raise ValueError("expected a vector, got " + str(x))
                assert x.shape[0] > 0, repr(x)
                return x * 2
        """),
    )

    def __init__(self) -> None:
        # Expressions that are only evaluated when an exception is raised or an assert fails.
        self.on_failure: set[int] = set()

    def on_Raise(self, node: cst.Raise, ctx) -> None:
        if node.exc is not None:
            self.on_failure |= subtree_ids(node.exc)

    def on_Assert(self, node: cst.Assert, ctx) -> None:
        if node.msg is not None:
            self.on_failure |= subtree_ids(node.msg)

    def on_Call(self, node: cst.Call, ctx) -> None:
        if id(node) in self.on_failure:
            return
        func = node.func
        if ctx.qualname(func) in TO_STRING_BUILTINS and len(node.args) == 1 and _holds_tensor(node.args[0].value, ctx):
            ctx.report(self, node)
        elif (isinstance(func, cst.Attribute) and func.attr.value in TO_STRING_DUNDERS and not node.args
              and ctx.value(func.value) == v.TENSOR):
            ctx.report(self, node)
        elif ctx.qualname(func) in TEXT_READING_BUILTINS and len(node.args) == 1 and _is_text(node.args[0].value, ctx):
            # `len(f"{loss}")`: an exception inside TorchDynamo (GB0088), the frame then runs eagerly
            ctx.report(self, node, abandons_frame=ctx.qualname(func) == "builtins.len")
        elif isinstance(func, cst.Attribute) and _is_text(func.value, ctx):
            ctx.report(self, node)  # `f"{loss}".upper()`
        elif (isinstance(func, cst.Attribute) and func.attr.value == "join" and len(node.args) == 1
              and ctx.value(func.value) == v.STR and v.is_tensor_text(v.held(ctx.value(node.args[0].value)))):
            ctx.report(self, node)  # `" | ".join(f"{k}={v:.4f}" for k, v in losses.items())`

    def on_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if id(node) in self.on_failure:
            return
        if (isinstance(node.operator, cst.Modulo) and isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString))
                and _holds_tensor(node.right, ctx)):
            ctx.report(self, node, skips_frame=True)  # probed: a later construct of the frame never breaks
        elif _is_text(node.left, ctx) or _is_text(node.right, ctx):
            ctx.report(self, node)  # `"loss=" + f"{loss}"`

    def on_Comparison(self, node: cst.Comparison, ctx) -> None:
        if id(node) not in self.on_failure and any(
                _is_text(part, ctx) for part in (node.left, *(c.comparator for c in node.comparisons))):
            ctx.report(self, node)  # `f"{x}" == "nan"`, `"." in f"{x}"`

    def on_Subscript(self, node: cst.Subscript, ctx) -> None:
        keys = [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]
        if id(node) not in self.on_failure and any(_is_text(part, ctx) for part in (node.value, *keys)):
            ctx.report(self, node)  # `f"{x}"[0]`, `cache[f"{x}"]`

    def on_FormattedStringExpression(self, node: cst.FormattedStringExpression, ctx) -> None:
        # `f"{x}"` and `f"{x:.3f}"` are traced; only the explicit !r / !s / !a conversions break.
        if id(node) not in self.on_failure and node.conversion is not None and ctx.value(node.expression) == v.TENSOR:
            ctx.report(self, node, skips_frame=True)


def _is_text(node: cst.BaseExpression, ctx) -> bool:
    """Text formatted from a tensor's value, which TorchDynamo cannot read as a string."""
    return v.is_tensor_text(ctx.value(node))


def _holds_tensor(node: cst.BaseExpression, ctx) -> bool:
    """A tensor, or a tuple/list holding one (`"%s %s" % (x, y)`, `str([x])`)."""
    return ctx.value(node) in (v.TENSOR, v.TENSORS)
