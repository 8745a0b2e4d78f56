"""The value kinds' name tables agree with torch.Tensor as installed."""

import pytest

from breakscan.config import load_config
from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.linter import lint_paths
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


def test_one_construct_reached_from_two_files_is_one_finding_at_its_most_certain(tmp_path):
    from breakscan.config import Config
    from breakscan.lint.linter import lint_paths

    (tmp_path / "helpers.py").write_text("def scale(stats):\n    return stats.item()\n")
    (tmp_path / "known.py").write_text(
        "import torch\nfrom helpers import scale\n\n@torch.compile\ndef known(x):\n    return x * scale(x.sum())\n")
    (tmp_path / "guessed.py").write_text(
        "import torch\nfrom helpers import scale\nfrom somewhere_unreadable import make_stats\n\n"
        "@torch.compile\ndef guessed(x):\n    return x * scale(make_stats(x))\n")
    each = [lint_paths([str(tmp_path / name)], Config(), jobs=1).findings for name in ("known.py", "guessed.py")]
    assert [[(f.line, f.severity) for f in found] for found in each] == [[(2, "error")], [(2, "warning")]]
    both = lint_paths([str(tmp_path / "guessed.py"), str(tmp_path / "known.py")], Config(), jobs=1).findings
    assert [(f.path.endswith("helpers.py"), f.line, f.rule, f.severity) for f in both] == [(True, 2, "BS101", "error")]


def test_a_branch_test_is_reported_at_its_tensor_operand(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(x, training: bool):
    if training and x.sum() != 0:
        x = x * 2
    return x
""")
    [finding] = outcome.findings
    assert (finding.rule, finding.line, finding.span.column) == ("BS201", 5, 21)  # `x.sum() != 0`, not the flag


def test_a_value_that_may_be_none_stays_optional_after_a_branch_gives_it_a_tensor(tmp_path):
    # `adjoint_method` is what `method` is, a tensor or None: comparing the two is not a tensor's
    # truth on every path, so it is no certain break (TorchDynamo compares None with None).
    (tmp_path / "solver.py").write_text("""\
def odeint_adjoint(func, y0, *, method=None, adjoint_method=None, options=None):
    if adjoint_method is None:
        adjoint_method = method
    if adjoint_method != method and options is not None:
        raise ValueError("adjoint_options needed")
    return func(y0)
""")
    (tmp_path / "breakscan.toml").write_text('roots = ["odeint_adjoint"]\n')
    outcome = lint_paths([str(tmp_path / "solver.py")], load_config(str(tmp_path / "breakscan.toml")), jobs=1)
    assert [f for f in outcome.findings if f.severity == "error"] == []


def test_a_root_named_in_the_config_has_the_parameters_of_a_decorated_root(tmp_path):
    # `h` is an untyped parameter of the compiled function besides its input: as often a number
    # as a tensor, so `h > 1` is not reported; `y0.sum() > 0` is a tensor's truth.
    source = """\
import torch

def odeint(func, y0, h):
    if y0.sum() > 0:
        y0 = -y0
    if h > 1:
        return func(y0)
    return y0
"""
    (tmp_path / "solver.py").write_text(source)
    (tmp_path / "breakscan.toml").write_text('roots = ["odeint"]\n')
    configured = lint_paths([str(tmp_path / "solver.py")], load_config(str(tmp_path / "breakscan.toml")), jobs=1)
    decorated = lint_source(tmp_path, source.replace("def odeint", "@torch.compile\ndef odeint"), name="decorated.py")
    assert [(f.line, f.rule) for f in configured.findings] == [(4, "BS201")]
    assert [(f.line - 1, f.rule) for f in decorated.findings] == [(4, "BS201")]


def test_a_tensor_joined_with_an_optional_tensor_may_be_none():
    assert v.join(v.TENSOR, v.MAYBE_TENSOR) == v.MAYBE_TENSOR
    assert v.join(v.MAYBE_TENSOR, v.MASK) == v.MAYBE_TENSOR
    assert v.join(v.TENSOR, v.NONE) == v.MAYBE_TENSOR


def test_refinements_of_a_python_object_join_to_an_object_not_a_tensor():
    for refined in (v.VARYING_OBJECT, v.VARYING_LITERAL):
        assert v.join(refined, v.OTHER).name == v.OTHER.name
        assert v.join(v.OTHER, refined).name == v.OTHER.name
    assert v.join(v.NONE, v.NONE_ATTRIBUTE).name == v.NONE_ATTRIBUTE.name


def test_a_class_returned_by_a_function_builds_objects_whose_methods_are_followed(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

class Euler:
    def __init__(self, y):
        self.y = y

    def integrate(self, t):
        if (self.y * t).sum() > 0:
            return t
        return -t

class Heun(Euler):
    pass

def select(method):
    if method == "euler":
        return Euler
    return Heun

@torch.compile
def solve(x, t):
    solver_fn = select("euler")
    solver = solver_fn(x)
    return solver.integrate(t) + 1
""")
    assert sorted((f.line, f.rule) for f in outcome.findings) == [(8, "BS201"), (24, "BS209")]


