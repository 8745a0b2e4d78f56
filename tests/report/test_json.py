"""The JSON report's additions: a graph per target, fix edits, the verification."""

from __future__ import annotations

import json

from breakscan.report import RenderOptions, render
from tests.report.factories import model_report


def test_each_target_carries_its_graph(tmp_path):
    data = json.loads(render("json", model_report(tmp_path), RenderOptions()))
    graph = data["targets"][0]["graph"]
    assert [n["id"] for n in graph["nodes"]] == ["g1", "b1", "g2", "b2", "g3", "g4"]
    assert graph["nodes"][1]["finding"] == 1 and data["findings"][1]["rule"] == "BS401"
    assert [n["kind"] for n in data["targets"][1]["graph"]["nodes"]] == ["break", "eager"]


def test_graph_format_adds_the_picture(tmp_path):
    data = json.loads(render("json", model_report(tmp_path), RenderOptions(graph_format="mermaid")))
    assert data["targets"][0]["graph"]["mermaid"].startswith("flowchart TD")


def test_fix_has_summary_diff_and_edits(tmp_path):
    data = json.loads(render("json", model_report(tmp_path), RenderOptions()))
    fix = data["findings"][3]["fix"]  # deleting an explicit graph break: a safe single-node edit
    assert fix["diff"].splitlines()[2].startswith("@@")
    assert fix["edits"] == [{"line": 21, "column": 1, "end_line": 22, "end_column": 1, "replacement": "        pass\n"}]
    assert fix["applicability"] == "safe" and fix["path"] == data["findings"][3]["path"]
    item = data["findings"][0]["fix"]  # .item() -> tensor changes a type: exact, but unsafe
    assert item["applicability"] == "unsafe" and item["edits"] and item["path"] == data["findings"][0]["path"]
