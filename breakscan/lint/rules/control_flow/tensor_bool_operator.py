from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.scalars import holds_tensor_data

BUILT_MESSAGE = ("an `assert` on a tensor whose message is built at run time needs the tensor's truth: the graph "
                 "breaks here (with no message or a constant one it stays a runtime check)")


class TensorBoolOperator(Rule):
    id = "BS204"
    name = "tensor-bool-operator"
    gb_ids = ("GB0170", "GB0033")
    message = "`and`/`or`/`not` needs the truth of a tensor: TorchDynamo cannot know it while tracing, the graph breaks"
    fix_hint = "combine tensors with `&`, `|`, `~` (or torch.logical_and/or/not) and keep the result a tensor"
    docs = """
    ## What it does
    Flags `and`, `or` and `not` applied to tensor data outside the test of an `if`, `while` or
    conditional expression (those are BS201, BS202, BS203): `ok = x.isfinite().all() and flag`,
    `done = not mask.any()`, `assert x.min() >= 0 and x.max() <= 1`, and an `assert` on a tensor
    whose message is built at run time (`assert ok.all(), f"..."`).
    `mask is not None and mask.any()` is fine: only the operands before the last one are tested.

    ## Why is this bad?
    `a and b` evaluates `bool(a)` to decide what to return, and `not t` calls `bool(t)`. With `a`
    a tensor, TorchDynamo cannot know that truth value while tracing: it breaks the graph
    (GB0170 "Data-dependent branching"); for `not t` it cannot even resume and runs the rest of
    the function eagerly (GB0033). In an `assert` only the last test becomes a runtime check:
    `and`/`or` inside it break, and so does a tensor test whose message is built at run time
    (`assert x.min() >= 0, f"negative input {x.shape}"`); a constant message is fine.

    ## Example
    ```python
    valid = x.isfinite().all() and y.isfinite().all()
    ```

    ## Use instead
    ```python
    valid = x.isfinite().all() & y.isfinite().all()
    ```
    and two asserts instead of `assert a and b`.
    """
    invalid = (
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class DistillLoss(nn.Module):
                def forward(self, student, teacher, temperature=None):
                    t = temperature or 2.0  # break
                    return F.kl_div(F.log_softmax(student / t, -1), F.softmax(teacher / t, -1), reduction="sum")

            # The declared calls pass a tensor: `temperature` is one, not a number by assumption.
            BREAKSCAN_TARGETS = {"DistillLoss()": "[(torch.randn(4, 10), torch.randn(4, 10), torch.tensor(3.0))]"}
        """, entry="DistillLoss()", inputs="[(torch.randn(4, 10), torch.randn(4, 10), torch.tensor(3.0))]"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x + 1
                valid = x.isfinite().all() and x  # break
                return valid * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x + 1
                empty = not (x > 100).any()  # break
                return x * empty
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x.abs()
                assert x.min() >= 0 and x.shape[0] > 0  # break
                return x * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x + 1
                assert not (x > 100).any()  # break
                return x * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x.abs()
                assert x.min() >= 0, f"negative input of shape {x.shape}"  # break
                return x * 2
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                x = x + 1
                ok = ratio(x) > 0 and x.shape[0] > 1  # break
                return x * 2, ok

            def ratio(x):  # what it returns is known only once it has been walked
                return x.sum() / x.numel()
        """),
    )
    valid = (
        Example("""
            import torch

            def modality(sample):
                match sample:
                    case torch.Tensor():
                        return "tensor"
                    case str() | (str(), str()):
                        return "text"
                    case list() if sample and isinstance(sample[0], dict):  # a list's truth
                        return "messages"
                return "other"

            @torch.compile
            def fn(x):
                turns = [{"role": "user"}]
                if modality(x) == "tensor" and modality(turns) == "messages":
                    return x + len(turns)
                return x
        """),
        Example("""
            import sys

            import torch

            def xpu_kernels_usable():
                on_xpu = torch.xpu.is_available()  # a device query: a bool
                return not on_xpu and sys.platform != "darwin"

            @torch.compile
            def fn(x):
                if xpu_kernels_usable():
                    return x + 1
                return x - 1
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x, mask=None):
                x = x + 1
                masked = mask is not None and mask.any()
                valid = x.isfinite().all() & (x > -100).all()
                assert x.isfinite().all(), "non-finite input"
                return x * valid + masked
        """),
    )

    def __init__(self) -> None:
        # Boolean operators already accounted for: branch tests, asserts, nested operators.
        self._claimed: set[int] = set()

    def on_If(self, node: cst.If, ctx) -> None:
        self._claim(node.test)

    def on_While(self, node: cst.While, ctx) -> None:
        self._claim(node.test)

    def on_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._claim(node.test)

    def on_CompIf(self, node: cst.CompIf, ctx) -> None:
        self._claim(node.test)

    def on_Assert(self, node: cst.Assert, ctx) -> None:
        # Each operand is a jump; only a plain last one, into the AssertionError, becomes a runtime
        # assert, and only with no message or a constant one: one built at run time (an f-string)
        # makes the test a jump again.
        self._claim(node.test)
        if _tests_tensor(node.test, ctx):
            ctx.report(self, node.test)
        elif node.msg is not None and not _constant_text(node.msg) and holds_tensor_data(node.test, ctx):
            ctx.report(self, node.test, BUILT_MESSAGE)

    def on_BooleanOperation(self, node: cst.BooleanOperation, ctx) -> None:
        self._check_value(node, ctx)

    def on_UnaryOperation(self, node: cst.UnaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.Not):
            self._check_value(node, ctx)

    def _check_value(self, node: cst.BaseExpression, ctx) -> None:
        if id(node) not in self._claimed:
            self._claim(node)
            if _tests_tensor(node, ctx):
                ctx.report(self, node)

    def _claim(self, node: cst.BaseExpression) -> None:
        self._claimed.add(id(node))
        if isinstance(node, cst.BooleanOperation):
            self._claim(node.left)
            self._claim(node.right)
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self._claim(node.expression)


def _tests_tensor(node: cst.BaseExpression, ctx) -> bool:
    """Whether evaluating the operator tree needs a tensor's truth: every operand but the last is
    tested to pick the result, and `not` tests its operand."""
    operands = list(_operands(node))
    return any((negated or position < len(operands) - 1) and holds_tensor_data(operand, ctx)
               for position, (operand, negated) in enumerate(operands))


def _constant_text(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.SimpleString):
        return True
    return isinstance(node, cst.ConcatenatedString) and _constant_text(node.left) and _constant_text(node.right)


def _operands(node: cst.BaseExpression, negated: bool = False) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """The operands of a tree of `and`/`or`/`not` in evaluation order, each with whether a `not` applies."""
    if isinstance(node, cst.BooleanOperation):
        yield from _operands(node.left, negated)
        yield from _operands(node.right, negated)
    elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        yield from _operands(node.expression, True)
    else:
        yield node, negated