def test_a_function_held_in_a_variable_is_followed_when_called(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

def linear_spline(x):
    return x[x > 0]

def quadratic_spline(x):
    return x * x

@torch.compile
def transform(x, tails):
    if tails is None:
        spline_fn = quadratic_spline
    else:
        spline_fn = linear_spline
    return spline_fn(x) + 1
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(4, "BS302")]


def test_a_union_of_tensor_and_number_is_what_the_callers_pass(tmp_path):
    outcome = lint_source(tmp_path, """\
from typing import Optional, Union

import torch

Scalar = Union[float, torch.Tensor]

def check(t0: Optional[Scalar], t1: Scalar, tol: Scalar = 0.0):
    if tol < 0.0:
        raise ValueError("tol")
    if t0 > t1:
        raise ValueError("order")
    return t1

@torch.compile
def solve(x, ts):
    return x * check(ts[0], ts[-1], tol=1e-3)
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(10, "BS201")]


def test_a_comprehension_is_valued_in_its_own_scope_when_a_rule_asks_first(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def increasing(ts):
    return all(x < y for x, y in zip(ts[:-1], ts[1:]))
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(5, "BS205")]


def test_an_annotated_base_is_any_subclass_in_the_package_both_belong_to(tmp_path):
    from breakscan.config import Config

    files = {
        "pkg/__init__.py": "",
        "pkg/_brownian/__init__.py": "from .base import BaseBrownian\nfrom .interval import BrownianInterval\n",
        "pkg/_brownian/base.py": "class BaseBrownian:\n    def __call__(self, ta, tb):\n        raise NotImplementedError\n",
        "pkg/_brownian/interval.py": (
            "from . import base\n\n\nclass BrownianInterval(base.BaseBrownian):\n"
            "    def __call__(self, ta, tb):\n        return float(tb) - float(ta)\n"),
        "pkg/_core/__init__.py": "",
        "pkg/_core/solver.py": (
            "import torch\n\nfrom .._brownian import BaseBrownian, BrownianInterval\n\n\nclass Solver:\n"
            "    def __init__(self, bm: BaseBrownian):\n        self.bm = bm\n\n"
            "    def step(self, t0, t1, y):\n        return y * self.bm(t0, t1)\n\n\n"
            "@torch.compile\ndef sdeint(y, ts):\n    return Solver(BrownianInterval()).step(ts[0], ts[1], y)\n"),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = lint_paths([str(tmp_path / "pkg")], Config(), jobs=1).findings
    assert sorted((f.path.rpartition("pkg/")[2], f.line, f.rule) for f in found) == [
        ("_brownian/interval.py", 6, "BS103"), ("_brownian/interval.py", 6, "BS103"), ("_core/solver.py", 16, "BS209")]


def test_a_none_check_or_a_string_comparison_the_lint_can_decide_short_circuits_the_test(tmp_path):
    outcome = lint_source(tmp_path, """\
from typing import Optional

import torch

def safe_divide(num, denom, zero_division: float = 0.0):
    if zero_division == "warn" and torch.any(denom == 0):
        print("zero division")
    return num / denom

def area(fpr, tpr, max_fpr: Optional[float] = None):
    if max_fpr is None or max_fpr == 1 or fpr.sum() == 0:
        return fpr
    return tpr

def clipped(fpr, limit: Optional[float] = None):
    if limit is not None and fpr.max() > limit:
        return fpr.clamp(max=limit)
    return fpr

@torch.compile
def run(x, y):
    return safe_divide(x, y) + area(x, y) + clipped(x, limit=0.5)
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(16, "BS201")]


