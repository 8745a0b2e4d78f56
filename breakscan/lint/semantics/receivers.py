"""Which receivers of a tensor-only method or attribute are worth flagging."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v


def may_be_tensor(node: cst.BaseExpression, ctx) -> bool:
    """A tensor, or a value the inference does not know (a loop variable over `parameters()`):
    `backward`, `retain_grad`, `requires_grad` exist on tensors only. Modules, `self` and names
    of classes or modules (`MyFunction.backward(ctx, g)`) are not tensors."""
    value = ctx.value(node)
    if value in (v.TENSOR, v.MAYBE_TENSOR, v.TENSORS):
        return True
    if value != v.OTHER:
        return False
    return isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and ctx.qualname(node) is None


def report_on_receiver(rule, node: cst.CSTNode, receiver: cst.BaseExpression, ctx) -> None:
    """Report a tensor-only method or attribute use: an error on a known tensor, a warning naming
    the receiver when the analysis cannot tell what it is."""
    if ctx.is_known_tensor(receiver) or ctx.value(receiver) == v.TENSORS:
        ctx.report(rule, node)
    elif may_be_tensor(receiver, ctx):
        ctx.report(rule, node, unknown=receiver)
