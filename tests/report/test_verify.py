"""`--verify --baseline`: per-target change against an earlier JSON report."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from breakscan.model import Break, Frame
from breakscan.report import RenderOptions, render
from breakscan.report.json_format import report_dict
from breakscan.report.verify import BaselineError, attach_baseline, load_baseline
from tests.report.factories import model_report


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "before.json"
    path.write_text(json.dumps(report_dict(model_report(tmp_path))))
    return path


def _edited(tmp_path):
    """The user guarded the print (the file gains a line) and the helper still breaks."""
    report = model_report(tmp_path)
    source = tmp_path / "model.py"
    source.write_text(source.read_text().replace('        print("x", x.shape)\n',
                                                 '        if not torch.compiler.is_compiling():\n'
                                                 '            print("x", x.shape)\n'))
    module = report.targets[0]
    path = module.path
    helper = Break(path, 5, "GB0124", "Unsupported Tensor.item() call", "Unsupported Tensor.item() call",
                   stack=(Frame(path, 14, "M.forward"), Frame(path, 5, "helper")), count=2)
    new = Break(path, 17, "GB0170", "Data-dependent branching", "Data-dependent branching",
                stack=(Frame(path, 17, "M.forward"),))
    report.targets[0] = replace(module, graph_count=3, breaks=(helper, new))
    report.targets = report.targets[:1]
    report.findings = report.findings[:1]
    return report


def test_breaks_fixed_new_and_remaining_per_target(tmp_path, baseline):
    report = attach_baseline(_edited(tmp_path), str(baseline))
    verification = report.verification
    assert (verification.findings_before, verification.findings_after) == (4, 1)
    module, looped = verification.targets
    assert (module.graphs_before, module.graphs_after) == (4, 3)
    assert (module.breaks_before, module.breaks_after) == (2, 2)
    assert [(b.gb_id, b.line, b.before, b.after) for b in module.fixed] == [("GB0059", 12, 1, 0)]
    assert [(b.gb_id, b.line) for b in module.new] == [("GB0170", 17)]
    assert [(b.gb_id, b.before, b.after) for b in module.remaining] == [("GB0124", 2, 2)]
    assert (looped.name, looped.graphs_after, len(looped.fixed)) == ("looped", None, 1)


def test_a_moved_line_is_matched_by_its_text(tmp_path, baseline):
    report = _edited(tmp_path)
    source = tmp_path / "model.py"
    source.write_text("# a new first line\n" + source.read_text())
    module = report.targets[0]
    moved = tuple(replace(b, line=b.line + 1, stack=tuple(replace(f, line=f.line + 1) for f in b.stack))
                  for b in module.breaks)
    report.targets[0] = replace(module, breaks=moved)
    delta = attach_baseline(report, str(baseline)).verification.targets[0]
    assert [(b.gb_id, b.line) for b in delta.remaining] == [("GB0124", 6)]


def test_renderers_show_the_change(tmp_path, baseline):
    report = attach_baseline(_edited(tmp_path), str(baseline))
    text = render("text", report, RenderOptions(width=100))
    assert "M(): graphs 4 → 3, breaks 2 → 2 (occurrences 3 → 3)" in text
    assert "fixed model.py:12 GB0059 Failed to trace builtin operator (×1)" in text
    assert "new   model.py:17 GB0170 Data-dependent branching (×1)" in text
    assert "still model.py:5 GB0124 Unsupported Tensor.item() call (×2 → ×2)" in text
    data = json.loads(render("json", report, RenderOptions()))
    assert data["verify"]["targets"][0]["breaks_after"] == 2
    assert "Changes since" in render("html", report, RenderOptions())


@pytest.mark.parametrize("content, message", [
    (None, "cannot read baseline"),
    ("{not json", "is not JSON"),
    ('{"findings": []}', "is not a breakscan JSON report"),
])
def test_unusable_baselines_say_why(tmp_path, content, message):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(BaselineError, match=message):
        load_baseline(str(path))
