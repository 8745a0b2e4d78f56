"""What an iterable steps through, as far as TorchDynamo's iterator over it goes."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v

DICT_VIEWS = frozenset({"items", "keys", "values"})


def iterated_sort(iterable: cst.BaseExpression, ctx) -> str | None:
    """"dict" for a dict or one of its views (`d.items()`: its iterator is the dict's kind too),
    "modules" for an `nn.ModuleList`, `nn.ModuleDict`, `nn.Sequential` or parameter container (an
    iterator over its `_modules` dict's values), "list" for a list; None for anything else."""
    if (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value in DICT_VIEWS and not iterable.args):
        iterable = iterable.func.value
    value = ctx.value(iterable)
    if isinstance(value, v.ModuleValue) and value.classes & v.MODULE_CONTAINERS:
        return "modules"
    sort = v.sort_of(value)
    return sort if sort in ("list", "dict") else None
