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

from breakscan.confirm import outputs  # noqa: E402
from breakscan.confirm.attribute import UserFiles  # noqa: E402
from breakscan.confirm.capture import capturing  # noqa: E402
from breakscan.confirm.locate import module_site  # noqa: E402
from breakscan.confirm.prepare import Prepared, prepare  # noqa: E402
from breakscan.confirm.protocol import result_to_json  # noqa: E402
from breakscan.confirm.results import build_result  # noqa: E402
from breakscan.model import TargetResult, TargetSpec  # noqa: E402


def _build(path: str, entry: str, inputs: str) -> Prepared:
    """Built as the worker builds it: seeded, from the file's namespace."""
    return prepare(TargetSpec(path=path, entry=entry, inputs=inputs), module_site(path), "cpu")


def _eager(path: str, entry: str, inputs: str) -> dict:
    prepared = _build(path, entry, inputs)
    return outputs.record(prepared, prepared.target)


def _compiled(path: str, prepared: Prepared) -> tuple[dict, TargetResult]:
    """Compile and make the calls under the confirmation capture: (outputs, breaks and graphs)."""
    torch._dynamo.reset()
    with capturing() as capture:
        recorded = outputs.record(prepared, torch.compile(prepared.target, backend="eager"))
    torch._dynamo.reset()
    result = build_result(os.path.basename(path), path, capture.breaks, capture.graphs,
                          UserFiles([os.path.dirname(path)]))
    return recorded, result


def _same(expected: dict, actual: dict) -> bool:
    return outputs.compare(expected, actual).same


def check(job: dict, defaults: dict) -> dict:
    """The original's eager output against the refactored one's compiled output; both captures.
    Dynamo's config is reset around each version: a suggested config switch runs at import."""
    torch._dynamo.config.load_config(defaults)
    expected = _eager(job["original"], job["entry"], job["inputs"])
    _, original = _compiled(job["original"], _build(job["original"], job["entry"], job["inputs"]))
    torch._dynamo.config.load_config(defaults)
    actual, refactored = _compiled(job["fixed"], _build(job["fixed"], job["entry"], job["inputs"]))
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
