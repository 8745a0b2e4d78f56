"""Runs original/refactored pairs under TorchDynamo in one process (torch imported once):

    python -m tests.fixes.dynamo_check JOBS.json  ->  one JSON object on stdout

For each pair: the original's eager output, both versions' breaks and graphs (the capture and
attribution that `breakscan.confirm` uses), and whether the refactored version,
compiled, gives the original's eager output. Targets are built as the confirmation worker builds
them (`breakscan.confirm.prepare`), from the same seed, and each is first called right after it is
built (what a refactor that moves seeding into `__init__` promises).
"""

from __future__ import annotations

import json
import os
import sys
import warnings

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

from breakscan.confirm.attribute import UserFiles  # noqa: E402
from breakscan.confirm.capture import capturing  # noqa: E402
from breakscan.confirm.locate import module_site  # noqa: E402
from breakscan.confirm.prepare import prepare  # noqa: E402
from breakscan.confirm.protocol import result_to_json  # noqa: E402
from breakscan.confirm.results import build_result  # noqa: E402
from breakscan.model import TargetResult, TargetSpec  # noqa: E402

_SEED = 1234


def _build(path: str, entry: str, inputs: str):
    torch.manual_seed(_SEED)
    return prepare(TargetSpec(path=path, entry=entry, inputs=inputs), module_site(path), "cpu")


def _compiled(path: str, target, args: tuple, kwargs: dict) -> tuple[object, TargetResult]:
    """Compile and call once under the confirmation capture: (output, breaks and graphs)."""
    torch._dynamo.reset()
    with capturing() as capture:
        output = torch.compile(target, backend="eager")(*args, **kwargs)
    torch._dynamo.reset()
    result = build_result(os.path.basename(path), path, capture.breaks, capture.graphs,
                          UserFiles([os.path.dirname(path)]))
    return output, result


def _same(expected, actual) -> bool:
    left, left_spec = tree_flatten(expected)
    right, right_spec = tree_flatten(actual)
    if left_spec != right_spec:
        return False
    for a, b in zip(left, right):
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                    and torch.allclose(a, b, atol=1e-6)):
                return False
        elif a != b and not (isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-6):
            return False
    return True


def check(job: dict, defaults: dict) -> dict:
    """The original's eager output against the refactored one's compiled output; both captures.
    Dynamo's config is reset around each version: a suggested config switch runs at import."""
    torch._dynamo.config.load_config(defaults)
    target, args, kwargs = _build(job["original"], job["entry"], job["inputs"])
    expected = target(*args, **kwargs)
    _, original = _compiled(job["original"], target, args, kwargs)
    torch._dynamo.config.load_config(defaults)
    target, args, kwargs = _build(job["fixed"], job["entry"], job["inputs"])
    actual, refactored = _compiled(job["fixed"], target, args, kwargs)
    torch._dynamo.config.load_config(defaults)
    return {"original": result_to_json(original), "fixed": result_to_json(refactored),
            "outputs_match": _same(expected, actual)}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        jobs = json.load(handle)
    defaults = torch._dynamo.config.save_config()
    results = {job["name"]: check(job, defaults) for job in jobs}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
