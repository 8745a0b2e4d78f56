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


def test_the_command_lints_the_project_files_the_run_compiled_in(tmp_path, capsys):
    """`breakscan run` lints the script and the project's files its compiled code ran in, so a
    recompilation there is confirmed by the rule that predicted it, not reported as missed."""
    import json

    from breakscan.cli import main

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "steps.py").write_text(
        "import torch\n\n\n"
        "def scale(x, i):\n"
        "    return x * i\n\n\n"
        "step = torch.compile(scale, backend='eager')\n\n\n"
        "def train(x):\n"
        "    for i in range(4):\n"
        "        x = step(x, i)\n"
        "    return x\n")
    script = tmp_path / "train.py"
    script.write_text("import torch\nfrom steps import train\n\ntrain(torch.ones(2))\n")
    assert main(["run", "--format", "json", str(script)]) == 1  # a recompile finding (a warning)
    report = json.loads(capsys.readouterr().out)
    (finding,) = report["findings"]
    assert (finding["rule"], finding["line"], finding["status"]) == ("BR002", 5, "confirmed")
    assert finding["path"].endswith("steps.py") and report["summary"]["files"] == 2
    (target,) = report["targets"]
    assert [(r["line"], r["count"]) for r in target["recompiles"]] == [(5, 1)]
