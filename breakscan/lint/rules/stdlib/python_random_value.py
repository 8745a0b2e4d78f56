import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import children, is_expression

CONVERSIONS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.range"})
_SIGN_OPERATORS = (cst.Minus, cst.Plus, cst.BitInvert)


class PythonRandomValue(Rule):
    id = "BS503"
    name = "python-random-value"
    gb_ids = ("GB0170", "GB0213", "GB0178", "GB0124", "GB4841", "GB0033")
    message = "a `random.uniform/randint/randrange` draw is a traced value: using it as a Python number breaks the graph"
    fix_hint = "draw with torch (torch.rand(()), torch.randint) and keep the value in tensor ops, or draw outside the compiled code"
    docs = """
    ## What it does
    Flags values drawn with `random.uniform()`, `random.randint()` or `random.randrange()`, or
    with those methods and `random()` of a `random.Random` instance held by the module
    (directly or through a local variable), here or in a helper that returns the draw, that
    compiled code then uses as a Python number: in an
    `if`/`while`/ternary condition, in arithmetic with non-tensors (`random.uniform(a, b) * 2.0`,
    `-r`), converted with `int/float/bool/str/range`, or as an index or slice bound.

    ## Why is this bad?
    TorchDynamo 2.13 does not call these functions while tracing: it records them in the graph
    so that every call draws a fresh number, which is therefore unknown at trace time. Tensor
    arithmetic with it is fine (`x * random.uniform(0.9, 1.1)`), but a Python branch on it is
    data-dependent (GB0170, the classic LayerDrop `if random.uniform(0, 1) < self.layerdrop:`),
    Python arithmetic with it makes TorchDynamo give up on the whole frame (GB0213), and
    conversions or indexing break too (GB0178, GB0124, GB4841, GB0033). Only the first such use
    breaks: the code after the break resumes with the number as a plain constant.

    ## Example
    ```python
    dropout_probability = random.uniform(0, 1)
    if self.training and dropout_probability < self.layerdrop:
        return hidden
    ```

    ## Use instead
    ```python
    skip = torch.rand(()) < self.layerdrop
    return torch.where(skip, hidden, layer(hidden))
    ```
    """
    invalid = (
        Example("""
            import random

            import torch
            from torch import nn

            class SegmentSampler:
                def __init__(self, segments):
                    self.segments = segments

                def indices(self, frames, training):
                    length = frames // self.segments
                    if training:
                        offsets = [random.randint(0, length - 1) for _ in range(self.segments)]
                    else:
                        offsets = [length // 2] * self.segments
                    return [i * length + o for i, o in enumerate(offsets)]  # break

            class VideoNet(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.sampler = SegmentSampler(4)
                    self.fc = nn.Linear(3, 2)

                def forward(self, video):
                    idx = self.sampler.indices(video.shape[1], self.training)
                    return self.fc(video[:, idx].mean(1))
        """, entry="VideoNet()", inputs="torch.randn(2, 16, 3)"),
        Example("""
            import random
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layer = torch.nn.Linear(8, 8)
                    self.layerdrop = 0.2

                def forward(self, x):
                    dropout_probability = random.uniform(0, 1)
                    y = x * 2
                    if self.training and dropout_probability < self.layerdrop:  # break
                        return y
                    return self.layer(y)
        """, entry="Model()"),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x + 1
                return y * 2 if random.randint(0, 3) > 1 else y  # break
        """),
        Example("""
            import math
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x.cos()
                angle = random.uniform(-10, 10) * math.pi / 180  # break
                return y * angle
        """),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                start = random.randrange(0, 4)
                return y[start:]  # break
        """),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                drop = random.uniform(0, 1)
                y = x * 2
                if drop < 0.5:  # break
                    y = y + 1
                scale = 2.0 if drop > 0.2 else 1.0  # resumed after the break: `drop` is a float now
                return y * scale
        """),
        Example("""
            import random
            import torch
            from torch import nn

            class Mixup(nn.Module):
                def __init__(self, low=0.3):
                    super().__init__()
                    self.low = low

                def _sample_lambda(self):
                    return random.uniform(self.low, 1.0)

                def forward(self, x):
                    lam = self._sample_lambda()
                    flipped = torch.flip(x, dims=[0])
                    return x.mul(lam).add_(flipped, alpha=1.0 - lam)  # break
        """, entry="Mixup()", inputs="torch.randn(4, 3)"),
        Example("""
            import random
            import torch
            from torch import nn

            class TemporalCrop(nn.Module):
                def __init__(self, length=2):
                    super().__init__()
                    self.length = length

                def forward(self, video):
                    t = video.size(0)
                    if not self.training or t <= self.length:
                        start = max(0, (t - self.length) // 2)
                    else:
                        start = random.randint(0, t - self.length)  # a draw on the training path
                    return video[start:start + self.length] * 2  # break
        """, entry="TemporalCrop()", inputs="torch.randn(6, 3)"),
    )
    valid = (
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                jitter = random.uniform(0.9, 1.1)
                keep = random.uniform(0, 1) < 0.5
                return (x * jitter * 2.0).clamp(min=random.uniform(-1.0, 0.0))
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                skip = torch.rand(()) < 0.2
                return torch.where(skip, x, x * 2)
        """),
    )

    def __init__(self) -> None:
        self._walk = None
        self._broken = False

    def _already_broken(self, ctx) -> bool:
        """Whether an earlier use in this walk of the function broke: the code after a graph
        break resumes with the drawn numbers as plain constants, so only the first use breaks."""
        if self._walk is not ctx:  # one context per walk of a function
            self._walk, self._broken = ctx, False
        return self._broken

    def on_If(self, node: cst.If, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_While(self, node: cst.While, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_BinaryOperation(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_UnaryOperation(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_Call(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_Subscript(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def _check_test(self, test: cst.BaseExpression, ctx) -> None:
        # A Python use inside the condition is reported by its own handler, on the same line.
        if not self._already_broken(ctx) and _mentions_draw(test, ctx) and not _contains_python_use(test, ctx):
            self._report_break(test, ctx)

    def _check_use(self, node: cst.BaseExpression, ctx) -> None:
        if not self._already_broken(ctx) and _is_python_use(node, ctx):
            self._report_break(node, ctx)

    def _report_break(self, node: cst.BaseExpression, ctx) -> None:
        ctx.report(self, node)
        self._broken = True


def _is_draw(node: cst.BaseExpression, ctx) -> bool:
    return v.is_drawn(ctx.value(node))


def _is_python_use(node: cst.CSTNode, ctx) -> bool:
    """The draw itself (not a tensor op on it) used as a Python number."""
    if isinstance(node, cst.BinaryOperation):
        return (_is_draw(node.left, ctx) and not ctx.is_tensor(node.right)) or (
            _is_draw(node.right, ctx) and not ctx.is_tensor(node.left)
        )
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, _SIGN_OPERATORS) and _is_draw(node.expression, ctx)
    if isinstance(node, cst.Call):
        return ctx.qualname(node.func) in CONVERSIONS and any(_is_draw(a.value, ctx) for a in node.args)
    if isinstance(node, cst.Subscript):
        return any(_is_draw(part, ctx) for element in node.slice for part in _index_parts(element.slice))
    return False


def _index_parts(index: cst.BaseSlice) -> list[cst.BaseExpression]:
    if isinstance(index, cst.Index):
        return [index.value]
    return [part for part in (index.lower, index.upper, index.step) if part is not None]


def _mentions_draw(expression: cst.BaseExpression, ctx) -> bool:
    return _any_read(expression, lambda node: _is_draw(node, ctx))


def _contains_python_use(expression: cst.BaseExpression, ctx) -> bool:
    return _any_read(expression, lambda node: _is_python_use(node, ctx))


def _any_read(node: cst.CSTNode, predicate) -> bool:
    """Whether any expression node (outside nested lambdas, attribute names and keywords) matches."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, (cst.Attribute, cst.Arg)):
            pending.append(node.value)  # `obj.p` and the keyword of `f(p=1)` do not read `p`
            continue
        if is_expression(node) and predicate(node):
            return True
        pending.extend(children(node))
    return False
