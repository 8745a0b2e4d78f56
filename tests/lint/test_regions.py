"""Which code the lint treats as compiled: roots, the call graph out of them, and dead branches."""

import textwrap

from breakscan.cache import LintCache
from breakscan.config import Config
from breakscan.lint.linter import lint_paths
from tests.helpers import expected_findings, lint_source


def lines(outcome, rule="BS101"):
    return sorted(f.line for f in outcome.findings if f.rule == rule)


def src(text):
    return textwrap.dedent(text).lstrip("\n")


def test_forward_of_module_subclass_through_aliases(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch as T
        from torch import nn as tnn
        from torch.nn import Module

        class A(tnn.Module):
            def forward(self, x):
                return x.sum().item()

        class B(Module):
            def forward(self, x):
                return x.sum().item()

        class C(T.nn.Module):
            def forward(self, x):
                return x.sum().item()

        class NotAModule:
            def forward(self, x):
                return x.sum().item()
    """))
    assert lines(outcome) == [7, 11, 15]


def test_subclass_of_scanned_module_in_another_file(tmp_path):
    (tmp_path / "base.py").write_text("import torch.nn as nn\n\nclass Base(nn.Module):\n    pass\n")
    (tmp_path / "model.py").write_text(src("""
        from base import Base

        class Model(Base):
            def forward(self, x):
                return x.max().item()
    """))
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    assert [(f.path.rsplit("/", 1)[1], f.line) for f in outcome.findings] == [("model.py", 5)]


def test_compile_decorator_and_wrapper_calls(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        @torch.compile
        def decorated(x):
            return x.sum().item()

        @torch.compile(mode="reduce-overhead")
        def decorated_with_options(x):
            return x.sum().item()

        def wrapped(x):
            return x.sum().item()

        def never_compiled(x):
            return x.sum().item()

        fast = torch.compile(wrapped)

        class Plain:
            def forward(self, x):
                return x.sum().item()

        def main():
            model = Plain()
            compiled = torch.compile(model)
    """))
    assert lines(outcome) == [5, 9, 12, 21]


def test_disabled_functions_are_not_roots(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        @torch.compile
        @torch.compiler.disable
        def off(x):
            return x.sum().item()

        class M(torch.nn.Module):
            @torch._dynamo.disable
            def forward(self, x):
                return x.sum().item()
    """))
    assert lines(outcome) == []


def test_is_compiling_guards_skip_the_eager_branch(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch._dynamo import is_compiling

        class M(torch.nn.Module):
            def forward(self, x):
                if not torch.compiler.is_compiling():
                    print(x.sum().item())
                if torch.compiler.is_compiling():
                    y = x
                else:
                    y = x.sum().item()
                if is_compiling() or x.sum().item():
                    pass
                if torch.jit.is_scripting():
                    x.sum().item()
                return x.max().item()
    """))
    assert lines(outcome) == [16]


def test_helpers_are_reported_at_their_line_with_the_chain(tmp_path):
    (tmp_path / "utils.py").write_text(src("""
        def scale(t):
            return t / t.abs().max().item()

        def unused(t):
            return t.sum().item()
    """))
    (tmp_path / "model.py").write_text(src("""
        import torch
        from utils import scale

        class Block(torch.nn.Module):
            def forward(self, x):
                return self._inner(x)

            def _inner(self, x):
                return scale(x)

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)
    """))
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    assert len(outcome.findings) == 1
    finding = outcome.findings[0]
    assert finding.path.endswith("utils.py") and finding.line == 2
    assert finding.chain == ("Block.forward", "Block._inner", "scale")


def test_submodules_in_module_lists_are_followed(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        import torch.nn as nn

        class Layer(nn.Module):
            def forward(self, x):
                return x.sum().item()

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer() for _ in range(3)])

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x
    """))
    assert lines(outcome) == [6]


def test_plain_objects_called_run_their_dunder_call(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        import torch.nn as nn

        class Sampler:
            def __call__(self, idx):
                return idx.sum().item()

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.sampler = Sampler()

            def forward(self, x):
                return self.sampler(x)
    """))
    assert [(f.line, f.chain) for f in outcome.findings] == [(6, ("Head.forward", "Sampler.__call__"))]


def test_annotations_beat_call_site_guesses_and_tracing_branches_are_dead(tmp_path):
    outcome = lint_source(tmp_path, src("""
        from typing import Tuple
        import torch
        import torchvision

        def part(x):
            return x * 2, (x.shape[0] + 1, x.shape[1] + 1)

        def unpart(x, pad_hw: Tuple[int, int]):
            hp, wp = pad_hw
            if hp > x.shape[0]:
                return x + 1
            return x

        @torch.compile
        def fn(x):
            if torchvision._is_tracing():
                return x.sum().item()
            y, pad_hw = part(x)
            return unpart(y, pad_hw)
    """))
    assert outcome.findings == []


