"""The README is the front door: its set-up commands, rule list and CI script must stay true."""

import re

from breakscan.lint.rules import all_rules
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text()


def _commands():
    return re.findall(r"```bash\n(.+?)\n```", README)


def test_readme_has_the_two_setup_commands_and_ci_runs_the_test_command():
    run_example, run_tests = _commands()[:2]
    assert "breakscan examples/model.py" in run_example and "constraints.txt" in run_example
    assert "pytest" in run_tests and "constraints.txt" in run_tests
    ci_script = (ROOT / ".ci" / "run").read_text()
    assert run_tests in ci_script.splitlines()


def test_readme_lists_every_rule_with_its_gb_ids():
    for rule in all_rules():
        row = re.search(rf"^\| {rule.id} \| `{rule.name}` \| ([^|]*) \|", README, re.MULTILINE)
        assert row is not None, rule.id
        assert row.group(1).strip() == (", ".join(rule.gb_ids) or "(recompile)"), rule.id


def test_ci_runs_ruff_and_mypy_from_the_test_extra():
    ci_script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "ruff check ." in ci_script and "mypy" in ci_script
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"ruff>=' in pyproject and '"mypy>=' in pyproject and "[tool.ruff.lint]" in pyproject
