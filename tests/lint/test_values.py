"""The value kinds' name tables agree with torch.Tensor as installed."""

import pytest

from breakscan.lint import values as v
from tests.helpers import lint_source

torch = pytest.importorskip("torch")


def test_container_methods_are_not_tensor_methods():
    assert sorted(name for name in v.CONTAINER_METHODS if hasattr(torch.Tensor, name)) == []


def test_a_container_method_result_is_not_a_tensor(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

class Layers(torch.nn.Module):
    def forward(self, x, mems=None):
        mems = mems.copy() if mems is not None else [None, None]
        memory = mems.pop(0) if mems else None
        return x if memory is None else x + memory
""")
    assert outcome.findings == []


def test_a_finding_that_rests_on_an_unreadable_value_is_a_warning_naming_it(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch
from somewhere_unreadable import make_stats

@torch.compile
def fn(x):
    known = x.sum().item()
    guessed = make_stats(x).item()
    return x * known * guessed
""")
    by_line = {f.line: f for f in outcome.findings}
    assert by_line[6].severity == "error" and by_line[6].rule == "BS101"
    assert by_line[7].severity == "warning" and by_line[7].rule == "BS101"
    assert "`make_stats(x)` is a tensor" in by_line[7].message


def test_one_construct_reached_from_two_files_is_one_finding_at_its_most_certain(tmp_path):
    from breakscan.config import Config
    from breakscan.lint.linter import lint_paths

    (tmp_path / "helpers.py").write_text("def scale(stats):\n    return stats.item()\n")
    (tmp_path / "known.py").write_text(
        "import torch\nfrom helpers import scale\n\n@torch.compile\ndef known(x):\n    return x * scale(x.sum())\n")
    (tmp_path / "guessed.py").write_text(
        "import torch\nfrom helpers import scale\nfrom somewhere_unreadable import make_stats\n\n"
        "@torch.compile\ndef guessed(x):\n    return x * scale(make_stats(x))\n")
    each = [lint_paths([str(tmp_path / name)], Config(), jobs=1).findings for name in ("known.py", "guessed.py")]
    assert [[(f.line, f.severity) for f in found] for found in each] == [[(2, "error")], [(2, "warning")]]
    both = lint_paths([str(tmp_path / "guessed.py"), str(tmp_path / "known.py")], Config(), jobs=1).findings
    assert [(f.path.endswith("helpers.py"), f.line, f.rule, f.severity) for f in both] == [(True, 2, "BS101", "error")]


def test_a_branch_test_is_reported_at_its_tensor_operand(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(x, training: bool):
    if training and x.sum() != 0:
        x = x * 2
    return x
""")
    [finding] = outcome.findings
    assert (finding.rule, finding.line, finding.span.column) == ("BS201", 5, 21)  # `x.sum() != 0`, not the flag