def test_a_data_test_behind_a_python_condition_of_unknown_value_is_a_warning_naming_it(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(x, mask=None):
    if mask is not None and mask.any():
        x = x + 1
    if x.sum() > 0:
        x = x - 1
    return x
""")
    by_line = {f.line: f for f in outcome.findings}
    assert by_line[5].severity == "warning" and "`mask is not None`" in by_line[5].message
    assert by_line[7].severity == "error"


def test_a_multi_line_test_whose_jump_is_not_a_comparison_starts_at_its_statement(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(x, y):
    if (
        (x < 0.5).any()
        or (y < 0.5).any()
    ):
        x = x + 1
    if (
        x.sum() > y.sum()
    ):
        x = x - 1
    return x
""")
    assert [(f.line, f.span.end_line) for f in outcome.findings] == [(5, 7), (11, 11)]


def test_a_torch_call_that_breaks_whatever_it_is_given_is_a_warning_on_arguments_of_unknown_kind(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch
from elsewhere import load_pairs

@torch.compile
def fn(x):
    same = [torch.equal(a, b) for a, b in load_pairs()]
    return x * 2, torch.equal(x, x + 1), same
""")
    by_line = {f.line: f for f in outcome.findings if f.rule == "BS507"}
    assert by_line[6].severity == "warning" and "`a`" in by_line[6].message
    assert by_line[7].severity == "error"


def test_a_torch_class_or_function_dynamo_skips_breaks_whatever_it_is_given(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch
from elsewhere import dimension_of
from torch.quasirandom import SobolEngine

class Sampler(torch.nn.Module):
    def __init__(self, x):
        super().__init__()
        self.engine = SobolEngine(dimension=dimension_of(x))

    def forward(self, x):
        return x + self.engine.draw(2)

@torch.compile
def fn(x):
    return Sampler(x)(x)
""")
    by_line = {f.line: f.severity for f in outcome.findings if f.rule == "BS507"}
    assert by_line == {8: "error", 11: "error"}  # GB0008 on the skipped class and on its method


def test_a_builtin_stepping_through_a_generator_whose_items_break_breaks_at_the_call(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch
from elsewhere import load_pairs

@torch.compile
def fn(x, y):
    total = sum(t * 2 for t in (x, y))
    lazy = zip((t.sum() for t in (x, y)), (1, 2))
    if all(
        torch.equal(t, y) for t in (x, total)
    ):
        x = x + 1
    return x, lazy

@torch.compile
def unsure(x):
    return x * 2, any(torch.equal(a, b) for a, b in load_pairs())
""")
    generator_findings = {f.line: f.severity for f in outcome.findings if f.rule == "BS211"}
    assert generator_findings == {8: "error", 16: "warning"}


def test_an_element_of_a_tensor_used_as_an_index_is_a_warning_naming_the_tensor(tmp_path):
    """Probed: `x[..., idx]` breaks (GB0033) when `idx` is an element of a 1-d tensor made or given
    to the compiled code, by a loop over it or `perm[0]`; the lint cannot tell the
    tensor's dimensions (an element of a 2-d one is an index tensor), so it warns. An element of a
    list of tensors, `perm[k]` with a tensor `k`, or what is unpacked (as often a tuple of tensors
    taken for one: `t.sort(0)` gives values and indices), is not taken for one."""
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def looped(y, perm):
    out = y[0] * 0
    for idx in perm:
        out = out + y[..., idx]
    return out

@torch.compile
def picked(y, perm, k):
    first = perm[0]
    chosen = perm[k]
    a, b, c = perm
    return y[first] + y[chosen] + y[a]

@torch.compile
def listed(y, tensors: list[torch.Tensor]):
    return sum(y[t] for t in tensors)

@torch.compile
def sorted_pick(y, experts):
    _, order = experts.sort(0)
    return y[order]
""")
    found = {(f.line, f.rule): f for f in outcome.findings}
    assert sorted(found) == [(7, "BS104"), (15, "BS104")]
    assert all(f.severity == "warning" and "`perm` has one dimension" in f.message for f in found.values())


