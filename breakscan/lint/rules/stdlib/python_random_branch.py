import libcst as cst

from breakscan.lint.rule import Example, Rule

# TorchDynamo traces these into the graph as symbolic values instead of calling them.
TRACED_RANDOM = frozenset({"random.uniform", "random.randint", "random.randrange"})


class PythonRandomBranch(Rule):
    id = "BS503"
    name = "python-random-branch"
    gb_ids = ("GB0170",)
    message = "branching on `random.uniform/randint/randrange`: the value is traced, so the branch is data-dependent"
    fix_hint = "draw the number with torch and select with torch.where, or decide outside the compiled code"
    docs = """
    ## What it does
    Flags `if`/`while`/ternary conditions that test a value drawn with `random.uniform()`,
    `random.randint()` or `random.randrange()`, directly or through a local variable.

    ## Why is this bad?
    TorchDynamo 2.13 does not call these functions while tracing: it records them in the graph so
    that every call draws a fresh number. The number is therefore unknown at trace time, and a
    Python branch on it is data-dependent: the graph ends at the condition (GB0170), as in the
    classic LayerDrop `if self.training and random.uniform(0, 1) < self.layerdrop:`. Using the
    number in tensor arithmetic is fine.

    ## Example
    ```python
    dropout_probability = random.uniform(0, 1)
    if self.training and dropout_probability < self.layerdrop:
        continue
    ```

    ## Use instead
    ```python
    keep = torch.rand(()) >= self.layerdrop
    hidden = torch.where(keep, layer(hidden), hidden)
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
    )
    valid = (
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                jitter = random.uniform(0.9, 1.1)
                return x * jitter
        """),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                keep = torch.rand(()) >= 0.2
                return torch.where(keep, x * 2, x)
        """),
    )

    def __init__(self) -> None:
        self._walk = None
        self._names: set[str] = set()

    def _random_names(self, ctx) -> set[str]:
        if self._walk is not ctx:  # one context per walk of a function: names are per walk
            self._walk = ctx
            self._names = set()
        return self._names

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        names = self._random_names(ctx)
        drawn = _draws_random(node.value, ctx, names)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (names.add if drawn else names.discard)(target.target.value)

    def on_If(self, node: cst.If, ctx) -> None:
        self._check(node.test, ctx)

    def on_While(self, node: cst.While, ctx) -> None:
        self._check(node.test, ctx)

    def on_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._check(node.test, ctx)

    def _check(self, test: cst.BaseExpression, ctx) -> None:
        if _draws_random(test, ctx, self._random_names(ctx)):
            ctx.report(self, test)


def _draws_random(expression: cst.BaseExpression, ctx, names: set[str]) -> bool:
    finder = _RandomUse(ctx, names)
    expression.visit(finder)
    return finder.found


class _RandomUse(cst.CSTVisitor):
    """A traced random call or a variable holding one, outside nested lambdas."""

    def __init__(self, ctx, names: set[str]) -> None:
        self.ctx = ctx
        self.names = names
        self.found = False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `obj.p` is not the local `p`
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # nor is the keyword in `f(p=1)`
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in TRACED_RANDOM:
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.found = True
