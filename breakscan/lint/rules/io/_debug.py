"""Calls under `if self.verbose:` / `if DEBUG:` are skipped by TorchDynamo when the flag is off,
which is how such flags ship: the I/O rules leave those calls alone to keep false alarms down."""

from __future__ import annotations

import libcst as cst

from breakscan.lint.names import dotted_name

FLAG_WORDS = ("verbose", "debug")


class SkipsDebugBranches:
    """Rule mixin: `self.in_debug_branch(call)` says whether a call sits under a debug-flag `if`."""

    def __init__(self) -> None:
        self._debug_calls: set[int] = set()

    def on_If(self, node: cst.If, ctx) -> None:
        if _is_debug_flag(node.test):
            node.body.visit(_CallIds(self._debug_calls))

    def in_debug_branch(self, node: cst.Call) -> bool:
        return id(node) in self._debug_calls


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
