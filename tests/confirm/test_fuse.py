"""Fusing lint findings with the breaks the targets had."""

from __future__ import annotations

from dataclasses import replace

from breakscan.confirm import fuse
from breakscan.model import Break, BreakRef, Finding, Frame, LibraryFrame, LibrarySite, Span, TargetResult
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
    indent = len(line_text) - len(line_text.lstrip())
    assert dynamic.span == Span(other.line, indent + 1, other.line, len(line_text) + 1)  # the code, not column 1
    assert dynamic.gb_ids == ("GB0170",) and dynamic.chain == ("branchy",)
    assert dynamic.message.startswith("graph break no rule predicted: Data-dependent branching")
    assert "skips the whole frame" in dynamic.message
    assert (dynamic.count, dynamic.target) == (1, "branchy")


def test_the_same_unpredicted_break_in_two_targets_is_one_finding():
    bare = Break(path=PATH, line=BREAK, gb_id=None, gb_type=None, reason="something",
                 stack=(Frame(PATH, CALL, "HelperModel.forward"), Frame(PATH, BREAK, "helper")))
    (finding,) = fuse([], [_target(bare, name="a"), _target(bare, name="b")])
    assert finding.gb_ids == () and finding.target == "a"
    assert finding.count == 1  # occurrences in its target "a", not over both targets
    assert finding.breaks == (BreakRef(0, 0), BreakRef(1, 0))
    assert finding.chain == ("HelperModel.forward", "helper")


def test_the_fuser_records_which_break_each_finding_matched():
    other = replace(HELPER_BREAK, line=CALL, gb_id="GB0170", reason="other",
                    stack=(Frame(PATH, CALL, "HelperModel.forward"),), count=1)
    at_call, at_helper = fuse([_finding(CALL), _finding(BREAK)], [_target(HELPER_BREAK, other)])
    # At the call line: the break there, not the helper's break whose stack passes through it.
    assert at_call.breaks == (BreakRef(0, 1, True),) and at_call.count == 1
    assert at_helper.breaks == (BreakRef(0, 0, True),) and at_helper.count == 2
    (on_chain,) = fuse([_finding(CALL)], [_target(HELPER_BREAK)])
    assert on_chain.breaks == (BreakRef(0, 0, False),)


LIBRARY_FILE = fixture("site-packages/fakelib.py")
IN_LIBRARY = replace(HELPER_BREAK, line=line_of("breaks.py", "LIBRARY_CALL"), gb_id="GB0059",
                     stack=(Frame(PATH, line_of("breaks.py", "LIBRARY_CALL"), "uses_library"),
                            Frame(LIBRARY_FILE, 5, "normalize")),
                     library=LibraryFrame("fakelib", LIBRARY_FILE, 5, "normalize"))


def test_a_break_inside_a_library_matches_a_followed_finding_at_the_library_line():
    followed = replace(_finding(5), path=LIBRARY_FILE, library=LibrarySite("fakelib"))
    (finding,) = fuse([followed], [_target(IN_LIBRARY, name="uses_library")])
    assert finding.status == "confirmed" and finding.breaks == (BreakRef(0, 0, True),)


def test_an_unpredicted_break_inside_a_library_is_labelled_with_it():
    (finding,) = fuse([], [_target(IN_LIBRARY, name="uses_library")])
    assert (finding.rule, finding.status, finding.path, finding.line) == ("BS000", "dynamic-only", LIBRARY_FILE, 5)
    assert finding.span.column == 5  # `print(...)`, not column 1
    assert finding.library == LibrarySite("fakelib", Frame(PATH, line_of("breaks.py", "LIBRARY_CALL"), "uses_library"))
    assert finding.chain == ("uses_library", "normalize") and len(finding.call_sites) == 1
    assert "inside the installed library fakelib" in finding.message


def _spanning(first: int, last: int, rule: str = "BS201", gb_id: str = "GB0170") -> Finding:
    return Finding(rule=rule, name="tensor-if", path=PATH, span=Span(first, 9, last, 60),
                   message="`if` on a tensor's value", gb_ids=(gb_id,), severity="error")


def _branch_break(line: int, gb_id: str = "GB0170") -> Break:
    return Break(path=PATH, line=line, gb_id=gb_id, gb_type="Data-dependent branching",
                 reason="Data-dependent branching", stack=(Frame(PATH, line, "forward"),))


def test_a_break_on_a_later_line_of_a_multiline_condition_confirms_the_finding():
    (finding,) = fuse([_spanning(10, 11)], [_target(_branch_break(10), _branch_break(11))])
    assert finding.status == "confirmed" and finding.breaks == (BreakRef(0, 0, True), BreakRef(0, 1, True))


def test_a_break_inside_a_span_with_another_gb_id_or_another_finding_there_is_not_taken():
    other_kind = _branch_break(11, gb_id="GB0059")
    spanning, unpredicted = fuse([_spanning(10, 11)], [_target(other_kind)])
    assert (spanning.status, unpredicted.rule) == ("static-only", "BS000")
    spanning, own = fuse([_spanning(10, 12), _spanning(11, 11)], [_target(_branch_break(11))])
    assert (spanning.status, own.status) == ("static-only", "confirmed")


def test_the_lint_and_torchdynamo_agree_on_a_condition_over_two_lines():
    from breakscan.config import Config
    from breakscan.confirm import discover_targets, run_targets
    from breakscan.lint.linter import lint_paths

    path = fixture("multiline_condition.py")
    specs, _ = discover_targets(path)
    (result,) = run_targets(specs, timeout=120)
    lines = sorted(b.line for b in result.breaks)
    assert lines == [line_of("multiline_condition.py", "CONDITION_START"),
                     line_of("multiline_condition.py", "CONDITION_END")]
    (finding,) = fuse(lint_paths([path], Config(), jobs=1).findings, [result])
    assert (finding.rule, finding.status, len(finding.breaks)) == ("BS201", "confirmed", 2)
