import libcst as cst

from breakscan.lint.rule import Example
from breakscan.lint.rules.recompiles.varying_int_argument import VaryingIntArgument


class VaryingFloatArgument(VaryingIntArgument):
    """BR002's question for Python floats: the loop gives the compiled function another float."""

    id = "BR007"
    name = "varying-float-argument"
    severity = "warning"
    number = "float"
    message = ("this compiled function is called in a loop with a Python float the loop changes (a learning rate "
               "decayed by hand, a temperature): TorchDynamo guards on its first value, so the second value "
               "recompiles it once (then, with automatic dynamic shapes, the float becomes dynamic)")
    fix_hint = "pass the number as a 0-d tensor (`torch.tensor(lr)`), or compile with `dynamic=True`"
    docs = """
    ## What it does
    Flags the first use, in a compiled function, of a parameter that the scanned code passes a
    Python float which a loop updates from itself (`lr *= 0.9`, `lr = lr * gamma`, where `lr`
    holds a float): `step(p, g, lr)` where `step = torch.compile(fn, ...)` or `fn` is decorated
    with `@torch.compile(...)`. Reported where TorchDynamo guards the value.

    ## Why is this bad?
    TorchDynamo 2.13 specialises a Python float on its first call (`lr == 0.1`); the next value
    recompiles, after which automatic dynamic shapes make it a dynamic input: one recompile (a
    warning). With `dynamic=False` (or `automatic_dynamic_shapes = False`) every value
    recompiles, until the recompile limit (8), after which the function runs eagerly: an error.
    A 0-d tensor is a graph input and never recompiles.

    ## Example
    ```python
    step = torch.compile(sgd_step, dynamic=False)
    for epoch in range(epochs):
        params = step(params, grads, lr)
        lr *= 0.9
    ```

    ## Use instead
    ```python
    lr = torch.tensor(0.1)
    for epoch in range(epochs):
        params = step(params, grads, lr)
        lr *= 0.9                  # an in-place update of a tensor: no guard on its value
    ```
    """
    invalid = (
        Example("""
            import torch

            @torch.compile(backend="eager", dynamic=False)
            def sgd_step(p, g, lr):
                return p - lr * g  # recompile

            def fn(x):
                lr = 0.1
                for _ in range(4):
                    x = sgd_step(x, torch.ones_like(x), lr)
                    lr *= 0.9
                return x
        """, compiled=False),
        Example("""
            import torch

            def sample(logits, temperature):
                return torch.softmax(logits / temperature, dim=-1)  # recompile

            fast_sample = torch.compile(sample, backend="eager")

            def fn(x):
                temperature = 1.0
                for _ in range(3):
                    x = fast_sample(x, temperature)
                    temperature = temperature * 0.5
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Distiller(nn.Module):
                def soft_targets(self, logits, temperature):
                    return torch.softmax(logits / temperature, dim=-1)  # guarded already: one finding

                def forward(self, logits, temperature=2.0):
                    scaled = logits / temperature  # recompile
                    return scaled + self.soft_targets(logits, temperature)

            def annealed(step, t_max=4.0, total=3):
                return t_max - (t_max - 1.0) * step / total

            BREAKSCAN_TARGETS = {"Distiller()": "[(torch.randn(2, 5), annealed(0)), (torch.randn(2, 5), annealed(1))]"}
        """, entry="Distiller()", inputs="[(torch.randn(2, 5), annealed(0)), (torch.randn(2, 5), annealed(1))]"),
        Example("""
            import torch

            def focal(logits, targets, gamma=2.0):
                p = torch.sigmoid(logits)
                p_t = p * targets + (1 - p) * (1 - targets)
                return ((1 - p_t) ** gamma).mean()  # recompile

            def curriculum(epoch, start=0.5, end=2.0, warmup=3):
                return start + (end - start) * min(epoch, warmup) / warmup

            BREAKSCAN_TARGETS = {"focal": "[(torch.randn(4, 3), torch.rand(4, 3), curriculum(e)) for e in range(3)]"}
        """, entry="focal", inputs="[(torch.randn(4, 3), torch.rand(4, 3), curriculum(e)) for e in range(3)]"),
        Example("""
            import dataclasses
            import torch

            @dataclasses.dataclass
            class Schedule:
                temperature: float = 4.0

            def distill(student, teacher, sched):
                T = sched.temperature  # read, kept: guarded where it is first used
                soft = (teacher / T).softmax(-1)  # recompile
                return -(soft * (student / T).log_softmax(-1)).sum(-1).mean() * T * T

            BREAKSCAN_TARGETS = {"distill": "[(torch.randn(2, 8), torch.randn(2, 8), Schedule(4.0)), (torch.randn(2, 8), torch.randn(2, 8), Schedule(2.0))]"}
        """, entry="distill", inputs="[(torch.randn(2, 8), torch.randn(2, 8), Schedule(4.0)), (torch.randn(2, 8), torch.randn(2, 8), Schedule(2.0))]"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile(backend="eager", dynamic=False)
            def sgd_step(p, g, lr):
                return p - lr * g

            def fn(x):
                lr = torch.tensor(0.1)
                for _ in range(4):
                    x = sgd_step(x, torch.ones_like(x), lr)
                    lr *= 0.9
                return x
        """, compiled=False),
    )

    def report_varying(self, node: cst.Name, call, ctx) -> None:
        if call.dynamic == "False" or not ctx.dynamo.enabled("automatic_dynamic_shapes"):
            ctx.report(self, node, f"this compiled function is called in a loop with a Python float the loop changes "
                                   f"as `{node.value}` (`{call.call}`), and compiled static: every value recompiles "
                                   f"it, until the recompile limit ({ctx.dynamo.number('recompile_limit')}), then it runs "
                                   "eagerly", severity="error")
        else:
            ctx.report(self, node, f"{self.message} (`{call.call}`)")