def test_helper_parameters_take_the_kinds_callers_pass(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        def pick(value, flag):
            if flag:
                return value
            if value.sum() > 0:
                return value
            return -value

        @torch.compile
        def fn(x):
            return pick(x, False)
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(6, "BS201")]


def test_a_branch_a_helper_leaves_by_a_literal_flag_is_not_traced(tmp_path):
    # TorchDynamo specialises the bool: `pick(x, True)` returns at `if flag:`, and what follows
    # is never traced; the same for a parameter every call site leaves at `False`.
    outcome = lint_source(tmp_path, src("""
        import torch

        def pick(value, flag, strict=False):
            if flag:
                return value
            if not strict:
                return -value
            print("strict")
            return value

        @torch.compile
        def fn(x):
            return pick(x, True) + pick(x, False)
    """))
    assert outcome.findings == []


def test_config_roots(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def step(x):\n    return x.sum().item()\n")
    assert lint_paths([str(path)], Config(), jobs=1).findings == []
    found = lint_paths([str(path)], Config(roots=("step",)), jobs=1).findings
    assert [f.line for f in found] == [2]


def test_config_roots_name_inherited_methods_and_type_annotated_objects(tmp_path):
    """`Ball.dist` runs the base class's `dist` on a Ball; a root's parameter annotated with a
    scanned class holds one, and an attribute `__init__` keeps from a tensor parameter is a tensor
    (plain, torchtyping's `TensorType[...]` or jaxtyping's `Float[Tensor, ...]`)."""
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import torch
        from jaxtyping import Float
        from torchtyping import TensorType

        class Manifold(torch.nn.Module):
            def dist(self, x):
                if torch.all(x > 0):  # expect: BS201
                    return x
                return -x

        class Ball(Manifold):
            pass

        class Problem:
            def __init__(self, y0: TensorType["batch", "dim"], t_eval: Float[torch.Tensor, "batch time"], n: int):
                self.y0 = y0
                self.t_eval = t_eval
                self.n = n

        class Solver(torch.nn.Module):
            def solve(self, problem: Problem):
                at_start = problem.t_eval[:, 0] == 0
                if problem.n > 1:
                    return problem.y0[at_start]  # expect: BS302
                return problem.y0
    """).lstrip("\n"))
    found = lint_paths([str(path)], Config(roots=("Ball.dist", "Solver.solve")), jobs=1).findings
    assert {(f.line, f.rule) for f in found} == expected_findings(path)


def test_unreachable_code_is_reported_as_info_only_when_asked(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def step(x):\n    return x.sum().item()\n\nimport torch\n")
    assert lint_paths([str(path)], Config(), jobs=1).findings == []
    found = lint_paths([str(path)], Config(), jobs=1, unreachable=True).findings
    assert [(f.line, f.severity) for f in found] == [(2, "info")]


def test_disabled_wrappers_across_modules_and_the_wrapped_function_stays_traceable(tmp_path):
    (tmp_path / "kernels.py").write_text(
        "import torch\n\ndef _ref(x):\n    return x * 2\n\neager_kernel = torch.compiler.disable(_ref)\n")
    (tmp_path / "model.py").write_text(src("""
        import torch
        from kernels import eager_kernel, _ref

        class M(torch.nn.Module):
            def forward(self, x):
                y = _ref(x)
                return eager_kernel(y)
    """))
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    assert [(f.path.rsplit("/", 1)[1], f.line, f.rule) for f in outcome.findings] == [("model.py", 7, "BS902")]


def test_tuple_returns_keep_their_positions(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        def part(x, w):
            return x * 2, (x.shape[0] + 1, x.shape[1] + 1)

        def unpart(x, pad_hw):
            hp, wp = pad_hw
            if hp > x.shape[0]:
                x = x + 1
            if x.sum() > hp:
                x = x - 1
            return x

        @torch.compile
        def fn(x):
            y, pad_hw = part(x, 3)
            return unpart(y, pad_hw)
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(10, "BS201")]


def test_identity_like_helpers_return_what_each_call_passes(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        def exists(v):
            return v is not None

        def default(val, d):
            return val if exists(val) else d

        class Quantizer(nn.Module):
            def __init__(self, beam_size=None):
                super().__init__()
                self.beam_size = beam_size

            def forward(self, x, beam_size=None):
                beam_size = default(beam_size, self.beam_size)
                if exists(beam_size) and beam_size > 1:
                    x = x * 3
                return x

        class Masked(nn.Module):
            def forward(self, x, mask=None):
                m = default(mask, torch.ones_like(x))
                if m.sum() > 0:
                    x = x + 1
                return x * m
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(24, "BS201")]


def test_variadic_default_helpers_return_what_each_call_passes_or_its_lambda_gives(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        def exists(v):
            return v is not None

        def default(*args):
            for arg in args:
                if exists(arg):
                    return arg() if callable(arg) else arg
            return None

        class Looped(nn.Module):
            def __init__(self, train_steps=2):
                super().__init__()
                self.train_steps = train_steps

            def forward(self, x, looped_steps=None, mask=None):
                steps = default(looped_steps, self.train_steps)
                for i in range(steps):
                    if i == steps - 1:
                        x = x * 2
                mask = default(mask, lambda: torch.ones_like(x) > 0)
                if mask.any():
                    x = x + 1
                return x
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(24, "BS201")]


def test_closure_parameters_do_not_leak_into_the_enclosing_function(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        class Outer(torch.nn.Module):
            def forward(self, x, cache: dict = None):
                def run(inp, cache=None):
                    return inp * 2
                if cache:
                    pass
                return run(x)
    """))
    assert outcome.findings == []


