"""State TorchDynamo guards on from one call to the next: the attributes of an object that
outlives the call."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v


def persistent_attribute(node: cst.BaseExpression, ctx, *, held: bool = False) -> str | None:
    """`name` for `self.name` where `self` outlives the call: a module, or the object whose method
    is compiled (`scheduler.step`); with `held`, also an object of a class only ever built in an
    `__init__` and stored there (a module's helper: `self.context = FrameContext(3)`), for a
    question its holder's reads do not answer (what its own methods grow). An object of another
    class is often built afresh by each call (a cache), and its attributes are not guarded from
    call to call."""
    if isinstance(node, cst.Attribute) and ctx.value(node.value) == v.SELF and (
            ctx.self_is_module() or (ctx.is_root and ctx.function.class_name is not None)
            or (held and ctx.self_class is not None and ctx.held_class(ctx.self_class))):
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
