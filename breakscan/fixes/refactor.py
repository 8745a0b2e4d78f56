"""Which suggesters to try for a finding, in order: those of its rule family (or, for a break no
rule predicted, of its GB ids, then any whose construct is on the line), then the helper-level
ones that make the enclosing helper function opaque to Dynamo."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from breakscan.fixes.kinds import (
    branches,
    explicit,
    generators,
    helpers,
    library_calls,
    logging_calls,
    scalars,
    setup,
    shapes,
    stdlib,
)
from breakscan.fixes.rewrite import Rewrite, to_fix
from breakscan.fixes.source import SourceModule
from breakscan.model import RECOMPILE_RULES, Finding, Fix

Suggester = Callable[[SourceModule, Finding], Rewrite | None]

_SCALARS = (scalars.keep_as_tensor, scalars.compare_as_tensor, scalars.index_without_scalar, scalars.capture_scalars)
_BRANCHES = (branches.select_with_where, branches.branch_with_cond, branches.reduce_with_tensor_method,
             generators.list_instead_of_generator)
_SHAPES = (shapes.reduce_without_indexing, shapes.capture_dynamic_shapes)
_LOGGING = (logging_calls.guard_logging,)
_SETUP = (setup.move_setup_to_init,)
_EXPLICIT = (explicit.drop_graph_break,)
_STDLIB = (stdlib.clone_instead_of_copy,)

# Rule families by the id's first digit: BS1xx scalars, BS2xx control flow, ... (see the rules).
BY_FAMILY: dict[str, tuple[Suggester, ...]] = {
    "BS1": _SCALARS,
    "BS2": _BRANCHES,
    "BS3": _SHAPES,
    "BS4": _LOGGING,
    # Seeding is a stdlib-looking call that belongs in __init__; `math.prod(gen)` takes a list.
    "BS5": _STDLIB + _SETUP + (generators.list_instead_of_generator,),
    "BS8": _SETUP,
    "BS9": _EXPLICIT,
}

BY_GB_ID: dict[str, tuple[Suggester, ...]] = {
    "GB0124": _SCALARS,  # Tensor.item()
    "GB0033": _SCALARS + _SHAPES,  # data-dependent operator
    "GB0170": _BRANCHES,  # data-dependent branching
    "GB0036": _SHAPES,  # dynamic shape operator
    "GB0059": _LOGGING,  # builtin print (and other builtins)
    "GB0291": _LOGGING,  # logging.Logger methods
    "GB4841": _LOGGING,  # logging.info(): python_type() inside logging
    "GB0007": _LOGGING + _SETUP,  # skipped functions: warnings.warn, torch.manual_seed, time...
    "GB4198": _STDLIB,  # copy.deepcopy of a tensor
    "GB0264": _SETUP,  # nn.Parameter() built while tracing
    "GB0467": _SETUP,  # setattr on a hook handle
    "GB0025": _EXPLICIT,  # torch._dynamo.graph_break()
    "GB8335": (generators.list_instead_of_generator,),  # a generator TorchDynamo cannot rebuild
    "GB0091": (generators.list_instead_of_generator,),  # the same, when it reads the caller's variables
}

# For a bare break: the suggesters that look for their own construct on the line (the config
# switches are left to the GB ids that call for them).
CONSTRUCTS: tuple[Suggester, ...] = (
    scalars.keep_as_tensor, scalars.compare_as_tensor, scalars.index_without_scalar, *_BRANCHES,
    shapes.reduce_without_indexing, *_LOGGING, *_SETUP, *_EXPLICIT, *_STDLIB,
)
HELPER_LEVEL: tuple[Suggester, ...] = (helpers.custom_op_helper, helpers.disable_helper)
# Findings in a function a helper-level fix cannot wrap: a tensor hook TorchDynamo traces as it is
# registered breaks again as a disabled function (GB0099) or a custom op.
_NOT_HELPER_LEVEL = frozenset({"BS710", "BS512"})


# Rewrites of a branch on tensor data into tensor code: only for a break TorchDynamo reports as
# data-dependent branching (a control-flow finding may break for another reason, on a Python
# bool: `if all(<generator whose items break>)`).
_DATA_BRANCH_FIXES = (branches.select_with_where, branches.branch_with_cond)
_DATA_BRANCHING = "GB0170"


def candidates(finding: Finding) -> tuple[Suggester, ...]:
    if finding.rule.startswith(RECOMPILE_RULES):  # a refactor for a break does not stop a recompile
        return ()
    if finding.library is not None:  # only the call site is the user's to change
        return (library_calls.run_library_call_eagerly,)
    if finding.rule != "BS000":
        own = tuple(s for s in BY_FAMILY.get(finding.rule[:3], ())
                    if s not in _DATA_BRANCH_FIXES or _DATA_BRANCHING in finding.gb_ids)
    else:
        own = tuple(s for gb_id in finding.gb_ids for s in BY_GB_ID.get(gb_id, ())) + CONSTRUCTS
    return tuple(dict.fromkeys(own + (() if finding.rule in _NOT_HELPER_LEVEL else HELPER_LEVEL)))


def suggest(src: SourceModule, finding: Finding) -> Fix | None:
    for suggester in candidates(finding):
        rewrite = suggester(src, finding)
        fix = to_fix(src, rewrite) if rewrite is not None else None
        if fix is not None:
            return replace(fix, kind=suggester.__name__)
    return None
