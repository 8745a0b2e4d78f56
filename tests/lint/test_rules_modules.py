"""Precision cases for the nn.Module rules (BS8xx), each checked against TorchDynamo 2.13 when
written: the expected lines break, the other lines do not."""

import pytest

from tests.helpers import lint_source
from tests.lint._cases import case

FAMILY = "BS8"
CASES = [
    # normalisation without affine parameters and parameter-free layers are traced
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def forward(self, x):
                norm = nn.LayerNorm(8, elementwise_affine=False)
                inst = nn.InstanceNorm1d(8)
                group = nn.GroupNorm(2, 8, affine=False)
                y = group(inst(x.view(1, 8, 1).expand(1, 8, 4)))
                return norm(y.mean(-1)) + nn.Softmax(dim=-1)(x)
    """, entry="Model()"),
    # the break is at the parameterised layer inside a multi-line container
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def forward(self, x):
                seq = nn.Sequential(
                    nn.ReLU(),
                    nn.Linear(8, 8),
                )
                return seq(x)
    """, (8, "BS801"), entry="Model()"),
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def forward(self, x):
                y = x * 2
                norm = nn.LayerNorm(8, elementwise_affine=True)
                return norm(y)
    """, (7, "BS801"), entry="Model()"),
    # a project module built in compiled code: TorchDynamo cannot finish an __init__ that creates
    # parameters (GB0119 on super().__init__(), GB0264 on the layer); a parameter-free one is traced
    case("""
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.dim = dim
                self.norm = nn.LayerNorm(dim)

            def forward(self, x):
                return self.norm(x)

        class Solver(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

        @torch.compile
        def fn(x):
            solver = Solver(torch.sin)
            return Head(8)(solver.model(x))
    """, (6, "BS801"), (8, "BS801")),
    # ... nor one built inside a `with` TorchDynamo cannot enter (GB0142 at the with, then
    # GB0119 on super().__init__(): k-diffusion's `with tqdm(...) as bar: DPMSolver(model, ...)`)
    case("""
        import torch
        from torch import nn

        class Solver(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def step(self, x):
                return self.model(x) * 2

        @torch.compile
        def fn(x):
            with torch.device("cpu"):
                solver = Solver(torch.sin)
                return solver.step(x) + 1
    """, (6, "BS801")),
    # hooks: on tensors (parameters included) traced, on modules not
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)

            def forward(self, x):
                self.lin.weight.register_hook(lambda g: g)
                return self.lin(x)
    """, entry="Model()"),
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)

            def forward(self, x):
                layer = self.lin
                layer.register_full_backward_hook(lambda m, gi, go: None)
                return x * 2
    """, (11, "BS803"), entry="Model()"),
    # RNN cells are traced, the full RNN modules are not
    case("""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = nn.LSTMCell(8, 8)
                self.rnn = nn.RNN(8, 8)

            def forward(self, x):
                h, c = self.cell(x[0])
                out, _ = self.rnn(x)
                return out + h
    """, (12, "BS804"), entry="Model()", inputs="torch.randn(2, 3, 8)"),
]


@pytest.mark.parametrize("item", CASES)
def test_modules_precision(tmp_path, item):
    outcome = lint_source(tmp_path, item.source)
    assert not outcome.errors
    assert {(f.line, f.rule) for f in outcome.findings if f.rule.startswith(FAMILY)} == item.expected


def test_wrapping_an_input_as_it_came_is_fine_a_helpers_parameter_a_warning_anything_else_an_error(tmp_path):
    """Probed under TorchDynamo 2.13: `nn.Parameter(x)` of the compiled function's own input is
    traced; of a tensor made inside, or of the input once rebound, it breaks (GB0264). A helper's
    parameter is an input only when the compiled function passed its own along."""
    outcome = lint_source(tmp_path, """import torch
from torch import nn


def wrap(t):
    return nn.Parameter(t)


@torch.compile
def fn(x):
    a = nn.Parameter(x)
    b = nn.Parameter(x * 2)
    x = x.detach()
    c = nn.Parameter(x)
    return a, b, c, wrap(x)
""")
    assert [(f.line, f.rule, f.severity) for f in outcome.findings] == [
        (6, "BS802", "warning"), (12, "BS802", "error"), (14, "BS802", "error")]
