import sys

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.reads import first_reads
from breakscan.lint.traverse import ancestors, find_nodes, parent_map

# The Python numbers TorchDynamo specialises a frame's argument on (`sigma == 1.0`).
_NUMBERS = (v.INT, v.FLOAT, v.BOOL)


class EagerVaryingNumber(Rule):
    id = "BR017"
    name = "eager-varying-number-argument"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("this function is called from a frame TorchDynamo runs eagerly (after a break it cannot resume "
               "from) with a Python number that changes from call to call: compiled as a frame of its own, it "
               "guards on the number's value here, so the next value recompiles it (then, with automatic dynamic "
               "shapes, the number becomes dynamic)")
    fix_hint = ("fix the break that makes the calling frame run eagerly (see its finding), so the calls are traced "
                "inline; or pass the number as a 0-d tensor (`torch.tensor(sigma)`)")
    docs = """
    ## What it does
    Flags the first use of a parameter, in a function or module `forward` that a frame running
    eagerly calls (after a break TorchDynamo cannot resume from: in a loop, in a `try`, an RNN)
    with a Python int, float or bool that differs from call to call: one the loop around the call
    changes (`for i, sigma in enumerate(sigmas): x = self.model(x, sigma)`, or a number computed
    from the loop's variable), or other literal numbers at two calls (`self._mask(x, -2)`, then
    `self._mask(x, -1)`). Reported where TorchDynamo guards the value: its first use.

    ## Why is this bad?
    When TorchDynamo gives up on a frame, it runs it eagerly and compiles each function it calls
    as a frame of its own. A Python number given to a frame is specialised: the first call guards
    its value (`sigma == 1.0`), the next value fails the guard and recompiles. With automatic
    dynamic shapes (the default) the second compile makes it dynamic, so the cost is one more
    compile per function, on top of the lost whole-loop graph; with `dynamic=False` every value
    recompiles, up to the recompile limit.

    ## Example
    ```python
    def forward(self, x):
        for i in range(steps):
            sigma = 1.0 / (i + 1)
            x = self.denoiser(x, sigma)
            print(f"step {i}")   # breaks in the loop: forward runs eagerly
        return x
    ```

    ## Use instead
    Remove the break from the loop (log after it, or not under compile): the loop is traced into
    one graph, where `sigma` is a constant of each step. Or pass a 0-d tensor, which is a graph
    input and never recompiles.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Denoiser(nn.Module):
                def forward(self, x, sigma):
                    h = x.sin()
                    return x - sigma * h  # recompile

            class Sampler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = Denoiser()

                def forward(self, x):
                    for i in range(3):
                        sigma = 1.0 / (i + 1)
                        x = self.model(x, sigma)
                        print("step")  # break (another rule)
                    return x
        """, entry="Sampler()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Masker(nn.Module):
                def _mask(self, x, axis):
                    n = x.shape[axis]  # recompile
                    return x * n

                def forward(self, x):
                    for _ in range(2):
                        x = self._mask(x, -2)
                        x = self._mask(x, -1)
                        print("masked")  # break (another rule)
                    return x
        """, entry="Masker()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch

            def shift(x, k):
                y = x.cos()
                return y + k  # recompile

            @torch.compile
            def fn(x):
                for k in range(3):
                    x = shift(x, k)
                    print("shifted")  # break (another rule)
                return x
        """, inputs="[torch.randn(8), torch.randn(8)]"),
        Example("""
            import torch

            DECAY = {0: 1.0, 1: 0.5}

            def damp(x, step):
                rate = DECAY.get(step, 0.25)  # recompile
                return x * rate

            @torch.compile
            def fn(x):
                for step in range(2):
                    x = damp(x, step)  # a method of a module-level object reads it: no helper
                    print("damped")  # break (another rule)
                return x
        """, inputs="[torch.randn(8), torch.randn(8)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Denoiser(nn.Module):
                def forward(self, x, sigma):
                    return x - sigma * x.sin()

            class Sampler(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.model = Denoiser()

                def forward(self, x):
                    for i in range(3):
                        x = self.model(x, 1.0 / (i + 1))  # traced inline: each step's number is a constant
                    print("sampled")  # break (another rule)
                    return x
        """, entry="Sampler()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch

            def shift(x, k):
                return x.cos() + k

            @torch.compile
            def fn(x):
                for _ in range(3):
                    x = shift(x, 2)  # the same number on every call
                    print("shifted")  # break (another rule)
                return x
        """, inputs="[torch.randn(8), torch.randn(8)]"),
    )

    def __init__(self) -> None:
        self.reported: set[tuple[str, str]] = set()
        # callee -> parameter -> the literal number each call so far passed it
        self.literals: dict[tuple[str, str], set[str]] = {}

    def on_Call(self, node: cst.Call, ctx) -> None:
        callees = [callee for callee in ctx.callees(node) if not callee.disabled]
        if not callees:
            return
        loop = _enclosing_loop(node, ctx)
        varying = ctx.memoised(_loop_varying_names, loop) if loop is not None else frozenset()
        for callee in callees:
            if f"{callee.module.name}.{callee.class_name}" in ctx.call_sites.per_instance_compiles:
                continue  # compiled layer by layer: BR006's
            if not _compiled_as_frame(node, callee, ctx):
                continue
            for param, argument in _bound_arguments(node, callee):
                if ctx.value(argument) not in _NUMBERS:
                    continue
                how = None
                if varying and _reads_any(argument, varying):
                    how = f"the loop changes `{ctx.code(argument)}`"
                elif (literal := _literal_number(argument)) is not None:
                    seen = self.literals.setdefault((callee.key, param), set())
                    seen.add(literal)
                    if len(seen) > 1:
                        how = f"the calls pass {', '.join(sorted(seen))}"
                if how is not None:
                    self._report(callee, param, f"{how} (`{ctx.code(node)}`)", ctx)

    def _report(self, callee, param: str, how: str, ctx) -> None:
        if (callee.key, param) in self.reported:
            return
        read = ctx.memoised(first_reads, callee.node).get(param)
        if read is None or _passed_on(read, callee):
            return  # never read: never guarded; passed on to a helper: guarded where it reads it
        self.reported.add((callee.key, param))
        ctx.report_in(self, callee, read, f"{self.message}: `{param}`, where {how}", surely_eager=True)


