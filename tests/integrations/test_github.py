"""`--format github` (workflow commands that become annotations) and `--format concise`."""

from breakscan.model import FileError, Finding, Fix, Report, Span, TargetResult
from breakscan.report import render
from breakscan.report.github import escape_data, escape_property
from tests.helpers import ROOT
from tests.integrations.helpers import cli

FINDING = Finding(rule="BS101", name="tensor-item", path="models/m.py", span=Span(4, 12, 4, 31),
                  message="`.item()` copies: 100% eager", gb_ids=("GB0124",), severity="error",
                  chain=("Model.forward", "normalise"), fix=Fix("keep it a tensor"))


def test_messages_and_properties_are_escaped_as_the_actions_toolkit_does():
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("C:\\dir,with:colons%") == "C%3A\\dir%2Cwith%3Acolons%25"


def test_a_finding_is_one_annotation_with_its_range_title_chain_and_fix():
    [line] = render("github", Report(version="0.1.0", findings=[FINDING])).splitlines()
    assert line == ("::error file=models/m.py,line=4,col=12,endLine=4,endColumn=31,title=BS101 tensor-item"
                    "::`.item()` copies: 100%25 eager%0Avia Model.forward -> normalise%0Afix: keep it a tensor")


def test_severity_and_multi_line_ranges():
    warning = Finding(rule="BS201", name="tensor-if", path="a,b.py", span=Span(3, 5, 6, 1), message="m",
                      gb_ids=(), severity="warning", status="confirmed")
    info = Finding(rule="BS202", name="x", path="c.py", span=Span(1, 1, 1, 2), message="n", gb_ids=(),
                   severity="info")
    first, second = render("github", Report(version="0.1.0", findings=[warning, info])).splitlines()
    # Columns only on single-line annotations (GitHub ignores them otherwise); `,` escaped in the path.
    assert first == "::warning file=a%2Cb.py,line=3,endLine=6,title=BS201 tensor-if::m%0Astatus: confirmed"
    assert second.startswith("::notice file=c.py,line=1,col=1,endLine=1,endColumn=2,")


def test_errors_failed_targets_and_unused_suppressions():
    errors = [FileError("bad.py", "syntax error: x", 3, 7), FileError("gone.py", "gone")]
    report = Report(version="0.1.0", errors=errors,
                    targets=[TargetResult(name="M()", path="m.py", status="crashed", error="Traceback\nboom"),
                             TargetResult(name="N()", path="n.py", status="ok")],
                    unused_suppressions=[FileError("m.py", "unused suppression", 9)])
    assert render("github", report).splitlines() == [
        "::error file=bad.py,line=3,col=7,title=E999 breakscan::syntax error: x",
        "::error file=gone.py,title=E999 breakscan::gone",
        "::error file=m.py,title=E998 target M() crashed::Traceback%0Aboom",
        "::warning file=m.py,line=9,title=breakscan unused suppression::unused suppression",
    ]


def test_concise_is_one_line_per_entry():
    report = Report(version="0.1.0", findings=[FINDING], errors=[FileError("bad.py", "syntax error:\n  x")],
                    targets=[TargetResult(name="M()", path="m.py", status="failed", error="Traceback\n  boom")])
    assert render("concise", report).splitlines() == [
        "bad.py:1:1: E999 syntax error: x",
        "models/m.py:4:12: BS101 `.item()` copies: 100% eager",
        "m.py:1:1: E998 target M() failed: Traceback boom",
    ]


def test_the_cli_prints_annotations_for_a_real_model():
    result = cli("--static", "--no-cache", "--format", "github", "examples/model.py", cwd=ROOT)
    lines = result.stdout.splitlines()
    assert result.returncode == 1 and lines
    assert all(line.startswith(("::error file=examples/model.py,line=", "::warning file=examples/model.py,line="))
               for line in lines)
