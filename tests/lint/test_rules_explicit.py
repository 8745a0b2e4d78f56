"""Precision cases for the explicit-break rules (BS9xx), each checked against TorchDynamo 2.13
when written: the expected lines break, the other lines do not."""

import pytest

from tests.helpers import lint_source
from tests.lint._cases import case

FAMILY = "BS9"
CASES = [
    # a submodule whose forward is disabled, and a disabled function reached through a helper
    case("""
        import torch
        from torch import nn

        @torch.compiler.disable
        def dump(t):
            return t.sum()

        def helper(t):
            return dump(t) + 1

        class Inner(nn.Module):
            @torch.compiler.disable
            def forward(self, x):
                return x * 2

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x):
                y = self.inner(x)
                return helper(y) * y
    """, (9, "BS902"), (22, "BS902"), entry="Model()"),
    # referring to a disabled function, or allowing one in the graph, is not a call to it
    case("""
        import torch

        @torch.compiler.disable
        def dump(t):
            return t.sum()

        @torch.compiler.allow_in_graph
        def scale(t):
            return t * 2

        @torch.compile
        def fn(x):
            hook = dump
            return scale(x) + 1
    """),
]


@pytest.mark.parametrize("item", CASES)
def test_explicit_precision(tmp_path, item):
    outcome = lint_source(tmp_path, item.source)
    assert not outcome.errors
    assert {(f.line, f.rule) for f in outcome.findings if f.rule.startswith(FAMILY)} == item.expected
