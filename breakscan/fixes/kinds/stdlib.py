"""Standard-library calls on tensors with a torch equivalent (`copy.deepcopy(t)` -> `t.clone()`)."""

from __future__ import annotations

from breakscan.fixes.kinds.common import atom, call_name
from breakscan.fixes.rewrite import Rewrite, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding


def clone_instead_of_copy(src: SourceModule, finding: Finding) -> Rewrite | None:
    """Only when a tensor is copied: the run showed it (GB4198 alone) or the lint typed the
    argument as one; and not an attribute of `self`: copying a submodule copies its parameters
    (GB4198 too) but must stay a copy."""
    call = src.first_in(finding.span, lambda n: call_name(src, n) in ("copy.deepcopy", "copy.copy")
                        and len(n.args) == 1 and not n.args[0].keyword and not n.args[0].star)
    if call is None or src.code(call.args[0].value).startswith("self."):
        return None
    if set(finding.gb_ids) != {"GB4198"} and dict(finding.kinds).get(src.code(call.args[0].value)) != "tensor":
        return None
    tensor = atom(src, call.args[0].value)
    summary = (f"copy the tensor with `{tensor}.clone()`, which Dynamo traces (same values; "
               "add `.detach()` if the copy must not carry autograd history)")
    return Rewrite(summary, (replace_node(src, call, f"{tensor}.clone()"),))
