"""Which calls sit in branches TorchDynamo may not take.

TorchDynamo only traces the branch a Python condition selects, so a call that runs only under a
debug flag (`if self.verbose:`) breaks nothing in a normal run, and one that runs only on unusual
input (a warning in `if head_mask is not None:`, a message in an `except:` handler) breaks only when
that input comes. The walker records the branches around each node (`ctx.conditions`); these
questions read them.
"""

from __future__ import annotations

import libcst as cst

from breakscan.lint.names import dotted_name

FLAG_WORDS = ("verbose", "debug")
# Appended to a finding in a conditional branch, which is then a warning.
WHEN_REACHED = "; it is inside a conditional branch: the graph breaks whenever that branch runs"


def in_debug_branch(ctx) -> bool:
    """Under `if <...verbose/debug...>:`, a flag that ships switched off."""
    return any(branch.when and branch.test is not None and _is_debug_flag(branch.test) for branch in ctx.conditions)


def in_conditional_branch(ctx) -> bool:
    """Under any `if`/`elif`/`else` that TorchDynamo decides while tracing, or in an `except` handler."""
    return bool(ctx.conditions)


def _is_debug_flag(test: cst.BaseExpression) -> bool:
    """`verbose`, `self.debug`, `cfg.debug_mode`, `self.verbose and step % 10 == 0`; a call asking
    for one (`_debug_enabled()`), or a logger's level (`logger.isEnabledFor(logging.DEBUG)`)."""
    if isinstance(test, cst.BooleanOperation):
        return isinstance(test.operator, cst.And) and (_is_debug_flag(test.left) or _is_debug_flag(test.right))
    if isinstance(test, cst.Call):
        called = dotted_name(test.func)
        return called is not None and (called.endswith(".isEnabledFor") or _is_debug_flag(test.func))
    name = dotted_name(test)
    return name is not None and any(word in name.rsplit(".", 1)[-1].lower() for word in FLAG_WORDS)
