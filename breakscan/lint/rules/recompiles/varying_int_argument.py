import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import FirstReads
from breakscan.lint.traverse import find_nodes


class VaryingIntArgument(Rule):
    id = "BR002"
    name = "varying-int-argument"
    kind = "recompile"
    gb_ids = ()
    message = ("this compiled function is called in a loop with the loop's int as this argument: TorchDynamo "
               "guards on its value here, so the second value recompiles it (then, with automatic dynamic "
               "shapes, the argument becomes dynamic)")
    fix_hint = "pass the number as a 0-d tensor (`torch.tensor(i)`), or compile with `dynamic=True`"
    docs = """
    ## What it does
    Flags the first use, in a compiled function, of a parameter that the scanned code passes the
    int of a `for i in range(...)` loop: `step(x, i)` where `step = torch.compile(fn, ...)` or `fn`
    is decorated with `@torch.compile(...)`; or one that the calls `BREAKSCAN_TARGETS` declares give
    other ints (`"[(x, 4), (x, 6)]"`, or by keyword: `"[dict(x=x, iters=4), dict(x=x, iters=6)]"`;
    read as written, never run), or objects of one class of the file built with other ints
    (`Routing()`, then `Routing(top_k=1)`: a dataclass field, or an attribute `__init__` sets from
    its parameter), at the first read of the attribute that differs (`cfg.top_k`). Reported where
    TorchDynamo guards the value: its first use, in a helper the number is passed to as well. When
    the declared calls give three or more ints and one sets a loop's count (`range(steps)`), also
    at the function's `def`, where TorchDynamo places the later recompiles.

    ## Why is this bad?
    TorchDynamo 2.13 specialises Python ints: the first call guards `i == 0`, and the next value
    fails the guard and recompiles. By default the second recompile marks the argument dynamic
    (automatic dynamic shapes), so the cost is a recompile or two (a warning), unless a use needs
    the value again: a loop of that many passes is unrolled, and each new value recompiles. With
    `dynamic=False` every value recompiles until the recompile limit (8), after which the function
    runs eagerly: an error. With `dynamic=True` nothing is flagged.

    ## Example
    ```python
    step = torch.compile(train_step, dynamic=False)
    for i in range(num_steps):
        loss = step(batch, i)
    ```

    ## Use instead
    ```python
    step = torch.compile(train_step)
    for i in range(num_steps):
        loss = step(batch, torch.tensor(i))
    ```
    """
    invalid = (
        Example("""
            import torch

            def scale(x, i):
                return x * i  # recompile

            step = torch.compile(scale, backend="eager")

            def fn(x):
                for i in range(4):
                    x = step(x, i)
                return x
        """, compiled=False),
        Example("""
            import torch

            @torch.compile(backend="eager", dynamic=False)
            def shift(x, offset):
                return x + offset  # recompile

            def fn(x):
                for i in range(5):  # 4 recompiles; 9 values would reach the limit (8)
                    x = shift(x, offset=i)
                return x
        """, compiled=False),
        Example("""
            import torch
            from torch import nn

            class Sampler(nn.Module):
                def forward(self, x, num_steps: int):  # an annotation the calls refine
                    for _ in range(num_steps):  # recompile
                        x = x * 0.5
                    return x

            BREAKSCAN_TARGETS = {"Sampler()": "[(torch.randn(4), 4), (torch.randn(4), 6)]"}
        """, entry="Sampler()", inputs="[(torch.randn(4), 4), (torch.randn(4), 6)]"),
        Example("""
            import torch
            from torch import nn

            class Refiner(nn.Module):
                def forward(self, x, iters=4):
                    outputs = []
                    for _ in range(iters):  # recompile
                        x = torch.tanh(x)
                        outputs.append(x)
                    return outputs

            BREAKSCAN_TARGETS = {"Refiner()": "[dict(x=torch.randn(4), iters=4), dict(x=torch.randn(4), iters=6)]"}
        """, entry="Refiner()", inputs="[dict(x=torch.randn(4), iters=4), dict(x=torch.randn(4), iters=6)]"),
        Example("""
            import dataclasses
            import torch
            from torch import nn

            @dataclasses.dataclass
            class Routing:
                top_k: int = 2
                scale: float = 1.0

            class Router(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = nn.Linear(8, 4)

                def forward(self, x, cfg: Routing):
                    probs = self.gate(x).softmax(-1) * cfg.scale
                    return probs.topk(cfg.top_k, dim=-1).values  # recompile

            BREAKSCAN_TARGETS = {"Router()": "[(torch.randn(3, 8), Routing()), (torch.randn(3, 8), Routing(top_k=1))]"}
        """, entry="Router()", inputs="[(torch.randn(3, 8), Routing()), (torch.randn(3, 8), Routing(top_k=1))]"),
        Example("""
            import torch

            def top_k_filter(logits, k):
                if k <= 0:  # recompile
                    return logits
                cutoff = torch.topk(logits, k, dim=-1).values[..., -1, None]
                return logits.masked_fill(logits < cutoff, float("-inf"))

            def sample(logits, top_k=50):
                return top_k_filter(logits, top_k).softmax(-1)  # passed on: read in the helper

            BREAKSCAN_TARGETS = {"sample": "[dict(logits=torch.randn(2, 9), top_k=3), dict(logits=torch.randn(2, 9), top_k=5)]"}
        """, entry="sample", inputs="[dict(logits=torch.randn(2, 9), top_k=3), dict(logits=torch.randn(2, 9), top_k=5)]"),
        Example("""
            import torch
            from torch import nn

            class Unroll(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cell = nn.Linear(4, 4)

                def forward(self, h, steps):  # recompile
                    for _ in range(steps):  # recompile
                        h = torch.tanh(self.cell(h))
                    return h

            BREAKSCAN_TARGETS = {"Unroll()": "[(torch.randn(2, 4), 2), (torch.randn(2, 4), 3), (torch.randn(2, 4), 5)]"}
        """, entry="Unroll()", inputs="[(torch.randn(2, 4), 2), (torch.randn(2, 4), 3), (torch.randn(2, 4), 5)]"),
        Example("""
            import dataclasses
            import torch

            @dataclasses.dataclass(frozen=True)
            class Sampling:
                top_k: int = 1
                temperature: float = 1.0

            def pick(logits, cfg):
                return (logits / cfg.temperature).topk(cfg.top_k).values  # recompile

            def request(temperature=1.0, **options):
                return torch.randn(2, 8), Sampling(temperature=temperature, **options)

            BREAKSCAN_TARGETS = {"pick": "[request(), request(top_k=3)]"}  # passed on through `**options`
        """, entry="pick", inputs="[request(), request(top_k=3)]"),
    )
    valid = (
        Example("""
            import torch

            @torch.compile(backend="eager", dynamic=True)
            def shift(x, offset):
                return x + offset

            def fn(x):
                for i in range(10):
                    x = shift(x, i)
                return x
        """, compiled=False),
        Example("""
            import torch

            def scale(x, i):
                return x * i

            step = torch.compile(scale, backend="eager")

            def fn(x):
                for i in range(4):
                    x = step(x, torch.tensor(i))
                return x
        """, compiled=False),
    )

    number = "int"  # the kind of the varying argument this rule reports

    def __init__(self) -> None:
        self.done: set[str] = set()
        self.reads = FirstReads()
        self.looped: dict | None = None  # parameters a loop varies (asked once per walk)
        self.named: set[int] = set()  # `T = cfg.temperature`: field reads kept in a name, guarded where it is used

    def on_Call(self, node: cst.Call, ctx) -> None:
        self.reads.on_call(node)

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.named.add(id(node.value))

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.reads.on_attribute(node)
        read = self.reads.first_field_read(node, ctx)
        if read is not None and v.varying_number(read[1]) == self.number and id(node) not in self.named:
            self.report_declared(node, read[0], read[1], ctx)  # `cfg.top_k` of objects built with other numbers

    def on_Name(self, node: cst.Name, ctx) -> None:
        if node.value in self.done:
            return
        if v.varying_number(value := ctx.local_value(node.value)) == self.number:
            # given other numbers by the declared calls: guarded where first used, in a helper too
            if self.reads.first_read(node, ctx):
                self.done.add(node.value)
                self.report_declared(node, node.value, value, ctx)
            return
        if self.looped is None:
            self.looped = self._looped_parameters(ctx)
        call = self.looped.get(node.value)
        if call is None or call.dynamic == "True":
            return
        self.done.add(node.value)
        self.report_varying(node, call, ctx)

    def _looped_parameters(self, ctx) -> dict:
        """The function's parameters a loop gives this rule's kind of number, each with its first call."""
        function = ctx.function
        calls = ctx.module.varying_calls.get(f"{ctx.module.name}.{function.qualname}", ())
        params = [p.name.value for p in (*function.node.params.posonly_params, *function.node.params.params)]
        found: dict = {}
        for call in calls:
            name = call.keyword or (params[call.position] if call.position is not None and call.position < len(params)
                                    else None)
            if call.number == self.number and name is not None:
                found.setdefault(name, call)
        return found

    def report_declared(self, node: cst.BaseExpression, name: str, value: v.Value, ctx) -> None:
        what = f"the calls BREAKSCAN_TARGETS declares give `{name}` different {self.number}s"
        if not ctx.dynamo.enabled("automatic_dynamic_shapes"):
            ctx.report(self, node, f"{what}: TorchDynamo guards on its value, so every new value recompiles "
                                   f"this function, until the recompile limit ({ctx.dynamo.number('recompile_limit')})")
            return
        count = _loop_count(node, ctx) if v.is_many_varying_ints(value) and not ctx.is_called else None
        if count is None:
            ctx.report(self, node, f"{what}: TorchDynamo guards on its value, so the second value recompiles this "
                                   "function (then, with automatic dynamic shapes, it becomes dynamic)",
                       severity="warning")
            return
        ctx.report(self, node, f"{what}: TorchDynamo guards on its value, so the second value recompiles this "
                               f"function; it then becomes dynamic, but `{ctx.code(count)}` unrolls a loop of that "
                               "many passes and specialises it again", severity="warning")
        function = ctx.function.node
        ctx.report(self, function.decorators[0] if function.decorators else function,
                   f"{what}, three or more, and one sets a loop's count (`{ctx.code(count)}`): from the third, each "
                   "value recompiles this function, on the guard the loop's unrolling puts on the dynamic int, which "
                   "TorchDynamo places at no line of the function but its `def`", severity="warning")

    def report_varying(self, node: cst.Name, call, ctx) -> None:
        if call.dynamic == "False" or not ctx.dynamo.enabled("automatic_dynamic_shapes"):
            ctx.report(self, node, f"this compiled function is called in a loop with the loop's int as `{node.value}` "
                                   f"(`{call.call}`), and compiled static: every value recompiles it, until the "
                                   f"recompile limit ({ctx.dynamo.number('recompile_limit')}), then it runs eagerly")
        else:
            ctx.report(self, node, f"{self.message} (`{call.call}`)", severity="warning")


def _loop_count(node: cst.BaseExpression, ctx) -> cst.Call | None:
    """A `range(...)` call of the function given the number read at `node` (`range(num_steps)`,
    `range(cfg.n_samples)`): TorchDynamo unrolls the loop, so it needs the number's value."""
    text = ctx.code(node)
    return next((call for call in find_nodes(ctx.function.node.body, (cst.Call,), prune=(cst.FunctionDef,))
                 if isinstance(call, cst.Call) and ctx.qualname(call.func) == "builtins.range"
                 and any(ctx.code(argument.value) == text for argument in call.args)), None)
