"""The steps `BREAKSCAN_TARGETS` declares between calls (`lambda m: m.pool.set_kind("max")`): the
methods they run on the compiled object, or on an object it holds, between two compiled calls."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from breakscan.lint.index import FunctionInfo, ModuleIndex


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
            for qualified in classes_at(ctx, f"{ctx.module.name}.{entry}", path):
                info = ctx.find_class(qualified)
                method = ctx.method_of(info, name) if info is not None else None
                if method is not None:
                    lineage = frozenset(f"{known.module.name}.{known.name}" for known in ctx.class_lineage(info))
                    found.append(StepMethod(entry, lineage, method, step))
    return found


def classes_at(ctx, start: str, path: tuple[str, ...]) -> set[str]:
    """The classes of the object reached from an instance of `start` through the attributes of
    `path`, as its `__init__` (or its bases') builds them."""
    classes = {start}
    for attribute in path:
        classes = {built for name in classes if (info := ctx.find_class(name)) is not None
                   for known in ctx.class_lineage(info) for built in known.attr_classes.get(attribute, ())}
    return classes


def lineages_at(ctx, starts: frozenset[str] | set[str], path: tuple[str, ...]) -> set[str]:
    """The qualified classes, with their scanned bases, of the objects reached from an instance of
    any of `starts` through the attributes of `path` (`processor` of `self.processor.temperature`)."""
    return {f"{known.module.name}.{known.name}" for start in starts for name in classes_at(ctx, start, path)
            if (info := ctx.find_class(name)) is not None for known in ctx.class_lineage(info)}


@dataclass(frozen=True)
class StepCode:
    """Code a declared step runs between two compiled calls."""
    node: cst.CSTNode  # a lambda written as the step, or a function or method it calls
    given: str  # the name the compiled object (or the object the method runs on) has there
    module: ModuleIndex  # where the code is written, for its names
    step: str  # the step as written


def step_code(ctx, entry: str) -> list[StepCode]:
    """What the steps `BREAKSCAN_TARGETS` declares between the calls of `entry` (a class of the
    module) run: a lambda step itself (`lambda m: m.double()`), a method of the object, or of one
    it holds, that a step calls (`lambda m: m.prune(0.3)`), and a function of the scanned modules
    a step calls, given the object (`lambda m: cast_bf16(m)`, or a `def` step)."""
    if entry not in ctx.module.stepped_classes:
        return []
    found: list[StepCode] = []
    lambdas = {step for _, _, step in ctx.module.declared_steps.get(entry, ())} | set(
        ctx.module.declared_step_functions.values())
    for step in sorted(lambdas):
        try:
            written = cst.parse_expression(step)
        except cst.ParserSyntaxError:
            continue
        if isinstance(written, cst.Lambda) and written.params.params:
            found.append(StepCode(written, written.params.params[0].name.value, ctx.module, step))
    found += [StepCode(called.method.node, "self", called.method.module, called.step) for called in step_methods(ctx)
              if called.entry == entry]
    for qualified, step in ctx.module.declared_step_functions.items():
        function = ctx.find_function(qualified)
        given = function.positional_params[:1] if function is not None else []
        if function is not None and given:
            found.append(StepCode(function.node, given[0].name.value, function.module, step))
    return found
