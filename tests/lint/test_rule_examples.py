"""Every rule's inline examples: INVALID ones report exactly on their `# break` lines, VALID ones not at all.

(tests/calibration checks the same examples against TorchDynamo itself.)
"""

import pytest

from breakscan.lint.rules import all_rules, rule_table
from tests.helpers import lint_source

CASES = [(rule, kind, index, example) for rule in all_rules()
         for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
         for index, example in enumerate(examples)]


def test_every_rule_has_examples_and_docs():
    for rule in all_rules():
        assert rule.invalid and rule.valid, rule.id
        assert all(rule.example_lines(example) for example in rule.invalid), rule.id
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert section in rule.documentation(), (rule.id, section)
        if rule.kind == "recompile":  # they predict recompilations, not breaks
            assert rule.id.startswith("BR") and not rule.gb_ids, rule.id
        else:
            assert rule.gb_ids and all(gb.startswith("GB") for gb in rule.gb_ids), rule.id
        assert rule.fix_hint and rule.message and rule.name, rule.id


def test_the_rule_table_lists_every_rule_class():
    """table.json lets a run choose rules without importing them: it must say what the classes say."""
    assert rule_table() == tuple((rule.id, rule.name) for rule in all_rules()), (
        "rule table out of date: python -c 'from breakscan.lint.rules import write_rule_table; write_rule_table()'")


@pytest.mark.parametrize("rule,kind,index,example", CASES, ids=[f"{r.id}-{k}-{i}" for r, k, i, _ in CASES])
def test_rule_example(tmp_path, rule, kind, index, example):
    outcome = lint_source(tmp_path, example.source)
    assert not outcome.errors
    lines = {f.line for f in outcome.findings if f.rule == rule.id}
    if kind == "invalid":
        assert lines == set(rule.example_lines(example))
    else:
        assert lines == set()
