"""Precision cases for the data-dependent output shape rules (BS3xx), each checked against
TorchDynamo 2.13 when written: flagged lines break with GB0036/GB0246/GB0033, the others do not."""

import textwrap

import pytest

from tests.helpers import lint_source

HEADER = "import torch\nimport torch.nn.functional as F\n\n@torch.compile\ndef fn(x, idx):\n"


def findings(tmp_path, body: str, header: str = HEADER, indent: str = "    ") -> set[tuple[int, str]]:
    source = header + textwrap.indent(textwrap.dedent(body).strip("\n"), indent) + "\n"
    outcome = lint_source(tmp_path, source)
    assert not outcome.errors
    offset = header.count("\n")
    return {(f.line - offset, f.rule) for f in outcome.findings if f.rule.startswith("BS3")}


@pytest.mark.parametrize("body,expected", [
    # the old `mask` is read on the right-hand side before the name is rebound
    ("mask = x > 0\nmask = x[mask]\nreturn mask", {(2, "BS302")}),
    ("m = x > 0\nm2 = ~m\nreturn x[m2]", {(3, "BS302")}),
    ("m = x > 0\nm &= x < 2\nreturn x[m]", {(3, "BS302")}),
    ("y = x.view(2, 4)\nvalid = (y > 0).any(-1)\nreturn y[valid, :]", {(3, "BS302")}),
    ("m = torch.zeros(8, dtype=torch.bool)\nreturn x[m]", {(2, "BS302")}),
    ("m = torch.tril(torch.ones(8, 8, dtype=torch.bool))\nreturn x.expand(8, 8)[m]", {(2, "BS302")}),
    ("m = (x > 0).to(x.device)\nreturn x[..., m]", {(2, "BS302")}),
    ("y = x.clone()\ny[y < -1] += 1\nreturn y", {(2, "BS302")}),
    ("return x[torch.isnan(x) | torch.isinf(x)]", {(1, "BS302")}),
])
def test_boolean_mask_reads_are_flagged(tmp_path, body, expected):
    assert findings(tmp_path, body) == expected


@pytest.mark.parametrize("body", [
    "y = x.clone()\ny[y > 0] = 0\nreturn y",                       # a write keeps the shape
    "order = x.argsort()\nreturn x[order][idx] + x[idx] + x[order]",  # integer index tensors
    "m = x > 0\nreturn x[m.long()]",
    "m = x > 0\nm = m.to(torch.float32)\nreturn x * m",
    "m = x > 0\nfor m in [1, 2]:\n    x = x + x[m]\nreturn x",     # rebound by the loop
    "return x[x.shape[0] - 1] + x[x.shape[0] > 2]",                # Python ints and bools
])
def test_static_indexing_is_not_flagged(tmp_path, body):
    assert findings(tmp_path, body) == set()


def test_bool_tensor_annotation_marks_a_parameter_as_mask(tmp_path):
    header = "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x, mask: torch.BoolTensor, idx: torch.Tensor):\n"
    assert findings(tmp_path, "return x[mask] + x[idx]", header, indent=" " * 8) == {(1, "BS302")}


@pytest.mark.parametrize("body,expected", [
    ("return torch.where(x > 0)", {(1, "BS301")}),
    ("return torch.where(condition=x > 0)", {(1, "BS301")}),
    ("return torch.where(x > 0, x, 0.0) + x.where(x > 0, 0.0)", set()),
    ("return torch.Tensor.nonzero(x) + x.argwhere()", {(1, "BS301")}),
    ("return x.masked_select(x > 0)", {(1, "BS301")}),
    ("return torch.nonzero_static(x, size=4) + torch.count_nonzero(x)", set()),
    ("return x.unique(sorted=False), torch.unique_consecutive(x)", {(1, "BS303")}),
    ("return idx.bincount(minlength=4)", {(1, "BS304")}),
    ("return torch.repeat_interleave(idx)", {(1, "BS305")}),
    ("return x.repeat_interleave(idx, dim=0, output_size=12)", set()),
    ("return x.repeat_interleave(2), x.repeat_interleave(x.shape[0])", set()),
    ("return F.one_hot(idx, num_classes=-1)", {(1, "BS306")}),
    ("return F.one_hot(idx, x.shape[0] // 2) + F.one_hot(idx, 4)", set()),
])
def test_dynamic_shape_ops(tmp_path, body, expected):
    assert findings(tmp_path, body) == expected


def test_other_libraries_unique_is_not_flagged(tmp_path):
    header = "import numpy as np\nimport pandas as pd\nimport torch\n\n@torch.compile\ndef fn(x):\n"
    body = "keys = np.unique(np.arange(3))\nnames = pd.Series([1, 2]).unique()\nreturn x * 2"
    assert findings(tmp_path, body, header) == set()
