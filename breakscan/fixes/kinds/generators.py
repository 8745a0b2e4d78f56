"""A generator given to a call that breaks: build a list instead, which TorchDynamo can rebuild to
resume after the break (`f(*(t(c) for t in ts))` -> `f(*[t(c) for t in ts])`)."""

from __future__ import annotations

import builtins

import libcst as cst

from breakscan.fixes.kinds.common import call_name
from breakscan.fixes.rewrite import Rewrite, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding

_EMPTY = cst.Module([])


def _generator_argument(src: SourceModule, node: cst.CSTNode) -> cst.Arg | None:
    """A generator given to a function that may break inside (a builtin's C code consumes it)."""
    if not isinstance(node, cst.Call) or hasattr(builtins, call_name(src, node) or ""):
        return None
    return next((arg for arg in node.args if isinstance(arg.value, cst.GeneratorExp)), None)


def list_instead_of_generator(src: SourceModule, finding: Finding) -> Rewrite | None:
    """Safe for an unpacked generator: Python builds the tuple of arguments before the call either
    way. Passed as it is, the function gets a list where it got a generator."""
    call = src.first_in(finding.span, lambda n: _generator_argument(src, n) is not None)
    if call is None:
        return None
    argument = _generator_argument(src, call)
    assert argument is not None and isinstance(argument.value, cst.GeneratorExp)
    text = _EMPTY.code_for_node(cst.ListComp(elt=argument.value.elt, for_in=argument.value.for_in))
    if argument.star:
        summary = (f"unpack a list, `*{text}`, not a generator: the call gets the same arguments, and TorchDynamo "
                   "can rebuild a list to resume after the break inside the call")
        return Rewrite(summary, (replace_node(src, argument, f"*{text}"),), applicability="safe")
    summary = (f"pass a list, `{text}`, not a generator: TorchDynamo can rebuild a list to resume after the "
               "break inside the call (the function then gets every item at once)")
    return Rewrite(summary, (replace_node(src, argument, text),))
