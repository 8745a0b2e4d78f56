"""`breakscan run SCRIPT -- ARGS`: the script runs unchanged; breaks grouped per compiled region."""

from __future__ import annotations

from breakscan.confirm import run_script
from tests.confirm.helpers import fixture, line_of


def test_script_breaks_are_grouped_per_top_compiled_function():
    results = run_script(fixture("script_main.py"), ["3"], timeout=120)
    by_name = {r.name: r for r in results}
    model = by_name[f"Net.forward (script_main.py:{line_of('script_main.py', 'SCRIPT_MODEL_BREAK') - 2})"]
    (brk,) = model.breaks
    assert (brk.line, brk.gb_id) == (line_of("script_main.py", "SCRIPT_MODEL_BREAK"), "GB0059")
    function = next(r for r in results if r.name.startswith("postprocess (script_main.py:"))
    (brk,) = function.breaks
    assert (brk.line, brk.gb_id) == (line_of("script_main.py", "SCRIPT_FN_BREAK"), "GB0124")
    assert all(r.status == "ok" for r in results) and len(results) == 2


def test_failing_script_without_compiled_code_is_reported():
    (result,) = run_script(fixture("script_fails.py"), [], timeout=120)
    assert result.status == "failed"
    assert result.error == "SystemExit: the script exited with status 3"
