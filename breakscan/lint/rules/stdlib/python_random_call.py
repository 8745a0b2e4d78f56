import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.randomness import is_skipped_random_call


class PythonRandomCall(Rule):
    id = "BS502"
    name = "python-random-call"
    gb_ids = ("GB0007", "GB0156")
    message = "TorchDynamo cannot trace this `random` call: the graph breaks here"
    fix_hint = "draw with torch (torch.rand(()), torch.randperm, torch.multinomial) or use random.uniform/randint in tensor math"
    docs = """
    ## What it does
    Flags calls to the global `random` module's `random()`, `choice()`, `shuffle()`, `sample()`,
    `gauss()`, `seed()`, `getrandbits()` and its other distributions in compiled code, and the
    methods of a `random.Random` instance held by the module (`self.rng = random.Random(seed)`)
    that the catalogue saw break: all but `random`, `uniform`, `randint`, `randrange` and `getstate`.

    ## Why is this bad?
    TorchDynamo 2.13 marks these module functions as skipped (GB0007) and cannot trace those
    instance methods (GB0156): the graph ends at the call, the call runs eagerly and a new graph
    starts after it. Stochastic-depth and augmentation code often does this on every forward.
    `random.uniform`, `random.randint`, `random.randrange` and an instance's `random()`,
    `uniform()`, `randint()` and `randrange()` are traced instead (see python-random-value).

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
        Example("""
            import random
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rng = random.Random(0)

                def forward(self, x):
                    y = x * 2
                    return y * self.rng.gauss(0, 1)  # break
        """, entry="Model()"),
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

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rng = random.Random(0)

                def forward(self, x):
                    return x * self.rng.random() + x * self.rng.randint(1, 3)
        """, entry="Model()"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if is_skipped_random_call(node, ctx):
            ctx.report(self, node)
