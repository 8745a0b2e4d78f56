"""Precision cases for the standard-library rules (BS5xx), each checked against TorchDynamo 2.13
when written: the expected lines break, the other lines do not."""

import pytest

from tests.helpers import lint_source
from tests.lint._cases import case

FAMILY = "BS5"
CASES = [
    # a generator passed in breaks where it is used: given to a torch call, or seeded (GB0055, GB7650)
    case("""
        from typing import Optional

        import torch

        @torch.compile
        def fn(x, generator: Optional[torch.Generator] = None, seeded: torch.Generator = None):
            seeded.manual_seed(0)
            noise = torch.randn(x.shape, generator=generator)
            return x + noise + torch.randn(x.shape, generator=None)
    """, (7, "BS510"), (8, "BS510")),
    # random.uniform/randint/randrange are traced: tensor arithmetic is fine, Python use is not
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            r = random.uniform(0, 1)
            keep = r < 0.5
            y = x * r * 2.0 + random.uniform(0, 1)
            return y.clamp(max=random.uniform(0.5, 1.0))
    """),
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            r = random.uniform(0, 1)
            return x * (r * 2.0)
    """, (7, "BS503")),
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            n = int(random.uniform(1, 4))
            return x * n
    """, (6, "BS503")),
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            if x.shape[0] > random.randint(1, 3):
                return x * 2
            return x
    """, (6, "BS503")),
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            k = -random.randint(1, 3)
            return x * k
    """, (6, "BS503")),
    # an instance's random/uniform/randint/randrange are traced draws like the module functions
    case("""
        import random
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rng = random.Random(0)

            def forward(self, x):
                if self.rng.random() < 0.5:
                    return x * self.rng.uniform(0.5, 1.5)
                return x
    """, (10, "BS503"), entry="Model()"),
    case("""
        import random
        import torch

        @torch.compile
        def fn(x):
            return x * random.gauss(0, 1)
    """, (6, "BS502")),
    # copy: tensors, modules and mutable containers break; plain data and tuples do not
    case("""
        import copy
        import torch

        @torch.compile
        def fn(x):
            sizes = copy.deepcopy([2, 4])
            pair = copy.copy((x, x))
            return pair[0].view(sizes) + 1
    """),
    case("""
        import copy
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            kept = copy.deepcopy([y, y])
            return kept[0] + 1
    """, (7, "BS504")),
    case("""
        import copy
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            scales = copy.copy([1.0, 2.0])
            return y * scales[0]
    """, (7, "BS504")),
    # the table: os.getpid breaks, os.path.join / os.environ do not
    case("""
        import os
        import torch

        @torch.compile
        def fn(x):
            y = x + len(os.path.join("a", "b"))
            pid = os.getpid()
            return y * 2
    """, (7, "BS505")),
    # eval: TorchDynamo folds literals and plain arithmetic, not `**`, names or calls
    case("""
        import torch

        @torch.compile
        def fn(x):
            return x * eval("2 * 4") + eval("[1, 2]")[0]
    """),
    case("""
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            return y * eval("2 ** 3")
    """, (6, "BS506")),
    case("""
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            return y * eval("int(2)")
    """, (6, "BS506")),
    # a guarded timer is never traced
    case("""
        import time
        import torch

        @torch.compile
        def fn(x):
            if not torch.compiler.is_compiling():
                start = time.perf_counter()
            return x * 2
    """),
]


@pytest.mark.parametrize("item", CASES)
def test_stdlib_precision(tmp_path, item):
    outcome = lint_source(tmp_path, item.source)
    assert not outcome.errors
    assert {(f.line, f.rule) for f in outcome.findings if f.rule.startswith(FAMILY)} == item.expected
