"""State TorchDynamo guards on from one call to the next: the attributes of an object that
outlives the call."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v


def persistent_attribute(node: cst.BaseExpression, ctx) -> str | None:
    """`name` for `self.name` where `self` outlives the call: a module, or the object whose method
    is compiled (`scheduler.step`). An object of another class is often built afresh by each call
    (a cache), and its attributes are not guarded from call to call."""
    if isinstance(node, cst.Attribute) and ctx.value(node.value) == v.SELF and (
            ctx.self_is_module() or (ctx.is_root and ctx.function.class_name is not None)):
        return node.attr.value
    return None


def held_attribute(node: cst.BaseExpression, ctx) -> str | None:
    """`cache.seen` for `self.cache.seen`, where `self.cache` is an object the module holds from
    call to call (set in `__init__`, not built by this call): TorchDynamo guards its attributes
    as it does the module's own."""
    if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Attribute)):
        return None
    owner = persistent_attribute(node.value, ctx)
    held = ctx.value(node.value) if owner is not None else None
    if not isinstance(held, v.ModuleValue) or held.fresh:
        return None
    return f"{owner}.{node.attr.value}"