def test_after_a_break_in_a_try_block_the_function_runs_eagerly(tmp_path):
    """TorchDynamo cannot resume inside a `try` body: the rest of the function runs eagerly (its
    `print` and `.item()` do not break), but a comprehension over a list there is compiled as a
    frame of its own and breaks (GB4347). Without the break in the `try`, the later ones break.
    (All three confirmed by running both classes under TorchDynamo.)"""
    outcome = lint_source(tmp_path, src("""
        import torch

        class M(torch.nn.Module):
            def forward(self, x):
                order = [1, 2]
                try:
                    y = x.sum().item()
                finally:
                    pass
                print("after")
                return [x * i for i in order], y

        class N(torch.nn.Module):
            def forward(self, x):
                order = [1, 2]
                try:
                    y = x.sum()
                finally:
                    pass
                print("after")
                return [x * i for i in order], y
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(7, "BS101"), (11, "BS207"), (20, "BS401")]


def test_what_a_disabled_function_returns_is_unknown_and_a_generator_gives_what_it_yields(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        @torch.compiler.disable
        def count_tokens(text):
            return len(text.split())

        def pieces(x, n):
            for i in range(n):
                yield x * i

        @torch.compile
        def fn(x, text: str):
            if count_tokens(text) > 3:
                x = x + 1
            total = sum(list(pieces(x, 3)))
            return total[total > 0]
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(13, "BS902"), (16, "BS302")]


def test_attention_keys_named_k_are_tensors_not_counts(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        class Attend(nn.Module):
            def forward(self, q, k, v, n):
                if k.amax() > 0:
                    q = q * 2
                if n > 2:
                    q = q * 3
                return (q @ k.transpose(-1, -2)).softmax(-1) @ v
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(6, "BS201")]


def test_numpy_on_python_numbers_converts_without_a_break_when_it_is_a_float(tmp_path):
    # Probed (bench/catalogue.py): int() of `np.ceil(h / 3)` is traced, int() of `np.prod(shape)`
    # or of an integer result is not, and branching on either breaks.
    outcome = lint_source(tmp_path, src("""
        import numpy as np
        import torch

        @torch.compile
        def fn(x):
            b, h = x.size()
            rows = int(np.ceil(h / 3)) + int(np.sqrt(b))
            flat = int(np.prod(x.shape))
            if np.ceil(h / 3) > 1:
                x = x + 1
            return x.reshape(-1, rows) * flat
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(8, "BS103"), (9, "BS201")]


def test_a_private_torch_module_base_makes_a_module(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch.nn.modules.loss import _Loss

        class Dice(_Loss):
            def forward(self, input, target):
                axes = torch.arange(2, len(input.shape)).tolist()
                return (input * target).sum(axes)
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(6, "BS102")]


def test_the_right_operand_of_and_sees_what_the_left_one_narrows(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        class Up(nn.Module):
            def forward(self, x: torch.Tensor, skip: torch.Tensor | None):
                if skip is not None and torch.jit.isinstance(skip, torch.Tensor):
                    x = x + skip
                return x
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(6, "BS507")]


def test_a_tensor_after_some_branches_only_gives_a_warning_that_says_so(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        @torch.compile
        def fn(x, flag: bool):
            if flag:
                s = x.sum()
            else:
                s = 1.0
            if s > 0:
                x = x + 1
            t = x.sum() if flag else x.mean()
            if t > 0:
                x = x * 2
            for part in (list(x.unbind(0)) if flag else [1, 2]):
                if part > 0:
                    x = x * 3
            return x
    """))
    found = [(f.line, f.rule, f.severity) for f in outcome.findings]
    assert found == [(9, "BS201", "warning"), (12, "BS201", "error"), (15, "BS201", "warning")]
    assert "where `s` is a tensor: it is one after some branches only" in outcome.findings[0].message


def test_an_eager_comprehension_breaks_only_when_its_frame_holds_torch(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from elsewhere import lookup

        def helper(x):
            torch._dynamo.graph_break()
            return x + 1

        @torch.compile
        def fn(x, keys: list[str]):
            order = list(range(len(keys)))
            order.insert(0, order.pop())
            table = lookup(keys)
            for _ in range(2):
                x = helper(x)
            names = [keys[i] for i in order]
            scaled = [x * i for i in order]
            looked_up = [table[i] for i in order]
            return names, scaled, looked_up
    """))
    found = [(f.line, f.rule, f.severity) for f in outcome.findings if f.rule == "BS207"]
    assert found == [(16, "BS207", "error"), (17, "BS207", "warning")]
    assert "if `table` is a tensor" in outcome.findings[-1].message


