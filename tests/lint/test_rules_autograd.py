"""Precision cases for the autograd rules (BS7xx), each checked against TorchDynamo 2.13 when
written: the expected lines break, the other lines do not."""

import pytest

from tests.helpers import lint_source
from tests.lint._cases import case

FAMILY = "BS7"
GRAD_INPUT = "torch.randn(8, requires_grad=True)"
CASES = [
    # reading autograd state and tensor hooks are traced
    case("""
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            y.register_hook(lambda g: g * 2)
            g = x.grad
            z = y if g is None else y + g
            return z * 2 if x.requires_grad else z
    """, inputs=GRAD_INPUT),
    # factories: requires_grad=False and Tensor.new_* are traced
    case("""
        import torch

        @torch.compile
        def fn(x):
            w = torch.ones(8, requires_grad=False)
            b = x.new_zeros(8, requires_grad=True)
            return x * w + b
    """),
    case("""
        import torch

        @torch.compile
        def fn(x, flag=True):
            y = x * 2
            w = torch.ones(8, requires_grad=flag)
            return y + w
    """, (6, "BS705")),
    # `p.requires_grad = ...` in a loop over parameters (GB7000 around GB0206)
    case("""
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)

            def forward(self, x):
                for p in self.lin.parameters():
                    p.requires_grad = False
                return self.lin(x)
    """, (10, "BS704"), entry="Model()"),
    # torch.func transforms are traced, torch.autograd.grad is not
    case("""
        import torch

        @torch.compile
        def fn(x):
            return torch.func.grad(lambda t: (t * t).sum())(x)
    """),
    case("""
        import torch
        from torch.autograd import grad

        @torch.compile
        def fn(x):
            y = (x * x).sum()
            (g,) = grad(y, [x])
            return g
    """, (7, "BS702"), inputs=GRAD_INPUT),
    # grad_fn of a tensor that requires grad
    case("""
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            if y.grad_fn is None:
                return y
            return y + 1
    """, (6, "BS707"), inputs=GRAD_INPUT),
]


@pytest.mark.parametrize("item", CASES)
def test_autograd_precision(tmp_path, item):
    outcome = lint_source(tmp_path, item.source)
    assert not outcome.errors
    assert {(f.line, f.rule) for f in outcome.findings if f.rule.startswith(FAMILY)} == item.expected


def test_requires_grad_from_a_variable_is_a_warning(tmp_path):
    outcome = lint_source(tmp_path, CASES[2].source)
    assert [f.severity for f in outcome.findings if f.rule == "BS705"] == ["warning"]
