"""The terminal report: key lines, not whole snapshots."""

from __future__ import annotations

import re
import time
from dataclasses import replace

from breakscan.fixes import attach_fixes
from breakscan.model import FileError
from breakscan.report import RenderOptions, render
from tests.report.factories import finding, model_report

PLAIN = RenderOptions(color=False, width=80)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_chain_is_a_tree_of_graphs_and_breaks_in_execution_order(tmp_path):
    text = render("text", model_report(tmp_path), PLAIN)
    tree = [line for line in _lines(text) if line.startswith(("├──", "└──"))]
    assert [re.sub(r"\s{2,}.*", "", line) for line in tree] == [
        "├── Graph 1 (1 op, line 11)",
        "├── ✗ BS401 at model.py:12 (GB0059)",
        "├── Graph 2 (1 op, line 5)",
        "├── ✗ BS101 at model.py:5 (GB0124, ×2)",
        "├── Graph 3 (1 op, line 6)",
        "└── Graph 4 (1 op, line 16)",
        "├── ✗ BS000 at model.py:21 (GB7000)",
        "└── eager: looped (lines 19-22): Dynamo skipped the whole frame after this break",
    ]
    assert "├── ✗ BS401 at model.py:12 (GB0059)  print(\"x\", x.shape)" in _lines(text)


def test_headlines_per_file_and_target(tmp_path):
    lines = _lines(render("text", model_report(tmp_path), RenderOptions(width=200)))
    assert lines[0] == "breakscan 0.1.0 · torch 2.13.0+cpu · on cpu"
    assert "4 findings: 2 confirmed by TorchDynamo, 1 lint-only, 1 missed by the lint" in lines
    assert "target M(): 4 graphs, 2 breaks (3 occurrences) · cpu · torch 2.13.0+cpu · 1.2 s" in lines


def test_finding_shows_code_frame_chain_registry_link_and_fix(tmp_path):
    text = render("text", model_report(tmp_path), PLAIN)
    lines = _lines(text)
    assert "model.py:5:9  error, confirmed ×2 in M()" in lines
    assert "chain: M.forward:13 → helper:5" in lines
    assert "❱ 5 │     s = h.sum().item()" in lines
    assert "│         ^^^^^^^^^^^^^^" in lines
    assert "GB0124: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html" in lines
    assert "-    s = h.sum().item()" in lines and "+    s = h.sum().detach()" in lines
    assert "why: A graph break inside a loop skips the whole frame." in lines  # Dynamo's words for a bare break
    assert "hint: Move the graph break out of the loop." in lines


def test_closing_table_by_rule(tmp_path):
    rows = [line.split() for line in _lines(render("text", model_report(tmp_path), PLAIN))]
    assert ["rule", "name", "confirmed", "lint-only", "missed"] in rows
    assert ["BS101", "tensor-item", "1", "1", "0"] in rows
    assert ["BS000", "unpredicted", "GB7000", "0", "0", "1"] in rows  # a loop break names no construct


def test_plain_text_fits_80_columns_and_has_no_escape_codes(tmp_path):
    text = render("text", model_report(tmp_path), PLAIN)
    assert "\x1b[" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert not any(line != line.rstrip() for line in text.splitlines())
    assert "\x1b[" in render("text", model_report(tmp_path), RenderOptions(color=True, width=80))


def test_max_per_rule_folds_the_rest_into_one_line(tmp_path):
    text = render("text", model_report(tmp_path), RenderOptions(width=120, max_per_rule=1))
    assert "… 1 more at lines 15 (raise --max-per-rule to see them)" in _lines(text)
    assert "model.py:15:21" not in text
    assert "model.py:5:9" in text  # the confirmed one is kept


def test_hundreds_of_findings_stay_grouped_and_fast(tmp_path):
    report = model_report(tmp_path, fixes=False)
    path = report.findings[0].path
    report.findings = [finding(path, "BS101", 1 + n % 20, 1, 5, "static-only") for n in range(400)]
    report.findings += [finding(path, "BS401", 1 + n % 20, 1, 5, "confirmed") for n in range(100)]
    started = time.perf_counter()
    text = render("text", report, RenderOptions(width=80, max_per_rule=3))
    assert time.perf_counter() - started < 5
    lines = _lines(text)
    assert "BS101 tensor-item · 400 findings" in lines and "BS401 print-call · 100 findings" in lines
    assert any(line.startswith("… 397 more at lines") for line in lines)
    assert len(lines) < 150


