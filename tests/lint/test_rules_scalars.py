"""Precision cases for the scalar-extraction rules (BS1xx), each checked against TorchDynamo 2.13
when written: the lines flagged are exactly the lines that break (the inputs are in CASES)."""

import textwrap

import pytest

from tests.helpers import expected_findings, lint_source

# (source, entry, inputs); `# expect: BS1nn` marks the lines a rule must flag, and that break.
CASES = [
    # Conversions of shapes, sizes and numbers are Python values.
    ("""
import math
import torch

@torch.compile
def fn(x):
    n = int(x.shape[0]) + int(x.numel() / 2) + float(x.size(-1))
    return x * math.sqrt(n) * math.prod(x.shape) + x[: x.shape[0] // 2].sum()
""", "fn", "torch.randn(8)"),
    # A root's untyped parameters are usually Python numbers: int(H), range(steps), x[:n], arange(n).
    ("""
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x, steps, n):
        for _ in range(steps):
            x = x * 0.5
        return x[:n] * int(steps) + torch.arange(n).sum()
""", "Model()", "(torch.randn(8), 2, 4)"),
    # .item() inside a condition is one break, reported once (BS101, not BS201).
    ("""
import torch

@torch.compile
def fn(x):
    if x.sum().item() > 0:  # expect: BS101
        return x * 2
    return x
""", "fn", "torch.randn(8)"),
    # Reading a tensor element into Python: each construct its own rule.
    ("""
import math
import torch

@torch.compile
def fn(x):
    best = x.argmax()
    a = x[best]  # expect: BS104
    b = math.log(x.abs().sum())  # expect: BS105
    c = float(x.mean())  # expect: BS103
    return a * b * c
""", "fn", "torch.randn(8)"),
    # 1-d index tensors, reductions over a dim, an input's own 0-d index: advanced indexing, no break.
    ("""
import torch

@torch.compile
def fn(x, i):
    rows = x.view(2, 4)
    best = rows.argmax(dim=1)
    order = x.argsort()
    return x[order] + rows[:, best].sum() + x[i]
""", "fn", "(torch.randn(8), torch.tensor(3))"),
    # 0-d arithmetic stays 0-d; a Python list indexed by a tensor.
    ("""
import torch

@torch.compile
def fn(x):
    i = (x > 0).sum() // 2
    scales = [0.5, 1.0, 2.0, 4.0, 8.0]
    return x[i - 1] * scales[i]  # expect: BS104
""", "fn", "torch.randn(8)"),
    # Tensor arguments that torch ops accept as tensors (fill values, bounds) are not sizes.
    ("""
import torch

@torch.compile
def fn(x):
    a = torch.full((2,), x.sum())
    b = torch.linspace(x.min(), x.max(), 5)
    return a.sum() + b + x.clamp(max=x.mean()).sum()
""", "fn", "torch.randn(8)"),
    # Sizes read from tensor data: the first use of `k` breaks; after it `k` is an input of the
    # resumed graph, which TorchDynamo reads as a Python int without breaking again.
    ("""
import torch

@torch.compile
def fn(x):
    k = (x > 0).sum() * 0 + 2
    top = x.topk(k=k).values  # expect: BS108
    return top.sum() + torch.zeros(k).sum() + x.new_ones((k, 2)).sum()
""", "fn", "torch.randn(8)"),
    # .tolist() / .numpy() only on tensors; builtins with Python numbers.
    ("""
import torch

@torch.compile
def fn(x):
    dims = list(x.shape)
    return x.reshape(dims) * pow(2, 3) + len(range(x.shape[0]))
""", "fn", "torch.randn(8)"),
]


@pytest.mark.parametrize("source,entry,inputs", CASES)
def test_scalar_rules(tmp_path, source, entry, inputs):
    source = textwrap.dedent(source).lstrip("\n")
    outcome = lint_source(tmp_path, source)
    assert not outcome.errors
    found = {(f.line, f.rule) for f in outcome.findings if f.rule[:3] in ("BS1", "BS2")}
    assert found == expected_findings(tmp_path / "example.py")
