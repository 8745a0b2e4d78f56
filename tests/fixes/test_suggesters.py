"""Suggesters on small sources: what each rewrites, and what it must leave alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from breakscan.config import Config
from breakscan.fixes import attach_fixes
from breakscan.lint.linter import lint_paths
from breakscan.model import Finding, Span
from tests.fixes.fixtures import load_cases
from tests.helpers import ROOT


def _fix(tmp_path, source: str, marker: str, rule: str = "BS000", gb_id: str = "GB0000",
         chain: tuple[str, ...] = ("fn",)):
    """The fix for a finding on the line holding `marker` (a whole-line span, as for a bare break)."""
    source = textwrap.dedent(source).lstrip("\n")
    path = tmp_path / "m.py"
    path.write_text(source)
    lines = source.splitlines()
    line = next(n for n, text in enumerate(lines, 1) if marker in text)
    finding = Finding(rule, "case", str(path), Span(line, 1, line, len(lines[line - 1]) + 1), "", (gb_id,), "error",
                      chain=chain)
    return attach_fixes([finding])[0].fix


def test_item_kept_as_tensor_only_when_combined_with_tensors(tmp_path):
    combined = _fix(tmp_path, """
        import torch
        def fn(x):
            return x * x.sum().item()
    """, ".item()", gb_id="GB0124")
    # A Python number becomes a 0-d tensor: exact edits, but unsafe (dtype promotion can differ).
    assert "+    return x * x.sum().detach()" in combined.diff and combined.applicability == "unsafe"
    assert [e.replacement for e in combined.edits] == ["x.sum().detach()"]
    returned = _fix(tmp_path, """
        import torch
        def fn(x):
            n = x.sum().item()
            return x, n
    """, ".item()", gb_id="GB0124")
    assert "capture_scalar_outputs = True" in returned.diff and returned.applicability == "unsafe"  # process-wide
    as_size = _fix(tmp_path, """
        import torch
        def fn(x):
            return torch.zeros(int(x.sum()))
    """, "zeros", gb_id="GB0124")
    assert "capture_scalar_outputs" in as_size.diff


def test_math_on_a_tensor_becomes_the_torch_function(tmp_path):
    fix = _fix(tmp_path, """
        import math
        import torch as T
        def fn(x):
            return x / math.sqrt(x.abs().sum())
    """, "math.sqrt", gb_id="GB0033")
    assert "+    return x / T.sqrt(T.as_tensor(x.abs().sum()).detach())" in fix.diff


def test_where_for_a_conditional_expression_and_for_if_return(tmp_path):
    ternary = _fix(tmp_path, """
        import torch
        def fn(x):
            return x * 2 if x.sum() > 0 else x - 1
    """, "if", gb_id="GB0170")
    assert "+    return torch.where(x.sum() > 0, x * 2, x - 1)" in ternary.diff
    returns = _fix(tmp_path, """
        import torch
        def fn(x):
            if x.sum() > 0:
                return x * 2
            return x - 1
    """, "if", gb_id="GB0170")
    assert sum(line.startswith("+") for line in returns.diff.splitlines()[2:]) == 1
    assert "+    return torch.where(x.sum() > 0, x * 2, x - 1)" in returns.diff
    augmented = _fix(tmp_path, """
        import torch
        def fn(x):
            if x.max() > 1:
                x /= 2
            return x
    """, "if", gb_id="GB0170")
    assert "+    x = torch.where(x.max() > 1, x / (2), x)" in augmented.diff


def test_elif_chains_and_side_effects_are_left_alone(tmp_path):
    assert _fix(tmp_path, """
        import torch
        def fn(x):
            if x.sum() > 0:
                x = x * 2
            elif x.sum() < -5:
                x = x - 1
            return x
    """, "if x", gb_id="GB0170") is None
    assert _fix(tmp_path, """
        import torch
        def fn(x):
            if x.sum() > 0:
                print(x)
                x = x * 2
                y = x + 1
            return x
    """, "if x", gb_id="GB0170") is None


def test_mask_reductions_only_for_masks_of_the_same_tensor(tmp_path):
    same = _fix(tmp_path, """
        import torch
        def fn(x):
            return x[(x > 0) & (x < 3)].mean()
    """, "mean", gb_id="GB0036")
    assert "+    return torch.where((x > 0) & (x < 3), x, 0).sum() / ((x > 0) & (x < 3)).sum()" in same.diff
    rows = _fix(tmp_path, """
        import torch
        def fn(x):
            return x[x.sum(dim=1) > 0].sum()
    """, "sum", gb_id="GB0036")
    assert "capture_dynamic_output_shape_ops = True" in rows.diff


def test_logging_guard_needs_a_statement_of_its_own(tmp_path):
    assert _fix(tmp_path, """
        import torch
        def fn(x):
            y = x + 1; print(y)
            return y
    """, "print", gb_id="GB0059") is None
    assert _fix(tmp_path, '''
        import torch
        def fn(x):
            print("""two
        lines""")
            return x
    ''', "print", gb_id="GB0059") is None


def test_a_layer_built_from_local_values_is_not_moved(tmp_path):
    assert _fix(tmp_path, """
        import torch
        from torch import nn
        class M(nn.Module):
            def forward(self, x):
                return nn.Linear(x.shape[-1], 4)(x)
    """, "nn.Linear", gb_id="GB0264", chain=("M.forward",)) is None


def test_named_layer_moves_with_its_name(tmp_path):
    fix = _fix(tmp_path, """
        import torch
        from torch import nn
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.Identity()

            def forward(self, x):
                norm = nn.LayerNorm(8)
                return norm(x)
    """, "nn.LayerNorm", gb_id="GB0264", chain=("M.forward",))
    assert "+        self.norm_2 = nn.LayerNorm(8)" in fix.diff
    assert "+        norm = self.norm_2" in fix.diff


def test_methods_and_roots_are_never_made_custom_ops(tmp_path):
    method = _fix(tmp_path, """
        import torch
        class Helper:
            def values(self, x):
                return torch.tensor(x.tolist())
        def fn(x):
            return Helper().values(x)
    """, "tolist", gb_id="GB0109", chain=("fn", "Helper.values"))
    assert "+    @torch.compiler.disable" in method.diff
    assert _fix(tmp_path, """
        import torch
        def fn(x):
            return torch.tensor(x.tolist())
    """, "tolist", gb_id="GB0109") is None


def test_a_function_defined_inside_another_is_not_disabled(tmp_path):
    # Decorating it would run `torch.compiler.disable` where it is defined: in the compiled code.
    fix = _fix(tmp_path, """
        import torch
        def fn(x):
            def helper(t):
                return torch.tensor(t.tolist())
            return helper(x)
    """, "tolist", gb_id="GB0109", chain=("fn", "fn.helper"))
    assert fix is None or "compiler.disable" not in (fix.diff or "")


def test_torch_is_imported_when_missing(tmp_path):
    fix = _fix(tmp_path, """
        def fn(x):
            return x * 2 if x.sum() > 0 else x
    """, "if", gb_id="GB0170")
    assert "+import torch" in fix.diff


def test_unreadable_files_keep_their_findings(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    findings = [Finding("BS101", "x", str(path), Span(1, 1, 1, 2), "", (), "error")
                for path in (broken, tmp_path / "missing.py")]
    assert attach_fixes(findings) == findings


def test_a_rule_span_gives_the_same_fix_as_the_line():
    """Where the lint reports the fixture's break, its exact span leads to the same fix as the
    bare line of a break no rule predicted."""
    checked = 0
    for case in load_cases():
        findings = [f for f in lint_paths([str(case.path)], Config(), jobs=1).findings if f.line == case.line]
        if findings:
            (finding,) = findings
            assert finding.rule == case.rule
            assert attach_fixes([finding])[0].fix.diff == attach_fixes([case.finding()])[0].fix.diff, case.name
            checked += 1
    assert checked >= 5


@pytest.mark.slow  # starts a Python process
def test_fixes_never_import_torch():
    case = load_cases()[0]
    code = ("import sys; from tests.fixes.fixtures import load_cases; from breakscan.fixes import attach_fixes; "
            "[attach_fixes([c.finding()]) for c in load_cases()]; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
    assert case.path.exists()


def _linted_fixes(tmp_path, source: str) -> dict[int, str]:
    """Line -> the suggested diff, for the lint's own findings (with the value kinds it recorded)."""
    path = tmp_path / "typed.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    outcome = lint_paths([str(path)], Config(), jobs=1)
    return {f.line: f.fix.diff or "" for f in attach_fixes(outcome.findings) if f.fix is not None}