def test_map_with_a_lambda_gives_what_the_lambda_returns_for_each_element(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(lq, q):
    has_local, has_global = map(lambda x: x.shape[1] > 0, (lq, q))
    if has_local:
        lq = lq * 2
    first, second = map(lambda t: t.sum(), (lq, q))
    if first > 0:
        q = q + 1
    return lq + q
""")
    assert [(f.line, f.rule) for f in outcome.findings] == [(9, "BS201")]


def test_keyword_arguments_keep_what_each_key_holds(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

def blend(x, **options):
    if options["steps"] > 1:  # an int passed beside a tensor: no finding
        x = x * options.get("steps", 1)
    if options.get("gate").sum() > 0:  # the tensor passed as `gate`
        x = x + 1
    return x + options.pop("bias", 0.0)

@torch.compile
def fn(x):
    return blend(x, steps=2, gate=x, bias=x.mean())
""")
    assert [(f.line, f.rule, f.severity) for f in outcome.findings] == [(6, "BS201", "error")]


def test_a_key_the_lint_cannot_tell_among_tensors_and_numbers_is_unknown(tmp_path):
    outcome = lint_source(tmp_path, """\
import torch

def pick(x, name, **options):
    chosen = options[name]
    if chosen > 1:
        return x * 2
    return x

@torch.compile
def fn(x):
    return pick(x, "steps", steps=2, gate=x)
""")
    assert outcome.findings == []


def test_a_keyword_no_probe_passed_by_name_matches_the_positional_form_it_stands_for():
    assert v.probed_kind("torch.Tensor.max", [], {"dim": v.INT}) == v.TENSORS  # as x.max(-1)
    assert v.probed_kind("torch.max", [v.TENSOR], {"dim": v.INT}) == v.TENSORS  # as torch.max(x, 0)
    assert v.probed_kind("torch.max", [v.TENSOR], {"other": v.TENSOR}) == v.TENSOR  # as torch.max(x, y)
    assert v.probed_kind("torch.Tensor.max", [], {"dim": v.INT, "keepdim": v.BOOL}) is None  # nothing like it


def test_the_fields_of_torchs_named_tuples_are_tensors(tmp_path):
    assert {"values", "indices"} <= catalogue.result_fields()
    outcome = lint_source(tmp_path, """\
import torch

@torch.compile
def fn(x, pairs: dict):
    top = torch.topk(x, 2, dim=0).values
    kept = x[top > 0]
    return kept, pairs.values
""")
    assert not outcome.errors
    assert [(f.rule, f.line) for f in outcome.findings] == [("BS302", 6)]


def test_iterating_a_dict_gives_its_keys_not_its_values(tmp_path):
    # `features: Dict[str, Tensor]`: `sorted(features)` is a list of names, so indexing with one
    # reads no tensor (traced: no break).
    outcome = lint_source(tmp_path, """\
from typing import Dict
import torch

class Decoder(torch.nn.Module):
    def forward(self, features: Dict[str, torch.Tensor]):
        keys = sorted(features, key=lambda k: int(k[len("level"):]), reverse=True)
        x = features[keys[0]]
        for key in list(features)[1:]:
            x = x + features[key].mean()
        return x
""")
    assert outcome.findings == []
