"""What a target computes, kept and compared: how a fix is shown to change nothing but the graphs.
Runs in the worker only.

The reference is the original code run eagerly; a fixed version is run compiled, from the same
seed and inputs, and must give the same outputs (and, for a module that trains, the same
parameter gradients) within `RTOL`/`ATOL`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from breakscan.confirm.prepare import Prepared
from breakscan.model import OutputCheck

RTOL, ATOL = 1e-5, 1e-6


def _gradients(target: Any, outputs: Any) -> dict[str, torch.Tensor] | None:
    """The parameter gradients of the sum of the float outputs that require grad, for a module
    that trains (None otherwise); the gradients are reset afterwards."""
    if not isinstance(target, torch.nn.Module) or not target.training or not torch.is_grad_enabled():
        return None
    leaves = [t for t in tree_flatten(outputs)[0]
              if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    parameters = [(name, p) for name, p in target.named_parameters() if p.requires_grad]
    if not leaves or not parameters:
        return None
    target.zero_grad(set_to_none=True)
    torch.stack([t.sum() for t in leaves]).sum().backward()
    gradients = {name: p.grad.detach().clone() for name, p in parameters if p.grad is not None}
    target.zero_grad(set_to_none=True)
    return gradients


def record(prepared: Prepared, function: Callable) -> dict[str, list]:
    """Outputs (detached) and gradients of every call, as they come right after the build (which
    seeds): what the calls draw at random is then the same in every run."""
    outputs, gradients = [], []

    def call(*args, **kwargs):
        output = function(*args, **kwargs)
        gradients.append(_gradients(prepared.target, output))
        outputs.append(torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.detach().cpu(), output))
        return output

    prepared.run(call)
    return {"outputs": outputs, "gradients": gradients}


def _difference(expected: Any, actual: Any) -> tuple[float, bool, str | None]:
    """(largest absolute difference, whether all are within tolerance, what differs in kind,
    structure or shape)."""
    left, left_spec = tree_flatten(expected)
    right, right_spec = tree_flatten(actual)
    if left_spec != right_spec:
        return math.inf, False, "the outputs have a different structure"
    largest, close = 0.0, True
    for a, b in zip(left, right):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
                return math.inf, False, "a tensor output became a Python value (or the reverse)"
            if a.shape != b.shape or a.dtype != b.dtype:
                return math.inf, False, f"an output changed from {a.dtype}{list(a.shape)} to {b.dtype}{list(b.shape)}"
            a, b = a.detach().cpu().double(), b.detach().cpu().double()
            if a.numel():
                largest = max(largest, float((a - b).abs().nan_to_num(0.0).max()))
            close = close and torch.allclose(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
        elif a != b and not (isinstance(a, float) and isinstance(b, float)
                             and math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)):
            return math.inf, False, f"an output changed from {a!r} to {b!r}"
    return largest, close, None


def _common_parameters(expected: list, actual: list) -> tuple[list, list]:
    """The gradients of the parameters both versions have, per call: a fix that builds a layer
    once in `__init__` registers parameters the original made afresh on every call."""
    if len(expected) != len(actual):
        return expected, actual
    left, right = [], []
    for before, after in zip(expected, actual):
        names = sorted(set(before or {}) & set(after or {}))
        left.append({name: before[name] for name in names} if before is not None else None)
        right.append({name: after[name] for name in names} if after is not None else None)
    return left, right


def compare(expected: dict[str, list], actual: dict[str, list]) -> OutputCheck:
    difference, close, detail = _difference(expected["outputs"], actual["outputs"])
    trains = any(g is not None for g in expected["gradients"])
    gradient_difference, gradients_close, gradient_detail = (
        _difference(*_common_parameters(expected["gradients"], actual["gradients"])) if trains
        else (0.0, True, None))
    return OutputCheck(
        outputs_match=close, gradients_match=gradients_close if trains else None,
        max_difference=max(difference, gradient_difference), detail=detail or gradient_detail,
        rtol=RTOL, atol=ATOL,
    )


def save(data: dict[str, list], file: str) -> None:
    torch.save(data, file)


def load(file: str) -> dict[str, list]:
    return torch.load(file, weights_only=False)
