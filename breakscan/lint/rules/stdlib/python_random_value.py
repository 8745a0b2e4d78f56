import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.randomness import TRACED_FUNCTIONS, TRACED_METHODS, is_traced_draw
from breakscan.lint.traverse import children, find_nodes, is_expression

CONVERSIONS = frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.range"})
_SIGN_OPERATORS = (cst.Minus, cst.Plus, cst.BitInvert)


class PythonRandomValue(Rule):
    id = "BS503"
    name = "python-random-value"
    gb_ids = ("GB0170", "GB0213", "GB0178", "GB0124", "GB4841", "GB0033")
    message = "a `random.uniform/randint/randrange` draw is a traced value: using it as a Python number breaks the graph"
    fix_hint = "draw with torch (torch.rand(()), torch.randint) and keep the value in tensor ops, or draw outside the compiled code"
    docs = """
    ## What it does
    Flags values drawn with `random.uniform()`, `random.randint()` or `random.randrange()`, or
    with those methods and `random()` of a `random.Random` instance held by the module
    (directly or through a local variable), that compiled code then uses as a Python number: in an
    `if`/`while`/ternary condition, in arithmetic with non-tensors (`random.uniform(a, b) * 2.0`,
    `-r`), converted with `int/float/bool/str/range`, or as an index or slice bound.

    ## Why is this bad?
    TorchDynamo 2.13 does not call these functions while tracing: it records them in the graph
    so that every call draws a fresh number, which is therefore unknown at trace time. Tensor
    arithmetic with it is fine (`x * random.uniform(0.9, 1.1)`), but a Python branch on it is
    data-dependent (GB0170, the classic LayerDrop `if random.uniform(0, 1) < self.layerdrop:`),
    Python arithmetic with it makes TorchDynamo give up on the whole frame (GB0213), and
    conversions or indexing break too (GB0178, GB0124, GB4841, GB0033). Only the first such use
    breaks: the code after the break resumes with the number as a plain constant.

    ## Example
    ```python
    dropout_probability = random.uniform(0, 1)
    if self.training and dropout_probability < self.layerdrop:
        return hidden
    ```

    ## Use instead
    ```python
    skip = torch.rand(()) < self.layerdrop
    return torch.where(skip, hidden, layer(hidden))
    ```
    """
    invalid = (
        Example("""
            import random
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layer = torch.nn.Linear(8, 8)
                    self.layerdrop = 0.2

                def forward(self, x):
                    dropout_probability = random.uniform(0, 1)
                    y = x * 2
                    if self.training and dropout_probability < self.layerdrop:  # break
                        return y
                    return self.layer(y)
        """, entry="Model()"),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x + 1
                return y * 2 if random.randint(0, 3) > 1 else y  # break
        """),
        Example("""
            import math
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x.cos()
                angle = random.uniform(-10, 10) * math.pi / 180  # break
                return y * angle
        """),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                start = random.randrange(0, 4)
                return y[start:]  # break
        """),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                drop = random.uniform(0, 1)
                y = x * 2
                if drop < 0.5:  # break
                    y = y + 1
                scale = 2.0 if drop > 0.2 else 1.0  # resumed after the break: `drop` is a float now
                return y * scale
        """),
    )
    valid = (
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                jitter = random.uniform(0.9, 1.1)
                keep = random.uniform(0, 1) < 0.5
                return (x * jitter * 2.0).clamp(min=random.uniform(-1.0, 0.0))
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                skip = torch.rand(()) < 0.2
                return torch.where(skip, x, x * 2)
        """),
    )

    def __init__(self) -> None:
        self._walk = None
        self._names: set[str] = set()
        self._may_draw = False

    def _drawn_names(self, ctx) -> set[str]:
        if self._walk is not ctx:  # one context per walk of a function: names are per walk
            self._walk = ctx
            self._names = set()
            self._may_draw = _imports_random(ctx.module) or ctx.memoised(_calls_a_draw_name, ctx.function.node)
        return self._names

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        names = self._drawn_names(ctx)
        if not self._may_draw:
            return
        drawn = _mentions_draw(node.value, ctx, names) and not ctx.is_tensor(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (names.add if drawn else names.discard)(target.target.value)

    def on_If(self, node: cst.If, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_While(self, node: cst.While, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._check_test(node.test, ctx)

    def on_BinaryOperation(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_UnaryOperation(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_Call(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def on_Subscript(self, node: cst.BaseExpression, ctx) -> None:
        self._check_use(node, ctx)

    def _check_test(self, test: cst.BaseExpression, ctx) -> None:
        names = self._drawn_names(ctx)
        if not self._may_draw:
            return
        # A Python use inside the condition is reported by its own handler, on the same line.
        if _mentions_draw(test, ctx, names) and not _contains_python_use(test, ctx, names):
            self._report_break(test, ctx)

    def _check_use(self, node: cst.BaseExpression, ctx) -> None:
        names = self._drawn_names(ctx)
        if self._may_draw and _is_python_use(node, ctx, names):
            self._report_break(node, ctx)

    def _report_break(self, node: cst.BaseExpression, ctx) -> None:
        ctx.report(self, node)
        # The code after a graph break resumes with the drawn numbers as plain constants:
        # only the first use of a draw breaks.
        self._drawn_names(ctx).clear()


_DRAW_NAMES = frozenset(name.rpartition(".")[2] for name in TRACED_FUNCTIONS) | TRACED_METHODS


def _imports_random(module) -> bool:
    return any(qualified == "random" or qualified.startswith("random.") for qualified in module.imports.values())


def _calls_a_draw_name(function: cst.FunctionDef) -> bool:
    """Whether the function calls anything by a traced draw's name (`rng.random()` on a
    `random.Random` built in another file): in a file that does not import `random`, a function
    without one draws nothing, and its assignments and tests need no closer look."""
    return any(isinstance(call.func, (cst.Name, cst.Attribute)) and (
        call.func.value if isinstance(call.func, cst.Name) else call.func.attr.value) in _DRAW_NAMES
        for call in find_nodes(function.body, (cst.Call,)))


def _is_draw(node: cst.BaseExpression, ctx, names: set[str]) -> bool:
    if isinstance(node, cst.Name):
        return node.value in names
    return isinstance(node, cst.Call) and is_traced_draw(node, ctx)


def _is_python_use(node: cst.CSTNode, ctx, names: set[str]) -> bool:
    """The draw itself (not a tensor op on it) used as a Python number."""
    if isinstance(node, cst.BinaryOperation):
        return (_is_draw(node.left, ctx, names) and not ctx.is_tensor(node.right)) or (
            _is_draw(node.right, ctx, names) and not ctx.is_tensor(node.left)
        )
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, _SIGN_OPERATORS) and _is_draw(node.expression, ctx, names)
    if isinstance(node, cst.Call):
        return ctx.qualname(node.func) in CONVERSIONS and any(_is_draw(a.value, ctx, names) for a in node.args)
    if isinstance(node, cst.Subscript):
        return any(_is_draw(part, ctx, names) for element in node.slice for part in _index_parts(element.slice))
    return False


def _index_parts(index: cst.BaseSlice) -> list[cst.BaseExpression]:
    if isinstance(index, cst.Index):
        return [index.value]
    return [part for part in (index.lower, index.upper, index.step) if part is not None]


def _mentions_draw(expression: cst.BaseExpression, ctx, names: set[str]) -> bool:
    return _any_read(expression, lambda node: _is_draw(node, ctx, names))


def _contains_python_use(expression: cst.BaseExpression, ctx, names: set[str]) -> bool:
    return _any_read(expression, lambda node: _is_python_use(node, ctx, names))


def _any_read(node: cst.CSTNode, predicate) -> bool:
    """Whether any expression node (outside nested lambdas, attribute names and keywords) matches."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Lambda):
            continue
        if isinstance(node, (cst.Attribute, cst.Arg)):
            pending.append(node.value)  # `obj.p` and the keyword of `f(p=1)` do not read `p`
            continue
        if is_expression(node) and predicate(node):
            return True
        pending.extend(children(node))
    return False
