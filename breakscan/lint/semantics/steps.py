"""The steps `BREAKSCAN_TARGETS` declares between calls (`lambda m: m.pool.set_kind("max")`): the
methods they run on the compiled object, or on an object it holds, between two compiled calls."""

from __future__ import annotations

from dataclasses import dataclass

from breakscan.lint.index import FunctionInfo


@dataclass(frozen=True)
class StepMethod:
    entry: str  # the declared entry's class, as named in the module ("Net")
    reached: frozenset[str]  # the qualified classes of the object the method runs on, with their scanned bases
    method: FunctionInfo
    step: str  # the step as written


def step_methods(ctx) -> list[StepMethod]:
    found = []
    for entry, steps in ctx.module.declared_steps.items():
        for path, name, step in steps:
            for qualified in _classes_at(ctx, f"{ctx.module.name}.{entry}", path):
                info = ctx.find_class(qualified)
                method = ctx.method_of(info, name) if info is not None else None
                if method is not None:
                    lineage = frozenset(f"{known.module.name}.{known.name}" for known in ctx.class_lineage(info))
                    found.append(StepMethod(entry, lineage, method, step))
    return found


def _classes_at(ctx, start: str, path: tuple[str, ...]) -> set[str]:
    """The classes of the object reached from an instance of `start` through the attributes of
    `path`, as its `__init__` (or its bases') builds them."""
    classes = {start}
    for attribute in path:
        classes = {built for name in classes if (info := ctx.find_class(name)) is not None
                   for known in ctx.class_lineage(info) for built in known.attr_classes.get(attribute, ())}
    return classes
