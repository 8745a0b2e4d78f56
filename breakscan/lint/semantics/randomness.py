"""How TorchDynamo 2.13 treats the `random` module (each verified): which calls it traces into the
graph as a fresh draw per call, and which it cannot trace at all."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.semantics.untraceable import object_method_break

RANDOM_CLASSES = frozenset({"random.Random"})
# Traced as graph values: module functions, and these methods of a `random.Random` instance (the
# catalogue's `random.Random.*` probes say which of its methods break).
TRACED_FUNCTIONS = frozenset({"random.uniform", "random.randint", "random.randrange"})
TRACED_METHODS = frozenset({"random", "uniform", "randint", "randrange"})
# Module functions TorchDynamo skips (GB0007); on an instance, any other method (GB0156).
SKIPPED_FUNCTIONS = frozenset(
    f"random.{name}"
    for name in (
        "random", "choice", "choices", "shuffle", "sample", "seed", "getstate", "getrandbits", "gauss",
        "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate",
        "paretovariate", "weibullvariate", "triangular",
    )
)


def _instance_method(call: cst.Call, ctx) -> str | None:
    """`name` for `rng.name(...)` where `rng` is a known `random.Random` (`self.rng = random.Random(s)`)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    receiver = func.value
    if isinstance(receiver, cst.Call) and ctx.qualname(receiver.func) in RANDOM_CLASSES:
        return func.attr.value
    value = ctx.value(receiver)
    if isinstance(value, v.ModuleValue) and value.classes and value.classes <= RANDOM_CLASSES:
        return func.attr.value
    return None


# The draws that give an int; the others give a float.
INT_DRAWS = frozenset({"randint", "randrange"})


def traced_draw(call: cst.Call, ctx) -> str | None:
    """The name of the draw a call makes that TorchDynamo traces (`uniform` for `random.uniform(a, b)`
    or `rng.uniform(a, b)`), else None."""
    qualified = ctx.qualname(call.func)
    if qualified in TRACED_FUNCTIONS:
        return qualified.rpartition(".")[2]
    if qualified is None:
        method = _instance_method(call, ctx)
        if method in TRACED_METHODS:
            return method
    return None


def is_skipped_random_call(call: cst.Call, ctx) -> bool:
    if ctx.qualname(call.func) in SKIPPED_FUNCTIONS:
        return True
    method = _instance_method(call, ctx)
    return method is not None and bool(object_method_break("random.Random", method))
