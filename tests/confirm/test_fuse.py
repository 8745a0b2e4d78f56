"""Fusing lint findings with the breaks the targets had."""

from __future__ import annotations

from breakscan.confirm import fuse
from breakscan.model import Break, Finding, Frame, Span, TargetResult
from tests.confirm.helpers import fixture, line_of

PATH = fixture("breaks.py")
CALL, BREAK = line_of("breaks.py", "HELPER_CALL"), line_of("breaks.py", "HELPER_BREAK")


def _finding(line: int, rule: str = "BS301") -> Finding:
    return Finding(rule=rule, name="print-call", path=PATH, span=Span(line, 5, line, 10),
                   message="print breaks the graph", gb_ids=("GB0059",), severity="error")


def _target(*breaks: Break, name: str = "HelperModel()") -> TargetResult:
    return TargetResult(name=name, path=PATH, status="ok", breaks=breaks)


HELPER_BREAK = Break(
    path=PATH, line=BREAK, gb_id="GB0059", gb_type="Failed to trace builtin operator",
    reason="Failed to trace builtin operator (builtin print)", count=2,
    stack=(Frame(PATH, CALL, "HelperModel.forward"), Frame(PATH, BREAK, "helper")),
)


def test_a_break_confirms_the_finding_at_its_line():
    (finding,) = fuse([_finding(BREAK)], [_target(HELPER_BREAK)])
    assert (finding.status, finding.count, finding.target) == ("confirmed", 2, "HelperModel()")
    assert (finding.rule, finding.gb_ids) == ("BS301", ("GB0059",))


def test_a_break_confirms_a_finding_on_its_chain():
    (finding,) = fuse([_finding(CALL)], [_target(HELPER_BREAK)])
    assert finding.status == "confirmed"


def test_unmatched_findings_stay_static_only_and_unmatched_breaks_become_bs000():
    other = Break(path=PATH, line=line_of("breaks.py", "IF_BREAK"), gb_id="GB0170",
                  gb_type="Data-dependent branching", reason="Data-dependent branching",
                  stack=(Frame(PATH, line_of("breaks.py", "IF_BREAK"), "branchy"),), frame_skipped=True)
    static, dynamic = fuse([_finding(1)], [_target(other, name="branchy")])
    assert static.status == "static-only"
    assert (dynamic.rule, dynamic.name, dynamic.status, dynamic.severity) == (
        "BS000", "unpredicted-break", "dynamic-only", "error")
    line_text = open(PATH).read().splitlines()[other.line - 1]
    assert dynamic.span == Span(other.line, 1, other.line, len(line_text) + 1)
    assert dynamic.gb_ids == ("GB0170",) and dynamic.chain == ("branchy",)
    assert dynamic.message.startswith("graph break no rule predicted: Data-dependent branching")
    assert "skips the whole frame" in dynamic.message
    assert (dynamic.count, dynamic.target) == (1, "branchy")


def test_the_same_unpredicted_break_in_two_targets_is_one_finding():
    bare = Break(path=PATH, line=BREAK, gb_id=None, gb_type=None, reason="something",
                 stack=(Frame(PATH, CALL, "HelperModel.forward"), Frame(PATH, BREAK, "helper")))
    (finding,) = fuse([], [_target(bare, name="a"), _target(bare, name="b")])
    assert finding.gb_ids == () and finding.count == 2 and finding.target == "a"
    assert finding.chain == ("HelperModel.forward", "helper")
