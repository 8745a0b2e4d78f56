import libcst as cst

from breakscan.lint.rule import Example, Rule

# Module-level `random` functions TorchDynamo 2.13 skips (GB0007). `random.uniform`, `randint`
# and `randrange` are traced instead (see python-random-branch), and so are the methods of a
# `random.Random` instance.
SKIPPED_RANDOM = frozenset(
    f"random.{name}"
    for name in (
        "random", "choice", "choices", "shuffle", "sample", "seed", "getstate", "getrandbits", "gauss",
        "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate",
        "paretovariate", "weibullvariate", "triangular",
    )
)


class PythonRandomCall(Rule):
    id = "BS502"
    name = "python-random-call"
    gb_ids = ("GB0007",)
    message = "this `random` module function is skipped by TorchDynamo: the graph breaks here"
    fix_hint = "draw with torch (torch.rand(()), torch.randperm, torch.multinomial), or use a random.Random instance"
    docs = """
    ## What it does
    Flags calls to the global `random` module's `random()`, `choice()`, `shuffle()`, `sample()`,
    `gauss()`, `seed()`, `getrandbits()` and its other distributions in compiled code.

    ## Why is this bad?
    TorchDynamo 2.13 marks these functions as skipped: the graph ends at the call, the call runs
    eagerly and a new graph starts after it (GB0007). Stochastic-depth and augmentation code often
    does this on every forward. (`random.uniform`, `random.randint` and `random.randrange` are
    traced and do not break here, nor do the methods of a `random.Random` instance.)

    ## Example
    ```python
    if self.training and random.random() < self.drop_prob:
        return x
    ```

    ## Use instead
    ```python
    keep = (torch.rand((), device=x.device) >= self.drop_prob).to(x.dtype)
    return shortcut + keep * self.branch(x)
    ```
    """
    invalid = (
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                scale = random.random()  # break
                return y * scale
        """),
        Example("""
            import random
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)
                    self.drop_prob = 0.1

                def forward(self, x):
                    y = self.proj(x)
                    if self.training and random.random() < self.drop_prob:  # break
                        return x
                    return x + y
        """, entry="Model()"),
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                order = [0, 1, 2, 3]
                random.shuffle(order)  # break
                return x.view(4, 2)[order]
        """),
    )
    valid = (
        Example("""
            import random
            import torch

            @torch.compile
            def fn(x):
                return x * random.uniform(0.5, 1.5)
        """),
        Example("""
            import random
            import torch

            RNG = random.Random(0)

            @torch.compile
            def fn(x):
                return x * RNG.random()
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if ctx.qualname(node.func) in SKIPPED_RANDOM:
            ctx.report(self, node)