def test_what_is_computed_from_a_tensor_on_some_paths_is_one_on_those_paths_too(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import numpy as np
        import torch

        class Net(torch.nn.Module):
            def __init__(self, scales=None):
                super().__init__()
                self.scales = scales

            def factors(self):
                if self.scales is None:
                    found = [2] * 3
                else:
                    found = list(np.prod(np.array(self.scales), axis=0))
                return found

            def forward(self, x, mask: torch.Tensor | None = None):
                valid = [i % j == 0 for i, j in zip(x.shape[2:], self.factors())]
                if not all(valid):
                    raise ValueError("bad shape")
                if mask is not None:
                    x = x * mask
                if mask is None:
                    return x
                return x[:int(mask.sum())]
    """))
    found = [(f.line, f.rule, f.severity) for f in outcome.findings]
    assert found == [(18, "BS205", "warning"), (24, "BS103", "error")]
    assert "it is one after some branches only" in outcome.findings[0].message


def test_a_table_of_classes_dispatches_to_each_class_and_building_one_runs_its_init(tmp_path):
    # `self.offset` set in a method is read back with the value it was given there.
    outcome = lint_source(tmp_path, src("""
        import torch

        class Solver:
            def integrate(self, t):
                return t

        class Adaptive(Solver):
            def __init__(self, y0):
                self.scale = float(y0.abs().max())

            def integrate(self, t):
                self.offset = t * 2
                if self.offset.sum() > 0:
                    return t
                return self.offset

        class Fixed(Solver):
            def integrate(self, t):
                if t.sum() > 0:
                    return t
                return -t

        SOLVERS = {"adaptive": Adaptive, "fixed": Fixed}

        @torch.compile
        def solve(y0, t, method: str):
            solver = SOLVERS[method](y0)
            return solver.integrate(t)
    """))
    found = sorted((f.line, f.rule) for f in outcome.findings)
    # The solver is built in `solve`, and each `integrate` breaks: so does the call (BS209).
    assert found == [(9, "BS103"), (13, "BS201"), (19, "BS201"), (28, "BS209")]


def test_methods_held_by_attributes_built_by_overridden_factories_or_named_by_patterns_are_followed(tmp_path):
    # The loss picks its method in `__init__`; each loss's own `default_reducer` builds its
    # reducer; the reducer dispatches on a name made at run time; the distance's inherited
    # forward calls the distance's own `compute`.
    outcome = lint_source(tmp_path, src("""
        import torch

        class Reducer:
            def reduce(self, losses, kind):
                return getattr(self, "{}_reduction".format(kind))(losses)

        class NonZero(Reducer):
            def element_reduction(self, losses):
                return losses[losses > 0].mean()

            def pair_reduction(self, losses):
                return losses.sum()

        class Distance(torch.nn.Module):
            def forward(self, x):
                return self.compute(x)

            def compute(self, x):
                raise NotImplementedError

        class Dot(Distance):
            def compute(self, x):
                return x @ x.T

        class Loss(torch.nn.Module):
            def __init__(self, by_matrix):
                super().__init__()
                self.reducer = self.default_reducer()
                self.distance = Dot()
                self.loss_method = self.matrix_loss if by_matrix else self.pair_loss

            def default_reducer(self):
                return Reducer()

            def forward(self, x):
                return self.reducer.reduce(self.loss_method(self.distance(x)), "element")

            def matrix_loss(self, matrix):
                return matrix[matrix > 0.5]

            def pair_loss(self, matrix):
                return matrix.nonzero()

        class Circle(Loss):
            def default_reducer(self):
                return NonZero()
    """))
    found = sorted((f.line, f.rule) for f in outcome.findings)
    assert found == [(9, "BS302"), (39, "BS302"), (42, "BS301")]


def test_a_keyword_a_call_leaves_at_none_is_none_there_not_an_optional_tensor(tmp_path):
    # Taken for an optional tensor, `dtype` made `wanted` a tensor on some paths: a warning.
    code = src("""
        import torch

        def to_dtype(x, tensor=None, dtype=None):
            wanted = dtype if dtype is not None else tensor.dtype
            if x.dtype != wanted:
                x = x.type(wanted)
            return x

        def to_device(x, tensor=None, dtype=None):
            x = x.to(tensor.device)
            if dtype is not None:
                x = to_dtype(x, dtype=dtype)
            return x

        class Loss(torch.nn.Module):
            def forward(self, x, labels):
                return x + to_device(labels, x) + to_dtype(labels, tensor=x)
    """)
    assert lint_source(tmp_path, code).findings == []


def test_apply_on_a_custom_autograd_function_runs_its_forward_with_the_context_first(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, limit):
                ctx.save_for_backward(x)
                if x.sum() > limit:
                    return x.clamp(max=limit)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        @torch.compile
        def clipped(x):
            return Clip.apply(x, 1.0) * 2
    """))
    assert [(f.line, f.rule, f.severity) for f in outcome.findings] == [(7, "BS201", "error")]


