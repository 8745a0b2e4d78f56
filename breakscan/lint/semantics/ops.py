"""Recognising one torch operator in its three spellings: `torch.op(x, ...)`,
`torch.Tensor.op(x, ...)` and the method `x.op(...)` on a tensor."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional")


@dataclass
class OpCall:
    name: str
    # The input tensor first (the receiver of a method call), then the other positional arguments.
    positional: list[cst.BaseExpression]
    keywords: dict[str, cst.BaseExpression]
    # False when `*args`/`**kwargs` hide which arguments were passed.
    complete: bool


def op_call(node: cst.Call, ctx, names: frozenset[str]) -> OpCall | None:
    """The call as an `OpCall` when it is one of the torch operators `names`, else None."""
    func = node.func
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    complete = not any(a.star for a in node.args)
    qualified = ctx.qualname(func)
    if qualified is not None:
        namespace, _, name = qualified.rpartition(".")
        if namespace in NAMESPACES and name in names:
            return OpCall(name, positional, keywords, complete)
        return None
    if isinstance(func, cst.Attribute) and func.attr.value in names and ctx.is_tensor(func.value):
        return OpCall(func.attr.value, [func.value, *positional], keywords, complete)
    return None
