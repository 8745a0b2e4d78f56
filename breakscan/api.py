"""Confirmation from the user's own process, for tests and notebooks:

    report = breakscan.confirm(model, x)
    breakscan.assert_no_graph_breaks(model, x, allow={"GB0170"})

Runs in-process with the same capture as the CLI's worker. It resets TorchDynamo before and
after (a cached compile would hide the breaks), and lets an exception of the user's code
propagate as it would without breakscan.
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from breakscan import __version__
from breakscan.confirm.attribute import UserFiles, project_root
from breakscan.confirm.capture import capturing, original_callable
from breakscan.confirm.fuse import fuse
from breakscan.confirm.results import build_result
from breakscan.model import Break, Report, TargetResult


def _source_file(target: Any) -> str | None:
    try:
        return inspect.getsourcefile(target if inspect.isroutine(target) else type(target))
    except TypeError:
        return None


def _device(target: Any, args: tuple, kwargs: dict) -> str:
    import torch

    parameters = target.parameters() if isinstance(target, torch.nn.Module) else iter(())
    tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
    first = next(parameters, None) if not tensors else tensors[0]
    return first.device.type if first is not None else "cpu"


def _run(model_or_fn: Callable, args: tuple, kwargs: dict) -> TargetResult:
    import torch

    target = original_callable(model_or_fn)
    path = _source_file(target) or "<unknown>"
    # The user's files: the project the model is defined in, and the one the process runs from.
    user = UserFiles([project_root(path), os.getcwd()])
    name = getattr(target, "__qualname__", None) or f"{type(target).__qualname__}()"
    started = time.perf_counter()
    torch._dynamo.reset()
    try:
        with capturing() as capture:
            torch.compile(target, backend="eager")(*args, **kwargs)
    finally:
        torch._dynamo.reset()
    return build_result(name, path, capture.breaks, capture.graphs, user,
                        device=_device(target, args, kwargs), torch_version=torch.__version__,
                        wall_time=time.perf_counter() - started, recompiles=capture.recompiles,
                        compiles=capture.compiles)


def confirm(model_or_fn: Callable, *args: Any, **kwargs: Any) -> Report:
    """Compile and call `model_or_fn(*args, **kwargs)` once; every graph break it hits becomes
    a BS000 finding, and `report.targets[0]` holds the breaks, graphs and counts."""
    result = _run(model_or_fn, args, kwargs)
    return Report(version=__version__, files=0, findings=fuse([], [result]), targets=[result],
                  torch_version=result.torch_version)


def _allowed_ids(allow: Iterable[str]) -> set[str]:
    """GB ids as given; rule ids or names (BS101, tensor-item) stand for the GB ids they predict."""
    items = list(allow)
    allowed = {item.upper() for item in items if item.upper().startswith("GB")}
    rules = [item for item in items if not item.upper().startswith("GB")]
    if rules:
        from breakscan.lint.rules import rule_by_id  # the lint's catalogue, only when needed

        for item in rules:
            rule = rule_by_id(item)
            if rule is None:
                raise ValueError(f"allow: {item!r} is neither a GB id (GB0170) nor a breakscan rule id")
            allowed.update(rule.gb_ids)
    return allowed


def _describe(brk: Break) -> str:
    where = f"{brk.path}:{brk.line}"
    times = f" (x{brk.count})" if brk.count > 1 else ""
    return f"  {where}: {brk.gb_id or 'no GB id'}: {brk.reason}{times}"


def assert_no_graph_breaks(model_or_fn: Callable, *args: Any, allow: Iterable[str] = (),
                           **kwargs: Any) -> Report:
    """Like `confirm`, but raise AssertionError listing every break not in `allow`."""
    report = confirm(model_or_fn, *args, **kwargs)
    allowed = _allowed_ids(allow)
    breaks = [b for b in report.targets[0].breaks if b.gb_id not in allowed]
    if breaks:
        total = sum(b.count for b in breaks)
        listing = "\n".join(_describe(b) for b in breaks)
        raise AssertionError(f"{total} graph break(s) in {report.targets[0].name}:\n{listing}")
    return report