def test_what_calling_an_unknown_value_returns_is_unknown_even_given_a_tensor(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from not_scanned import optional_import

        def largest_component(img):
            measure, _ = optional_import("skimage.measure")
            label = measure.label
            features, count = label(img, return_num=True)
            if count <= 1:
                return img
            return features

        class Keep(torch.nn.Module):
            def forward(self, x):
                return largest_component(x)
    """))
    assert [(f.line, f.rule, f.severity) for f in outcome.findings] == []


def test_a_decorators_wrapper_runs_with_the_decorated_function_and_is_given_what_it_is(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import functools
        import torch

        def checked(func):
            @functools.wraps(func)
            def wrapper(self, x, **kwargs):
                if x.sum() > 0:
                    x = x * 2
                if self.training:
                    x = x.item()
                return func(self, x, **kwargs)
            return wrapper

        class Model(torch.nn.Module):
            @checked
            def forward(self, x, scale=1.0):
                return x + scale
    """))
    found = [(f.line, f.rule) for f in outcome.findings]
    assert found == [(7, "BS201"), (10, "BS101")]
    assert outcome.findings[0].chain == ("Model.forward", "checked.<locals>.wrapper")


def test_a_decorator_factory_handing_the_decorating_on_runs_the_wrapper_it_hands_on_to(tmp_path):
    """`@cached(name=...)` -> `_cached(method=None, name=...)` -> `functools.partial(_cached,
    name=...)` -> `_cached(method)`, whose `functools.wraps` wrapper runs on every call."""
    outcome = lint_source(tmp_path, src("""
        import functools
        import pickle
        import torch

        def cached(method=None, name=None):
            return _cached(method=method, name=name)

        def _cached(method=None, name=None):
            if method is None:
                return functools.partial(_cached, name=name)

            @functools.wraps(method)
            def g(self, *args, **kwargs):
                key = pickle.dumps(kwargs)
                return method(self, *args, **kwargs)
            return g

        class Model(torch.nn.Module):
            @cached(name="helper")
            def helper(self, x):
                return x + 1

            def forward(self, x):
                return self.helper(x)
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(14, "BS505")]
    assert outcome.findings[0].chain == ("Model.forward", "Model.helper", "_cached.<locals>.g")


def test_an_object_declared_by_its_base_class_runs_the_scanned_subclasses_methods(tmp_path):
    """`transform: Transform` kept in `__init__` may hold any scanned subclass of Transform (one
    of torch's, here), however many files away: a method called on it runs each subclass's own."""
    (tmp_path / "transforms.py").write_text(src("""
        from torch.distributions import Transform

        class Base(Transform):
            def call_and_ladj(self, x):
                return x, x.sum()

        class Shift(Base):
            def call_and_ladj(self, x):
                return x + 1, x.sum().item()

        class Exp(Transform):
            def call_and_ladj(self, x):
                print(x)
                return x.exp(), x

        class Unused:
            def call_and_ladj(self, x):
                return x, x.sum().item()
    """))
    (tmp_path / "flows.py").write_text(src("""
        from typing import Optional
        import torch
        from torch.distributions import Transform

        class Composed:
            def __init__(self, *transforms: Transform):
                self.transforms = transforms

            def call_and_ladj(self, x):
                for t in self.transforms:
                    x, ladj = t.call_and_ladj(x)
                return x

        class Flow(torch.nn.Module):
            def __init__(self, transform: Optional[Transform], composed: "Composed"):
                super().__init__()
                self.transform = transform
                self.composed = composed

            def forward(self, x):
                y, ladj = self.transform.call_and_ladj(x)
                return self.composed.call_and_ladj(y)
    """))
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    found = sorted((f.path.rsplit("/", 1)[1], f.line, f.rule) for f in outcome.findings)
    assert found == [("transforms.py", 9, "BS101"), ("transforms.py", 13, "BS401")]
    assert {f.chain for f in outcome.findings if f.line == 9} >= {("Flow.forward", "Shift.call_and_ladj")}


def test_the_cache_notices_a_new_subclass_of_a_declared_class(tmp_path):
    cache = LintCache(str(tmp_path / "cache"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(src("""
        import torch
        from steps import Step

        class Model(torch.nn.Module):
            def __init__(self, step: Step):
                super().__init__()
                self.step = step

            def forward(self, x):
                return self.step.apply(x)
    """))
    (project / "steps.py").write_text("class Step:\n    def apply(self, x):\n        return x\n")
    (project / "more_steps.py").write_text("class Scalar:\n    pass\n")
    assert lint_paths([str(project)], Config(), jobs=1, cache=cache).findings == []
    (project / "more_steps.py").write_text(src("""
        from steps import Step

        class Scalar(Step):
            def apply(self, x):
                return x.sum().item()
    """))
    found = lint_paths([str(project)], Config(), jobs=1, cache=cache).findings
    assert [(f.path.rsplit("/", 1)[1], f.line) for f in found] == [("more_steps.py", 5)]


def test_after_a_method_of_an_object_built_here_breaks_the_function_runs_eagerly(tmp_path):
    """TorchDynamo cannot resume after the break in `integrate` (BS209): `fn` falls back to eager
    from there, so its `print` does not break; a helper given the object resumes, and its
    `print` does."""
    outcome = lint_source(tmp_path, src("""
        import torch

        class Solver:
            def __init__(self, y):
                self.y = y

            def integrate(self, t):
                if (self.y * t).sum() > 0:
                    t = t + 1
                return t

        def helper(solver, x):
            y = solver.integrate(x)
            print(y)
            return y

        @torch.compile
        def fn(x):
            y = helper(Solver(x), x)
            out = Solver(x).integrate(y)
            print(out)
            return out
    """))
    assert sorted((f.line, f.rule) for f in outcome.findings) == [(8, "BS201"), (14, "BS401"), (20, "BS209")]


def test_a_method_of_a_fresh_object_breaking_in_a_loop_skips_the_frame_instead_of_breaking_at_the_call(tmp_path):
    """Probed: inside a loop, the method's break makes TorchDynamo skip the frame ("graph break in
    a for/while loop"); the call itself does not break again (no BS209)."""
    outcome = lint_source(tmp_path, src("""
        import torch

        class Spline:
            def __init__(self, x):
                self.x = x

            def inverse(self, y):
                print("inverse")
                return y - self.x

        @torch.compile
        def fn(x, y):
            for _ in range(2):
                spline = Spline(x)
                y = spline.inverse(y)
            return y * 2
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(8, "BS401")]


def test_a_modules_own_call_override_runs_when_the_compiled_module_is_called(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch

        class Scope:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        class Base(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.scope = Scope()

            def __call__(self, *args, **kwargs):
                with self.scope:
                    return super().__call__(*args, **kwargs)

        class Model(Base):
            def forward(self, x):
                return x * 2
    """))
    assert [(f.line, f.rule, f.chain) for f in outcome.findings] == [(16, "BS601", ("Base.__call__",))]


def test_an_attribute_kept_from_an_unannotated_parameter_is_what_the_constructor_calls_build(tmp_path):
    """`self.spline = spline` with `spline` unannotated: the calls building Flow in its module all
    pass a Spline (directly or by a local name), so `self.spline.inverse` is Spline's."""
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        class Spline:
            def inverse(self, y):
                return y * y.max().item()

        class Flow(nn.Module):
            def __init__(self, spline, scale=1.0):
                super().__init__()
                self.spline = spline

            def forward(self, y):
                return self.spline.inverse(y) + 1

        def flow():
            spline = Spline()
            return Flow(spline)

        def scaled_flow():
            return Flow(Spline(), scale=2.0)
    """))
    assert [(f.line, f.rule, f.chain) for f in outcome.findings] == [(6, "BS101", ("Flow.forward", "Spline.inverse"))]


def test_a_break_under_a_context_manager_that_forbids_breaks_cannot_be_resumed_from(tmp_path):
    """Probed: under a `@contextmanager` generator, an object of a user class built in the `with`,
    or `warnings.catch_warnings()`, TorchDynamo "graph breaks in an active context manager that
    doesn't support graph breaking" and runs the rest of the function eagerly; under
    `torch.no_grad()` it resumes after the break."""
    outcome = lint_source(tmp_path, src("""
        import contextlib
        import warnings
        import torch

        @contextlib.contextmanager
        def hooks():
            yield

        class Scope:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        @torch.compile
        def generator_managed(x):
            with hooks():
                print("inside")
            print("after")
            return x

        @torch.compile
        def class_managed(x):
            with Scope():
                print("inside")
            print("after")
            return x

        @torch.compile
        def warnings_managed(x):
            with warnings.catch_warnings():
                print("inside")
            print("after")
            return x

        @torch.compile
        def grad_managed(x):
            with torch.no_grad():
                print("inside")
            print("after")
            return x
    """))
    assert [f.line for f in outcome.findings] == [19, 26, 33, 40, 41]


def test_a_break_while_a_built_object_keeps_its_own_bound_method_cannot_be_resumed_from(tmp_path):
    """Probed: `self.f = self.f_default` in `__init__` leaves a bound method TorchDynamo cannot
    rebuild; a call that breaks while such an object built here is alive breaks again there
    (GB0092) and the function runs eagerly: a module it built is then initialised by `__init__`
    frames TorchDynamo compiles one by one, each breaking at `super().__init__()` (GB0119). An
    object built on some paths only, or one a call returned, is not counted."""
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        class Base(nn.Module):
            def __init__(self):
                super().__init__()
                self.f = self.f_default

            def f_default(self, x):
                return x * 2

        class Derived(Base):
            def __init__(self, k):
                super().__init__()
                self.k = k

        def breaking(x):
            print("break")
            return x + 1

        def make(k):
            return Derived(k)

        @torch.compile
        def built_here(x):
            w = Derived(2)
            y = breaking(x)
            return w.f(y)

        @torch.compile
        def maybe_built(x, w, flag: bool):
            if flag:
                w = Derived(2)
            return breaking(x) * 2

        @torch.compile
        def returned(x):
            w = make(2)
            return w.f(breaking(x))
    """))
    found = sorted((f.line, f.rule) for f in outcome.findings)
    assert found == [(6, "BS801"), (14, "BS801"), (18, "BS401"), (27, "BS209")]


def test_an_unannotated_parameter_of_a_class_a_subclass_extends_is_not_taken_from_its_constructor_calls(tmp_path):
    outcome = lint_source(tmp_path, src("""
        import torch
        from torch import nn

        class Spline:
            def inverse(self, y):
                return y * y.max().item()

        class Flow(nn.Module):
            def __init__(self, spline):
                super().__init__()
                self.spline = spline

            def forward(self, y):
                return self.spline.inverse(y) + 1

        class Identity(Flow):
            def __init__(self):
                super().__init__(None)

        def flow():
            return Flow(Spline())
    """))
    assert outcome.findings == []


def test_a_distinctive_method_called_on_an_object_of_no_known_class_runs_the_classes_defining_it(tmp_path):
    """Duck typing: `self.ball` comes from an unannotated parameter, so the object is of no class
    the lint knows; the scanned classes defining `dist2plane` in the modules the layer's imports
    lead to are what it may be (not another module's, which nothing imported). A name many classes
    define (`step`, seven here) tells nothing and is not followed."""
    package = tmp_path / "geo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "manifolds.py").write_text(src("""
        class Ball:
            def dist2plane(self, x):
                if x.sum() > 0:
                    return x
                return -x
    """) + "".join(f"\n\nclass Step{i}:\n    def step(self, x):\n        return x.sum().item()\n" for i in range(7)))
    (package / "unrelated.py").write_text("class Plane:\n    def dist2plane(self, x):\n        return x.sum().item()\n")
    (package / "layers.py").write_text(src("""
        import torch
        from geo import manifolds  # the kinds of ball a layer is given

        class Layer(torch.nn.Module):
            def __init__(self, *, ball, stepper):
                super().__init__()
                self.ball = ball
                self.stepper = stepper

            def forward(self, x):
                y = self.stepper.step(x)
                return self.ball.dist2plane(x * 2)
    """))
    outcome = lint_paths([str(package)], Config(), jobs=1)
    assert [(f.path.rsplit("/", 1)[1], f.line, f.rule) for f in outcome.findings] == [("manifolds.py", 3, "BS201")]
    assert outcome.findings[0].chain == ("Layer.forward", "Ball.dist2plane")


def test_an_object_declared_by_an_interface_class_runs_the_classes_implementing_all_of_it(tmp_path):
    """`controller: Controller`, whose methods only state the interface: classes that define
    every one of them without deriving from it are what it may be (as a Protocol is matched);
    a class defining only the method called is not one."""
    (tmp_path / "controllers.py").write_text(src("""
        import torch

        class Controller(torch.nn.Module):
            def init(self, x):
                raise NotImplementedError()

            def adapt(self, x):
                \"\"\"Adapt the step.\"\"\"
                ...

        class Integral(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("rtol", torch.tensor(0.1))

            def init(self, x):
                return x

            def adapt(self, x):
                return torch.add(x, x, alpha=self.rtol)

        class Unrelated:
            def adapt(self, x):
                return x.sum().item()
    """))
    (tmp_path / "solver.py").write_text(src("""
        import torch
        from controllers import Controller

        class Solver(torch.nn.Module):
            def __init__(self, controller: Controller):
                super().__init__()
                self.controller = controller

            def forward(self, x):
                controller = self.controller
                return controller.adapt(controller.init(x))
    """))
    outcome = lint_paths([str(tmp_path)], Config(), jobs=1)
    assert [(f.path.rsplit("/", 1)[1], f.line, f.rule) for f in outcome.findings] == [("controllers.py", 20, "BS111")]


def test_the_cache_notices_a_new_class_defining_a_duck_typed_method(tmp_path):
    cache = LintCache(str(tmp_path / "cache"))
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(src("""
        import torch
        import balls

        class Model(torch.nn.Module):
            def __init__(self, ball):
                super().__init__()
                self.ball = ball

            def forward(self, x):
                return self.ball.dist2plane(x)
    """))
    (project / "balls.py").write_text("class Ball:\n    pass\n")
    assert lint_paths([str(project)], Config(), jobs=1, cache=cache).findings == []
    (project / "balls.py").write_text("class Ball:\n    def dist2plane(self, x):\n        return x.sum().item()\n")
    found = lint_paths([str(project)], Config(), jobs=1, cache=cache).findings
    assert [(f.path.rsplit("/", 1)[1], f.line) for f in found] == [("balls.py", 3)]


def test_a_call_that_may_run_several_methods_skips_the_loops_frame_only_when_each_breaks(tmp_path):
    """`controller.adapt(x)` runs `Adaptive.adapt` (which breaks) or `Fixed.adapt` (which does
    not): the frame is skipped only for one of them, so the branch after the call in the loop
    still breaks when the object is the other, and is reported."""
    outcome = lint_source(tmp_path, src("""
        import torch

        class Controller:
            def adapt(self, x):
                raise NotImplementedError

        class Adaptive(Controller):
            def adapt(self, x):
                return x * x.sum().item()

        class Fixed(Controller):
            def adapt(self, x):
                return x

        class Solver(torch.nn.Module):
            def __init__(self, controller: Controller):
                super().__init__()
                self.controller = controller

            def forward(self, x):
                while True:
                    x = self.controller.adapt(x)
                    if (x > 1).any():
                        return x
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(9, "BS101"), (23, "BS201")]


def test_a_break_in_a_loop_of_one_if_arm_does_not_hide_the_breaks_of_the_other_arm(tmp_path):
    """TorchDynamo gives up on the frame at the first break in a loop, so what comes after it is
    not reported; but an `elif` arm's loop runs only where the `if` arm's did not: its break is
    on another path, and is reported too."""
    outcome = lint_source(tmp_path, src("""
        import torch

        @torch.compile
        def spread(data, threads: int):
            factor = data.sum()
            if data.shape[0] > 4:
                for start in range(0, data.shape[0], 2):
                    if threads // int(factor) > 1:
                        data = data * 2
            elif data.shape[0] > 2:
                for start in range(0, data.shape[0], 2):
                    if threads // int(factor) > 2:
                        data = data + 1
            for start in range(2):
                data = data * int(factor)
            return data
    """))
    assert [(f.line, f.rule) for f in outcome.findings] == [(8, "BS103"), (12, "BS103")]


def test_declared_calls_build_torch_objects_and_tensors_of_torchs_classes(tmp_path):
    """What `BREAKSCAN_TARGETS` builds of torch's classes: an optimizer is an object whose methods
    the catalogue probes; a legacy tensor type (`torch.FloatTensor(2, 3)`) still makes a tensor."""
    outcome = lint_source(tmp_path, src("""
        import torch

        def step(optimizer, x):
            optimizer.zero_grad()
            return x.sum().item()

        def setup():
            weight = torch.nn.Parameter(torch.zeros(3))
            return torch.optim.Adagrad([weight], lr=0.1), torch.FloatTensor(2, 3)

        BREAKSCAN_TARGETS = {"step": "setup()"}
    """))
    assert sorted((f.line, f.rule, f.severity) for f in outcome.findings) == [
        (4, "BS507", "error"), (5, "BS101", "error")]
