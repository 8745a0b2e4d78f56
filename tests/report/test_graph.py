"""The graph model: graphs in execution order, breaks placed between them, eager stretches, and
the JSON / DOT / Mermaid exports."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx

from breakscan.model import Break, BreakRef, Frame, GraphInfo, LibraryFrame, Span, TargetResult
from breakscan.report.graph import BreakNode, EagerNode, GraphNode, build_chain, chain_dict, to_dot, to_mermaid
from tests.report.factories import model_report


def _ids(chain) -> list[str]:
    return [node.id for node in chain.nodes]


def test_breaks_sit_between_the_graphs_around_them(tmp_path):
    report = model_report(tmp_path)
    chain = build_chain(report.targets[0], report.findings, 0)
    assert _ids(chain) == ["g1", "b1", "g2", "b2", "g3", "g4"]
    # The helper's graphs (lines 5, 6) sort by the helper's lines, not by the caller's line 13.
    assert [n.brk.line for n in chain.breaks] == [12, 5]


def test_the_digraph_is_one_path_in_execution_order(tmp_path):
    report = model_report(tmp_path)
    chain = build_chain(report.targets[0], report.findings, 0)
    assert list(nx.topological_sort(chain.digraph)) == _ids(chain)
    assert nx.is_simple_path(chain.digraph, _ids(chain))
    assert isinstance(chain.digraph.nodes["b2"]["node"], BreakNode)


def test_breaks_link_to_the_finding_that_explains_them(tmp_path):
    report = model_report(tmp_path)
    chain = build_chain(report.targets[0], report.findings, 0)
    assert [(n.rule, n.finding) for n in chain.breaks] == [("BS401", 1), ("BS101", 0)]
    assert chain.breaks[1].code == "s = h.sum().item()"


def test_a_skipped_frame_is_an_eager_stretch(tmp_path):
    report = model_report(tmp_path)
    chain = build_chain(report.targets[1], report.findings, 1)
    assert [type(n) for n in chain.nodes] == [BreakNode, EagerNode]
    eager = chain.nodes[1]
    assert (eager.function, eager.first_line, eager.last_line) == ("looped", 19, 22)


def test_a_finding_on_the_call_line_explains_a_break_in_the_helper(tmp_path):
    report = model_report(tmp_path)
    on_call = [replace(f, span=Span(13, 9, 13, 18), breaks=(BreakRef(0, 1, at_site=False),)) if f.line == 5 else f
               for f in report.findings]
    chain = build_chain(report.targets[0], on_call, 0)
    assert on_call[chain.breaks[1].finding].line == 13


def test_graphs_without_source_lines_keep_their_order(tmp_path):
    path = str(tmp_path / "gone.py")
    target = TargetResult("f", path, "ok", graph_count=2, graphs=(GraphInfo(0, 3), GraphInfo(1, 2)),
                          breaks=(Break(path, 4, None, None, "some break", stack=(Frame(path, 4, "f"),)),))
    chain = build_chain(target, [], 0)
    assert _ids(chain) == ["g1", "g2", "b1"]
    assert chain.graphs[0].line_range == "no source lines"


def test_json_export(tmp_path):
    report = model_report(tmp_path)
    data = chain_dict(build_chain(report.targets[0], report.findings, 0))
    kinds = [(n["id"], n["kind"]) for n in data["nodes"]]
    assert kinds[:3] == [("g1", "graph"), ("b1", "break"), ("g2", "graph")]
    assert data["edges"][:2] == [["g1", "b1"], ["b1", "g2"]]
    item = data["nodes"][3]
    assert item | {"reason": None} == {
        "id": "b2", "kind": "break", "path": report.targets[0].path, "line": 5, "gb_id": "GB0124",
        "gb_type": "Unsupported Tensor.item() call", "rule": "BS101", "finding": 0, "count": 2,
        "frame_skipped": False, "reason": None, "code": "s = h.sum().item()", "library": None,
        "url": "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"}


def test_dot_and_mermaid(tmp_path):
    report = model_report(tmp_path)
    chain = build_chain(report.targets[0], report.findings, 0)
    dot = to_dot(chain)
    assert dot.startswith('digraph "M()" {') and dot.rstrip().endswith("}")
    assert 'b2 [shape=octagon, color=red, fontcolor=red, label="✗ BS101 at model.py:5 (GB0124, ×2)"];' in dot
    assert "  g1 -> b1;" in dot
    mermaid = to_mermaid(chain).splitlines()
    assert mermaid[0] == "flowchart TD"
    assert '  g1["Graph 1 (1 op, line 11)"]' in mermaid
    assert '  b2{{"✗ BS101 at model.py:5 (GB0124, ×2)"}}' in mermaid
    assert "  b2 --> g3" in mermaid


def test_quotes_are_escaped(tmp_path):
    path = str(tmp_path / "q.py")
    target = TargetResult('fn("a")', path, "ok", graphs=(GraphInfo(0, 1),))
    chain = build_chain(target, [], 0)
    assert 'digraph "fn(\\"a\\")"' in to_dot(chain)
    assert isinstance(chain.nodes[0], GraphNode)


LAYERS = '''import torch


class Block(torch.nn.Module):
    def forward(self, x):
        h = x.sin()
        gate = h.mean().item()
        return x + h * gate


class Net(torch.nn.Module):
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
'''


def test_a_skipped_frame_comes_before_the_graphs_of_the_functions_it_calls(tmp_path):
    """A break in a loop skips the caller (GB7000); its callees then compile as their own frames."""
    source = tmp_path / "layers.py"
    source.write_text(LAYERS)
    path = str(source)
    caller, site = Frame(path, 14, "Net.forward"), Frame(path, 7, "Block.forward")
    target = TargetResult(
        "Net()", path, "ok",
        graphs=(GraphInfo(0, 2, ("sin", "mean"), (6, 7), path), GraphInfo(1, 2, ("mul", "add"), (8,), path),
                GraphInfo(2, 2, ("sin", "mean"), (6, 7), path), GraphInfo(3, 2, ("mul", "add"), (8,), path)),
        breaks=(Break(path, 7, "GB7000", None, "graph break in loop", stack=(caller, site), frame_skipped=True),
                Break(path, 7, "GB0124", None, "item", stack=(site,), count=2)))
    chain = build_chain(target, [], 0)
    assert _ids(chain) == ["b1", "e1", "g1", "b2", "g2", "g3", "g4"]
    assert (chain.nodes[1].function, chain.nodes[1].first_line) == ("Net.forward", 12)


def test_a_loop_condition_sits_between_the_graph_before_and_the_loop_body(tmp_path):
    source = tmp_path / "loop.py"
    source.write_text("def countdown(x):\n    while x.sum() > 0:\n        x = x - 1\n    return x\n")
    path = str(source)
    target = TargetResult("countdown", path, "ok", graphs=(GraphInfo(0, 2, lines=(2,), path=path),
                                                          GraphInfo(1, 3, lines=(2, 3), path=path)),
                          breaks=(Break(path, 2, "GB0170", None, "jump", stack=(Frame(path, 2, "countdown"),),
                                        count=2),))
    assert _ids(build_chain(target, [], 0)) == ["g1", "b1", "g2"]


def test_graphs_on_the_break_line_and_of_helpers_called_before_it(tmp_path):
    """`x * 2 + t.item()`: the product's graph led up to the break, the sum's resumed after it; a
    helper's own graph counts at the line that calls it."""
    source = tmp_path / "lines.py"
    source.write_text("def scale(x):\n    return x / 3\n\n\ndef fn(x, t):\n    x = scale(x)\n"
                      "    y = x * 2 + t.item()\n    return y\n")
    path = str(source)
    target = TargetResult("fn", path, "ok", graphs=(GraphInfo(0, 1, ("truediv",), (2,), path),
                                                    GraphInfo(1, 1, ("mul",), (7,), path),
                                                    GraphInfo(2, 1, ("add",), (7,), path)),
                          breaks=(Break(path, 7, "GB0124", None, "item", stack=(Frame(path, 7, "fn"),)),))
    assert _ids(build_chain(target, [], 0)) == ["g1", "g2", "b1", "g3"]