def test_where_is_offered_only_on_tensor_operands(tmp_path):
    fixes = _linted_fixes(tmp_path, """
        import torch

        @torch.compile
        def fn(x, n: int):
            none = x if x.sum() > 0 else None
            numbers = 2 if x.sum() > 0 else 3
            counts = n if x.sum() > 0 else n + 1
            tensors = x if x.sum() > 0 else x * 2
            return none, numbers, counts, tensors
    """)
    assert "torch.where" not in fixes.get(5, "")  # None: torch.where raises TypeError
    assert "torch.where" not in fixes.get(6, "")  # Python numbers: the result would become a tensor
    assert "torch.where" not in fixes.get(7, "")  # an int parameter on both sides, as the lint knows
    assert "+    tensors = torch.where(x.sum() > 0, x, x * 2)" in fixes[8]


def test_cond_is_not_offered_on_a_tuple_comparison(tmp_path):
    fixes = _linted_fixes(tmp_path, """
        import torch

        @torch.compile
        def fn(x, y):
            if (x.sum(), y.sum()) == (0, 0):
                a = x + 1
                b = y + 1
            else:
                a = x - 1
                b = y - 1
            if x.sum() > 0:
                c = x + 1
                d = y + 1
            else:
                c = x - 1
                d = y - 1
            return a, b, c, d
    """)
    assert "torch.cond" not in fixes.get(5, "")
    assert "torch.cond(x.sum() > 0" in fixes[11]


def test_disable_is_never_offered_on_a_compiled_root(tmp_path):
    helper = """
        import torch

        def step(x):
            values = x.tolist()
            return torch.tensor([v * 2 for v in values])
        {compiled}
        def outer(x):
            return step(x) * 2
    """
    # Reached from `outer` only: the helper is made opaque. Also compiled itself: never.
    reached = _fix(tmp_path, helper.format(compiled=""), "tolist", rule="BS000", gb_id="GB0109", chain=("outer", "step"))
    assert '+@torch.library.custom_op("m::step", mutates_args=())' in reached.diff
    compiled = helper.format(compiled="compiled_step = torch.compile(step)\n")
    assert _fix(tmp_path, compiled, "tolist", rule="BS000", gb_id="GB0109", chain=("outer", "step")) is None
    module = """
        import torch

        class Detector(torch.nn.Module):
            def forward(self, x):
                values = x.tolist()
                return torch.tensor(values)
    """
    # A break from a run names the root by its frame (`forward`): still the compiled root.
    assert _fix(tmp_path, module, "tolist", rule="BS000", gb_id="GB0109", chain=("forward",)) is None