def test_graph_formats_are_printed_on_request(tmp_path):
    dot = render("text", model_report(tmp_path), RenderOptions(width=100, graph_format="dot"))
    assert 'digraph "M()" {' in dot and "g1 -> b1;" in dot
    mermaid = render("text", model_report(tmp_path), RenderOptions(width=100, graph_format="mermaid"))
    assert "flowchart TD" in mermaid and "g1 --> b1" in mermaid


def test_errors_and_failed_targets(tmp_path):
    report = model_report(tmp_path)
    report.errors = [FileError("bad.py", "invalid syntax", 3, 5)]
    report.targets[1] = replace(report.targets[1], status="failed", error="ValueError: boom (at model.py:21)")
    lines = _lines(render("text", report, RenderOptions(width=200)))
    assert "bad.py:3:5: error: invalid syntax" in lines
    assert "target looped: failed: ValueError: boom (at model.py:21)" in lines


def test_lint_only_report_without_targets(tmp_path):
    report = model_report(tmp_path)
    report.targets, report.torch_version = [], None
    report.findings = [f for f in report.findings if f.status == "static-only"]
    text = render("text", report, PLAIN)
    assert "├──" not in text
    lines = _lines(text)
    assert "1 finding" in lines and lines[-1] == "1 finding · 0 errors · 1 file"
    assert "rule    name          findings" in lines and "BS101   tensor-item          1" in lines
    # Nothing ran: no words or columns about confirmation.
    for word in ("confirmed", "lint-only", "missed", "static-only", "TorchDynamo", "target"):
        assert word not in text, word


def test_a_confirming_report_splits_findings_by_what_torchdynamo_made_of_them(tmp_path):
    lines = _lines(render("text", model_report(tmp_path), PLAIN))
    assert "4 findings: 2 confirmed by TorchDynamo, 1 lint-only, 1 missed by the lint" in lines
    assert lines[-1] == "4 findings (2 confirmed, 1 missed by the lint) · 0 errors · 1 file · 2 targets"
    assert any(line.endswith("error, static-only") for line in lines)


def test_quiet_prints_the_findings_only_under_their_full_paths(tmp_path):
    report = model_report(tmp_path)
    full = render("text", report, PLAIN)
    quiet = render("text", report, RenderOptions(width=100, quiet=True))
    assert "breakscan 0.1.0" in full and "findings by rule" in full
    for chrome in ("breakscan 0.1.0", "findings by rule", "Graph 1", "target M()", "0 errors"):
        assert chrome not in quiet, chrome
    heads = [line for line in quiet.splitlines() if line.startswith(f"  {tmp_path / 'model.py'}:")]
    assert len(heads) == len(report.findings) and "BS101 tensor-item  error" in heads[0]


def test_empty_report():
    from breakscan.model import Report

    text = render("text", Report(version="0.1.0", files=3), PLAIN)
    assert _lines(text)[-1] == "0 findings · 0 errors · 3 files"


def test_long_code_and_diff_lines_are_cut_not_wrapped(tmp_path):
    report = model_report(tmp_path)
    source = tmp_path / "model.py"
    source.write_text(source.read_text().replace('"x", x.shape', '"' + "x" * 80 + '", x.shape'))
    report.findings = attach_fixes(report.findings)
    lines = render("text", report, PLAIN).splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(line.endswith("…") and "❱ 12 │" in line for line in lines)
    assert any(line.endswith("…") and line.strip().startswith("-") for line in lines)


def test_a_long_chain_shows_its_start_and_end(tmp_path):
    from breakscan.model import Break, Frame, GraphInfo, TargetResult

    path = str(tmp_path / "deep.py")
    graphs = tuple(GraphInfo(i, 1, ("add",), (), path) for i in range(40))
    breaks = tuple(Break(path, i + 1, "GB0124", None, "item", stack=(Frame(path, i + 1, "f"),)) for i in range(39))
    report = model_report(tmp_path)
    report.targets, report.findings = [TargetResult("deep", path, "ok", graphs=graphs, breaks=breaks)], []
    lines = _lines(render("text", report, PLAIN))
    assert "├── … 28 more graphs and 35 more breaks …" in lines  # 79 nodes: the first 12 and last 4 shown
    assert sum(line.startswith(("├──", "└──")) for line in lines) == 12 + 1 + 4


def test_a_target_that_recompiled_shows_each_guard_and_the_compile_cost(tmp_path):
    lines = _lines(render("text", model_report(tmp_path), RenderOptions(width=160)))
    assert any(line.startswith("target looped: ") and "· 2 recompiles · 3 compiles, 0.1 s compiling ·" in line
               for line in lines)
    assert "↻ model.py:20 recompiled looped ×2: len(xs) == 1" in lines
    assert "the length of a list or tuple changed between calls: each length compiles a graph of its own" in lines
