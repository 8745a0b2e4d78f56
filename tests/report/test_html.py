"""The HTML report: one self-contained page; SVG chain, findings, fixes, marked source."""

from __future__ import annotations

from html.parser import HTMLParser

from breakscan.report import RenderOptions, render
from tests.report.factories import model_report

_VOID = {"meta", "br", "img", "input", "hr", "link", "path", "line", "rect"}


class _Page(HTMLParser):
    """Ids, links, resource attributes, and whether every element is closed."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.resources, self.tags, self.stack, self.broken = [], [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append(tag)
        if "id" in attributes:
            self.ids.append(attributes["id"])
        if tag == "a":
            self.links.append(attributes.get("href", ""))
        self.resources += [value for key, value in attrs if key in ("src", "srcset", "data", "poster")]
        self.resources += [attributes.get("href", "")] if tag == "link" else []
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.broken.append(tag)
        else:
            self.stack.pop()


def _page(tmp_path, **options) -> tuple[str, _Page]:
    text = render("html", model_report(tmp_path), RenderOptions(**options))
    page = _Page()
    page.feed(text)
    return text, page


def test_self_contained_and_well_formed(tmp_path):
    text, page = _page(tmp_path)
    assert not page.broken and not page.stack
    assert page.resources == []
    assert len(page.ids) == len(set(page.ids))
    assert "script" not in page.tags and "<style>" in text
    assert text.count("url(") == text.count("url(#arrow")  # only references inside the page
    external = [link for link in page.links if not link.startswith("#")]
    assert external and all(link.startswith("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb")
                            for link in external)


def test_every_internal_link_has_a_target(tmp_path):
    _, page = _page(tmp_path)
    internal = {link[1:] for link in page.links if link.startswith("#")}
    assert internal and internal <= set(page.ids)


def test_chain_is_drawn_as_svg_with_breaks_linked_to_findings(tmp_path):
    text, page = _page(tmp_path)
    assert page.tags.count("svg") == 2
    assert text.count('<g class="graph">') == 4 and text.count('<g class="break">') == 3
    assert '<a href="#f0"><g class="break">' in text  # the helper's .item() break -> its finding
    assert "✗ BS101 at model.py:5 (GB0124, ×2)" in text
    assert '<g class="eager">' in text


def test_findings_fixes_and_registry_links(tmp_path):
    text, _ = _page(tmp_path)
    assert '<article class="finding confirmed" id="f0">' in text
    assert '<span class="del">-    s = h.sum().item()</span>' in text
    assert '<span class="add">+    s = h.sum().detach()</span>' in text
    assert '<a href="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html">GB0124</a>' in text
    assert "<code>h.sum().detach()</code>" in text  # backticked code in prose


def test_source_marks_break_lines_and_graph_lines(tmp_path):
    text, page = _page(tmp_path)
    assert "s1-L5" in page.ids and "s1-L12" in page.ids
    assert '<span class="row hit confirmed" id="s1-L5">' in text
    assert '<a href="#f0" title="BS101">✗BS101</a>' in text
    # Each graph mark names its target: the page has two, and their graph numbers must not mix.
    assert '<span class="row" id="s1-L11"><span class="ln">11</span><span class="tag">T1:G1</span>' in text
    assert "graph <i>n</i> of target <i>t</i> computes; T1 = M(), T2 = " in text


def test_long_op_lists_are_summarised_by_whole_names_and_expandable():
    from breakscan.report.html import _ops_cell, op_summary

    ops = tuple(["linear", "gelu"] * 25)
    summary = op_summary(ops, 40)
    assert summary.endswith("more") and len(summary) <= 40
    assert all(name in ("linear", "gelu") for name in summary.split(", … +")[0].split(", "))  # no name cut short
    assert op_summary(("linear", "gelu"), 40) == "linear, gelu"
    cell = _ops_cell(ops)
    assert cell.startswith("<details><summary>linear, gelu, ") and ", ".join(ops) in cell


def test_ops_per_graph_and_graph_format(tmp_path):
    text, _ = _page(tmp_path, graph_format="dot")
    assert "<summary>ops per graph</summary>" in text
    assert "<td>Graph 2</td><td class=\"num\">1</td><td>line 5</td><td class=\"ops\">sum</td>" in text
    assert "digraph &quot;M()&quot;" in text


def test_max_per_rule_folds_the_rest_but_keeps_them_linkable(tmp_path):
    text, page = _page(tmp_path, max_per_rule=1)
    assert "<details><summary>1 more</summary>" in text
    assert {link[1:] for link in page.links if link.startswith("#")} <= set(page.ids)


def test_a_target_that_recompiled_has_a_compile_timeline(tmp_path):
    text = render("html", model_report(tmp_path))
    assert "compile timeline (3 compiles, 0.12 s)" in text
    assert "<code>len(xs) == 1</code>" in text and "the length of a list or tuple changed" in text
    assert "2 recompiles · 3 compiles, 0.1 s compiling" in text