def _compiled_as_frame(call: cst.Call, callee, ctx) -> bool:
    """Whether TorchDynamo compiles the function when eager code calls it: only a frame that holds
    something of torch's (`has_tensor_in_frame`): an nn.Module's method (its `self`), a tensor or
    a module passed to it, or a torch module it reads as a global (`torch.cat`, `F.relu`). A helper
    given Python numbers alone runs as it is, unguarded."""
    if callee.class_name is not None and not callee.is_staticmethod:
        info = ctx.find_class(f"{callee.module.name}.{callee.class_name}")
        if info is not None and ctx.is_module_class(info):
            return True
    if any(ctx.value(argument.value) in (v.TENSOR, v.TENSORS) or ctx.is_module(ctx.value(argument.value))
           for argument in call.args):
        return True
    imports = callee.module.imports
    return any(isinstance(node.value, cst.Name) and (imports.get(node.value.value) or "").partition(".")[0] == "torch"
               for node in find_nodes(callee.node.body, (cst.Attribute,)))


def _passed_on(name: cst.Name, function) -> bool:
    """Whether the name is read as an argument of a call of a helper, which TorchDynamo inlines: its
    own first use of the value is where the guard is. Not torch's, the standard library's, nor a
    method of a module-level object (`logger.info(...)`), which TorchDynamo runs or breaks on there."""
    module = function.module
    for call in find_nodes(function.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(call, cst.Call) and any(argument.value is name for argument in call.args):
            dotted = dotted_name(call.func) or ""
            head = dotted.partition(".")[0]
            if head in module.assignments and not (head in module.functions or head in module.classes):
                return False
            called = module.qualify(dotted) or ""
            return called.partition(".")[0] not in _NOT_HELPERS
    return False


_NOT_HELPERS = frozenset({"torch", *sys.stdlib_module_names})


def _enclosing_loop(node: cst.Call, ctx) -> cst.For | cst.While | None:
    if not ctx.loop_depth:
        return None
    return next((holder for holder in ancestors(node, ctx.memoised(parent_map, ctx.function.top_statement))
                 if isinstance(holder, (cst.For, cst.While))), None)


def _loop_varying_names(loop: cst.For | cst.While) -> frozenset[str]:
    """The names whose value changes from one pass of the loop to the next: the loop's variables,
    what the body updates from itself (`t += dt`), and what it computes from either."""
    varying = {name.value for name in _names(loop.target)} if isinstance(loop, cst.For) else set()
    assignments: list[tuple[set[str], cst.BaseExpression]] = []
    for node in find_nodes(loop.body, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For),
                           prune=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(node, cst.For):
            varying.update(name.value for name in _names(node.target))
            continue
        if node.value is None:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        bound = {name.value for target in targets for name in _names(target)}
        if isinstance(node, cst.AugAssign):
            varying |= bound
        assignments.append((bound, node.value))
    changed = True
    while changed:
        changed = False
        for bound, value in assignments:
            if not bound <= varying and _reads_any(value, varying | bound):
                varying |= bound
                changed = True
    return frozenset(varying)


def _names(target: cst.BaseExpression) -> list[cst.Name]:
    """The names an assignment or loop target binds (not those inside `obj.attr` or `seq[i]`)."""
    return [n for n in find_nodes(target, (cst.Name,), prune=(cst.Attribute, cst.Subscript)) if isinstance(n, cst.Name)]


def _reads_any(expression: cst.BaseExpression, names: frozenset[str] | set[str]) -> bool:
    attributes = {id(node.attr) for node in find_nodes(expression, (cst.Attribute,))}
    return any(isinstance(n, cst.Name) and n.value in names and id(n) not in attributes
               for n in find_nodes(expression, (cst.Name,), prune=(cst.Lambda,)))


def _literal_number(expression: cst.BaseExpression) -> str | None:
    """The text of a literal number (`-2`, `0.5`, `True`), else None."""
    if isinstance(expression, cst.UnaryOperation) and isinstance(expression.operator, cst.Minus):
        inner = _literal_number(expression.expression)
        return f"-{inner}" if inner is not None else None
    if isinstance(expression, (cst.Integer, cst.Float)):
        return expression.value
    if isinstance(expression, cst.Name) and expression.value in ("True", "False"):
        return expression.value
    return None


def _bound_arguments(call: cst.Call, callee) -> list[tuple[str, cst.BaseExpression]]:
    """The call's arguments, each with the parameter of `callee` it binds."""
    if any(argument.star for argument in call.args):
        return []
    positional = [p.name.value for p in callee.positional_params]
    named = set(positional) | {p.name.value for p in callee.node.params.kwonly_params}
    bound: list[tuple[str, cst.BaseExpression]] = []
    for index, argument in enumerate(a for a in call.args if a.keyword is None):
        if index < len(positional):
            bound.append((positional[index], argument.value))
    bound += [(a.keyword.value, a.value) for a in call.args if a.keyword is not None and a.keyword.value in named]
    return bound
