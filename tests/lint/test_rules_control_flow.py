"""Precision cases for the data-dependent control-flow rules (BS2xx) and how they meet the scalar
rules (BS1xx), each checked against TorchDynamo 2.13 when written: the lines flagged are exactly
the lines that break, and each break is reported by one rule."""

import textwrap

import pytest

from tests.helpers import expected_findings, lint_source

# (source, entry, inputs); `# expect: BSnnn` marks the lines a rule must flag, and that break.
CASES = [
    # One break per test, whatever the operators in it: reported by the statement's rule only.
    ("""
import torch

@torch.compile
def fn(x, flag: bool = True):
    if x.sum() > 0 and flag:  # expect: BS201
        x = x * 2
    y = x + 1 if flag and x.mean() > 0 else x  # expect: BS203
    return y
""", "fn", "torch.randn(8)"),
    ("""
import torch

@torch.compile
def fn(x):
    n = 0
    while x.max() > 0 and n < 3:  # expect: BS202
        x = x - 1
        n += 1
    return x
""", "fn", "torch.ones(8)"),
    # The scalar conversion breaks first; the test on its Python result does not break again.
    ("""
import torch

@torch.compile
def fn(x):
    if bool(x.any()):  # expect: BS103
        x = x * 2
    if any(x > 0):  # expect: BS205
        x = x + 1
    return x
""", "fn", "torch.randn(8)"),
    ("""
import torch

@torch.compile
def fn(x):
    rows = x.view(4, 2)
    kept = [r for r in rows if r is not None and r.sum() > -100]  # expect: BS206
    return torch.stack(kept)
""", "fn", "torch.randn(8)"),
    # `and`/`or` return their last operand untested; an assert turns its last test into a runtime check.
    ("""
import torch

@torch.compile
def fn(x, mask=None):
    x = x + 1
    masked = mask is not None and mask.any()
    assert x.shape[0] > 0 and x.isfinite().all()
    either = (x.any() and masked) or x  # expect: BS204
    return either * 2
""", "fn", "(torch.randn(8), torch.randn(8) > 0)"),
    ("""
import torch

@torch.compile
def fn(x):
    x = x + 1
    return not x.isfinite().all()  # expect: BS204
""", "fn", "torch.randn(8)"),
    # A root's untyped parameters are assumed tensors but are mostly numbers (Swin's H, W): arithmetic
    # and tests on them alone are not flagged; a tensor method on them still is.
    ("""
import math
import torch
import torch.nn.functional as F
from torch import nn

class WindowBlock(nn.Module):
    def __init__(self, window=4):
        super().__init__()
        self.window = window

    def forward(self, x, H, W):
        B, L, C = x.shape
        x = x.view(B, H, W, C)
        pad_r = (self.window - W % self.window) % self.window
        pad_b = (self.window - H % self.window) % self.window
        if pad_r > 0 or pad_b > 0:
            x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        Hp = int(math.ceil(H / self.window)) * self.window
        windows = x.view(B, Hp // self.window, self.window, -1, self.window, C)
        return windows.sum() if H > 2 else windows.mean()
""", "WindowBlock()", "(torch.randn(2, 30, 4), 5, 6)"),
    # The first parameter is the root's input: a tensor, even compared with a Python number.
    ("""
import torch

@torch.compile
def fn(loss, limit):
    if loss > limit:  # expect: BS201
        return loss * 0
    return loss
""", "fn", "(torch.tensor(5.0), 10.0)"),
    # A global only a function creates breaks where it is first read (the break applies the
    # assignments traced before it); attributes and keywords of that name are not reads of it.
    ("""
import torch

def configure(net):
    global scale, shift
    scale = 2.0
    shift = len(net)

class Model(torch.nn.Module):
    def forward(self, x):
        configure([1, 2])
        y = torch.nn.functional.dropout(x, p=0.0, training=self.training)
        if shift > 1:  # expect: BS212
            y = y * scale
        return y.scale if hasattr(y, "scale") else y + shift
""", "Model()", "torch.randn(8)"),
    # Defined at module level, or by a setter the module calls at import: it always exists.
    ("""
import torch

shift = 0

def configure():
    global shift, scale
    shift = 1
    scale = 2.0

configure()

@torch.compile
def fn(x):
    configure()
    return x * scale + shift
""", "fn", "torch.randn(8)"),
    # Conditions on Python state, shapes and dtypes do not break.
    ("""
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x, mask=None):
        if self.training and x.dim() == 3:
            x = x * 2
        i = 0
        while i < x.shape[0] // 4:
            i += 1
        y = x.float() if x.dtype == torch.float16 else x
        if not mask:
            y = y + 1
        return y * i
""", "Model()", "torch.randn(8)"),
]


@pytest.mark.parametrize("source,entry,inputs", CASES)
def test_control_flow_rules(tmp_path, source, entry, inputs):
    outcome = lint_source(tmp_path, textwrap.dedent(source).lstrip("\n"))
    assert not outcome.errors
    found = {(f.line, f.rule) for f in outcome.findings if f.rule[:3] in ("BS1", "BS2")}
    assert found == expected_findings(tmp_path / "example.py")
