"""The fix suggested for each rule's INVALID examples, applied as written, removes the break and
keeps the output; a break left anywhere else is one breakscan reports on the refactored file (one
subprocess for all examples, about 20 s)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytest.importorskip("torch")


def test_suggested_fixes_remove_the_breaks_of_the_rule_examples(tmp_path):
    run = subprocess.run([sys.executable, "-m", "tests.fixes.rule_example_check", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout.strip().splitlines()[-1])
    fixed = {name: r for name, r in results.items() if r["fixed"]}
    assert len(fixed) >= 20
    problems = {name: r for name, r in fixed.items()
                if r["left"] or (r["deterministic"] and not r["outputs_match"])}
    assert not problems, json.dumps(problems, indent=1)
