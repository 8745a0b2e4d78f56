"""The closing table's attribution of breaks no rule flagged."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from breakscan.lint.rules import all_rules
from breakscan.model import Finding, Frame, LibrarySite, Span
from breakscan.report.summary import Counts, break_counts, rule_rows


def _bare_break(gb_id: str) -> Finding:
    return Finding("BS000", "unpredicted-break", "m.py", Span(1, 1, 1, 2), "", (gb_id,), "error",
                   status="dynamic-only")


def test_a_missed_break_is_counted_under_the_rule_the_report_shows_it_with():
    # A kind only one rule predicts is still the BS000 finding the body shows: the table agrees.
    claims = Counter(gb for rule in all_rules() for gb in set(rule.gb_ids))
    gb_id = next(gb for gb, rules in sorted(claims.items()) if rules == 1 and gb != "GB7000")
    (row,) = rule_rows([_bare_break(gb_id)])
    assert (row.rule, row.name, row.missed, row.in_library) == ("BS000", f"unpredicted {gb_id}", 1, 0)


def test_a_break_inside_a_library_is_in_a_library_not_missed():
    inside = replace(_bare_break("GB0036"), library=LibrarySite("vqlib", Frame("my_models.py", 13, "Q.forward")))
    (row,) = rule_rows([inside])
    assert (row.missed, row.in_library) == (0, 1)
    counts = Counts.of([inside, _bare_break("GB0036")])
    assert (counts.missed, counts.in_library) == (1, 1)
    assert counts.confirmation() == "0 confirmed by TorchDynamo, 0 lint-only, 1 missed by the lint, 1 in a library"


def test_other_missed_breaks_get_a_row_per_gb_id():
    rows = rule_rows([_bare_break("GB7000"), _bare_break("GB9999"), _bare_break("GB9999")])
    assert [(r.rule, r.name, r.missed) for r in rows] == [("BS000", "unpredicted GB7000", 1),
                                                          ("BS000", "unpredicted GB9999", 2)]


def test_break_counts_say_sites_and_occurrences_with_plurals():
    from breakscan.model import Break, GraphInfo, TargetResult

    one = Break("m.py", 3, None, None, "x")
    assert break_counts(TargetResult("t", "m.py", "ok", graphs=(GraphInfo(0, 1),), breaks=(one,))) == "1 graph, 1 break"
    many = TargetResult("t", "m.py", "ok", graphs=(GraphInfo(0, 1), GraphInfo(1, 2)),
                        breaks=(replace(one, count=3), replace(one, line=4)))
    assert break_counts(many) == "2 graphs, 2 breaks (4 occurrences)"