def test_breaks_sit_where_the_capture_recorded_them(tmp_path):
    path = str(tmp_path / "m.py")
    graphs = (GraphInfo(0, 1, ("a",), (), path), GraphInfo(1, 1, ("b",), (), path), GraphInfo(2, 1, ("c",), (), path))
    first = Break(path, 4, None, None, "x", stack=(Frame(path, 4, "f"),), graphs_before=2)
    second = Break(path, 9, None, None, "y", stack=(Frame(path, 9, "g"),), graphs_before=3)
    chain = build_chain(TargetResult("f", path, "ok", graphs=graphs, breaks=(first, second)), [], 0)
    assert _ids(chain) == ["g1", "g2", "b1", "g3", "b2"]


def test_a_break_inside_a_library_names_the_library_and_the_call(tmp_path):
    path, library = str(tmp_path / "m.py"), str(tmp_path / "site-packages" / "vqlib" / "codebook.py")
    brk = Break(path, 13, "GB0036", None, "unique", stack=(Frame(path, 13, "Q.forward"),),
                library=LibraryFrame("vqlib", library, 13, "Codebook.forward"))
    (node,) = build_chain(TargetResult("Q()", path, "ok", breaks=(brk,)), [], 0).breaks
    assert node.location == "in vqlib at codebook.py:13, reached from m.py:13"
