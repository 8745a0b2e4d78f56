"""The closing table's attribution of breaks no rule flagged."""

from __future__ import annotations

from collections import Counter

from breakscan.lint.rules import all_rules
from breakscan.model import Finding, Span
from breakscan.report.summary import rule_rows


def _bare_break(gb_id: str) -> Finding:
    return Finding("BS000", "unpredicted-break", "m.py", Span(1, 1, 1, 2), "", (gb_id,), "error",
                   status="dynamic-only")


def test_a_missed_break_counts_against_the_one_rule_that_predicts_its_kind():
    claims = Counter(gb for rule in all_rules() for gb in set(rule.gb_ids))
    gb_id = next(gb for gb, rules in sorted(claims.items()) if rules == 1 and gb != "GB7000")
    owner = next(rule for rule in all_rules() if gb_id in rule.gb_ids)
    (row,) = rule_rows([_bare_break(gb_id)])
    assert (row.rule, row.name, row.missed) == (owner.id, owner.name, 1)


def test_other_missed_breaks_get_a_row_per_gb_id():
    rows = rule_rows([_bare_break("GB7000"), _bare_break("GB9999"), _bare_break("GB9999")])
    assert [(r.rule, r.name, r.missed) for r in rows] == [("BS000", "unpredicted GB7000", 1),
                                                          ("BS000", "unpredicted GB9999", 2)]
