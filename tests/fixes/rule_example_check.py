"""Every rule's INVALID examples through the whole fix path, in one process:

    python -m tests.fixes.rule_example_check FOLDER  ->  one JSON object on stdout

lint -> confirm the original (the evidence for the suggestion) -> suggest -> apply the diff ->
confirm the refactored file and compare its compiled output with the original's eager one. An
original that gives a different result on each call (it builds a random layer per call) has no
output to compare; that is reported, not failed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import torch

from breakscan.config import Config
from breakscan.confirm import fuse
from breakscan.fixes import attach_fixes
from breakscan.lint.linter import lint_paths
from breakscan.lint.rules import all_rules
from tests.fixes.dynamo_check import _build, _compiled, _same, check
from tests.fixes.patching import apply_diff

_NEW_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")


def _deterministic(path: str, entry: str, inputs: str) -> bool:
    """Two calls of one build, with no seeding between, give the same outputs (a layer built
    per call does not)."""
    prepared = _build(path, entry, inputs)
    first, second = prepared.run(prepared.target), prepared.run(prepared.target)
    return _same({"outputs": first, "gradients": [None]}, {"outputs": second, "gradients": [None]})


def _added_lines(diff: str) -> set[int]:
    """The line numbers, in the patched file, of the lines a unified diff adds."""
    added: set[int] = set()
    number = 0
    for line in diff.splitlines():
        if hunk := _NEW_HUNK.match(line):
            number = int(hunk.group(1))
        elif number and line[:1] in (" ", "+"):
            if line.startswith("+"):
                added.add(number)
            number += 1
    return added


def example(folder: Path, rule, number: int, example, defaults: dict) -> dict:
    original = folder / f"{rule.id}_{number}" / "original" / "m.py"
    original.parent.mkdir(parents=True)
    original.write_text(example.source)
    findings = [f for f in lint_paths([str(original)], Config(), jobs=1).findings if f.rule == rule.id]
    torch._dynamo.config.load_config(defaults)
    try:
        _, result = _compiled(str(original), _build(str(original), example.entry, example.inputs))
    except Exception as error:  # noqa: BLE001 - an example this environment cannot run (no numpy, no CUDA)
        return {"fixed": False, "error": f"{type(error).__name__}: {error}"}
    fused = attach_fixes(fuse(findings[:1], [result]), [result])
    fixes = [f.fix for f in fused if f.rule == rule.id and f.fix and f.fix.diff]
    if not fixes:
        return {"fixed": False}
    refactored = original.parent.parent / "refactored" / "m.py"
    refactored.parent.mkdir()
    refactored.write_text(apply_diff(example.source, fixes[0].diff))
    job = {"original": str(original), "fixed": str(refactored), "entry": example.entry, "inputs": example.inputs}
    outcome = check(job, defaults)
    after = [(b["line"], b["gb_id"]) for b in outcome["fixed"]["breaks"]]
    # A break may remain only where breakscan now reports one: fixing a break inside a loop brings
    # back the function's later breaks, which the lint held back until then.
    predicted = {f.line for f in lint_paths([str(refactored)], Config(), jobs=1).findings}
    changed = _added_lines(fixes[0].diff)
    return {"fixed": True, "summary": fixes[0].summary, "line": findings[0].line,
            "before": [(b["line"], b["gb_id"]) for b in outcome["original"]["breaks"]],
            "after": after,
            "left": [(line, gb) for line, gb in after if line in changed or line not in predicted],
            "outputs_match": outcome["outputs_match"],
            "deterministic": _deterministic(str(original), example.entry, example.inputs)}


def main() -> None:
    folder = Path(sys.argv[1])
    defaults = torch._dynamo.config.save_config()
    results = {f"{rule.id}_{n}": example(folder, rule, n, ex, defaults)
               for rule in all_rules() for n, ex in enumerate(rule.invalid)}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
