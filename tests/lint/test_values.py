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
