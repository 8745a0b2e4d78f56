"""Which calls sit in branches TorchDynamo usually does not take.

TorchDynamo only traces the branch a Python condition selects, so a call that runs only under a
debug flag (`if self.verbose:`), or only on unusual input (a warning in `if head_mask is not None:`,
a message in an `except:` handler), breaks nothing in a normal run. The I/O rules leave such calls
alone to keep false alarms down.
"""

from __future__ import annotations

import libcst as cst

from breakscan.lint.names import dotted_name

FLAG_WORDS = ("verbose", "debug")


class BranchAware:
    """Rule mixin: `in_debug_branch(call)` / `in_conditional_branch(call)` for the calls it reports."""

    def __init__(self) -> None:
        self._debug_calls: set[int] = set()
        self._conditional_calls: set[int] = set()

    def on_If(self, node: cst.If, ctx) -> None:
        if _is_debug_flag(node.test):
            node.body.visit(_CallIds(self._debug_calls))
        node.body.visit(_CallIds(self._conditional_calls))
        if node.orelse is not None:
            node.orelse.visit(_CallIds(self._conditional_calls))

    def on_ExceptHandler(self, node: cst.ExceptHandler, ctx) -> None:
        node.body.visit(_CallIds(self._conditional_calls))

    def in_debug_branch(self, node: cst.Call) -> bool:
        """Under `if <...verbose/debug...>:`, a flag that ships switched off."""
        return id(node) in self._debug_calls

    def in_conditional_branch(self, node: cst.Call) -> bool:
        """Under any `if`/`elif`/`else` or in an `except` handler."""
        return id(node) in self._conditional_calls


def _is_debug_flag(test: cst.BaseExpression) -> bool:
    """`verbose`, `self.debug`, `cfg.debug_mode`, `self.verbose and step % 10 == 0`."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (_is_debug_flag(test.left) or _is_debug_flag(test.right))
    name = dotted_name(test)
    return name is not None and any(word in name.rsplit(".", 1)[-1].lower() for word in FLAG_WORDS)


class _CallIds(cst.CSTVisitor):
    def __init__(self, ids: set[int]) -> None:
        self.ids = ids

    def visit_Call(self, node: cst.Call) -> None:
        self.ids.add(id(node))
