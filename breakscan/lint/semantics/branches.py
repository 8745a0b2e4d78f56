"""Which calls sit in branches TorchDynamo usually does not take.

TorchDynamo only traces the branch a Python condition selects, so a call that runs only under a
debug flag (`if self.verbose:`), or only on unusual input (a warning in `if head_mask is not None:`,
a message in an `except:` handler), breaks nothing in a normal run. The I/O rules leave such calls
alone to keep false alarms down.
"""

from __future__ import annotations

import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.traverse import ancestors

FLAG_WORDS = ("verbose", "debug")


class BranchAware:
    """Rule mixin: `in_debug_branch(call, ctx)` / `in_conditional_branch(call, ctx)` for the calls it reports.

    Entering a branch records only its block; a query looks for a recorded block among the call's
    ancestors (collecting every call of every block instead is quadratic on nested branches)."""

    def __init__(self) -> None:
        self._debug_blocks: set[int] = set()
        self._conditional_blocks: set[int] = set()

    def on_If(self, node: cst.If, ctx) -> None:
        if _is_debug_flag(node.test):
            self._debug_blocks.add(id(node.body))
        self._conditional_blocks.add(id(node.body))
        if node.orelse is not None:
            self._conditional_blocks.add(id(node.orelse))

    def on_ExceptHandler(self, node: cst.ExceptHandler, ctx) -> None:
        self._conditional_blocks.add(id(node.body))

    def in_debug_branch(self, node: cst.Call, ctx) -> bool:
        """Under `if <...verbose/debug...>:`, a flag that ships switched off."""
        return _under(node, self._debug_blocks, ctx)

    def in_conditional_branch(self, node: cst.Call, ctx) -> bool:
        """Under any `if`/`elif`/`else` or in an `except` handler."""
        return _under(node, self._conditional_blocks, ctx)


def _under(node: cst.CSTNode, blocks: set[int], ctx) -> bool:
    return bool(blocks) and any(id(a) in blocks for a in ancestors(node, ctx.function.top_statement))


def _is_debug_flag(test: cst.BaseExpression) -> bool:
    """`verbose`, `self.debug`, `cfg.debug_mode`, `self.verbose and step % 10 == 0`."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (_is_debug_flag(test.left) or _is_debug_flag(test.right))
    name = dotted_name(test)
    return name is not None and any(word in name.rsplit(".", 1)[-1].lower() for word in FLAG_WORDS)
