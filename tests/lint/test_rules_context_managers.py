"""Precision cases for the context-manager rule (BS6xx), each checked against TorchDynamo 2.13
when written: the expected lines break, the other lines do not."""

import pytest

from tests.helpers import lint_source
from tests.lint._cases import case

FAMILY = "BS6"
CASES = [
    case("""
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel

        @torch.compile
        def fn(x):
            with torch.cuda.amp.autocast(enabled=False), torch.inference_mode():
                y = x * 2
            with sdpa_kernel([SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
                y = y + 1
            with torch.set_grad_enabled(True), torch.enable_grad():
                return y.relu()
    """),
    # one unsupported item in a multi-item `with` is enough
    case("""
        import torch

        @torch.compile
        def fn(x):
            with torch.no_grad(), torch.device("cpu"):
                y = x + 1
            return y
    """, (5, "BS601")),
    case("""
        import threading
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lock = threading.RLock()
                self.helper = None

            def forward(self, x):
                with self.lock:
                    return x + 1
    """, (11, "BS601"), entry="Model()"),
    case("""
        import torch

        @torch.compile
        def fn(x):
            y = x * 2
            with torch.backends.cudnn.flags(enabled=False):
                z = y + 1
            return z
    """, (6, "BS601")),
]


@pytest.mark.parametrize("item", CASES)
def test_context_manager_precision(tmp_path, item):
    outcome = lint_source(tmp_path, item.source)
    assert not outcome.errors
    assert {(f.line, f.rule) for f in outcome.findings if f.rule.startswith(FAMILY)} == item.expected


def test_a_user_context_manager_made_before_the_compiled_code_cannot_be_entered(tmp_path):
    """Probed: TorchDynamo "does not know how to enter" an object of a user class that exists
    before the compiled code runs (an attribute, a module-level object), and skips the whole
    function (the `.item()` after it never breaks); one built in the compiled code is entered, and
    a helper's parameter may be such a one."""
    outcome = lint_source(tmp_path, """\
import torch

class Scope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

GLOBAL_SCOPE = Scope()

def helper(x, scope):
    with scope:
        return x + 1

@torch.compile
def module_level(x):
    with GLOBAL_SCOPE:
        return x * 2

@torch.compile
def built_here(x):
    with Scope():
        x = x * 2
    return helper(x, Scope())

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scope = Scope()

    def forward(self, x):
        with self.scope:
            x = x * 2
        return x.item()
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(18, "BS601"), (33, "BS601")]
