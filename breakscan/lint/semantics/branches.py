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
from breakscan.lint.semantics.built import built_truth

FLAG_WORDS = ("verbose", "debug")
# Appended to a finding in a conditional branch, which is then a warning.
WHEN_REACHED = "; it is inside a conditional branch: the graph breaks whenever that branch runs"


def in_debug_branch(ctx) -> bool:
    """Under `if <...verbose/debug...>:`, a flag that ships switched off: unless the code that
    builds the objects writes it out as on (`verbose: bool = True` in the config dataclass)."""
    return any(branch.when and branch.test is not None and any(built_truth(ctx, flag) is not True for flag in flags)
               for branch in ctx.conditions if (flags := _debug_flags(branch.test)))


def in_conditional_branch(ctx) -> bool:
    """Under any `if`/`elif`/`else` that TorchDynamo decides while tracing, or in an `except` handler."""
    return bool(ctx.conditions)


def _debug_flags(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The debug flags a test requires: `verbose`, `self.debug`, `cfg.debug_mode`, in `self.verbose
    and step % 10 == 0` too; a call asking for one (`_debug_enabled()`), or a logger's level
    (`logger.isEnabledFor(logging.DEBUG)`)."""
    if isinstance(test, cst.BooleanOperation):
        return [*_debug_flags(test.left), *_debug_flags(test.right)] if isinstance(test.operator, cst.And) else []
    if isinstance(test, cst.Call):
        called = dotted_name(test.func)
        return [test] if called is not None and (called.endswith(".isEnabledFor") or _debug_flags(test.func)) else []
    name = dotted_name(test)
    return [test] if name is not None and any(word in name.rsplit(".", 1)[-1].lower() for word in FLAG_WORDS) else []
