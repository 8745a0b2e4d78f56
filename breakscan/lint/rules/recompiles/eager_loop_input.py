import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import ancestors, find_nodes, parent_map


class EagerLoopCarriedInput(Rule):
    id = "BR016"
    name = "eager-loop-carried-input"
    kind = "recompile"
    gb_ids = ()
    severity = "warning"
    message = ("this function is called in a loop of a frame TorchDynamo runs eagerly (after a break it cannot "
               "resume from), given a tensor that requires no grad on the first pass (the function's input, or one "
               "it makes) and, on the next, one the loop computed with the module's layers: compiled as a frame "
               "of its own, it guards on its input's `requires_grad` (and size), so the second call recompiles it")
    fix_hint = ("fix the break that makes the calling frame run eagerly (see its finding), so the loop is traced "
                "as a whole; or expect one more compile of the called function")
    docs = """
    ## What it does
    Flags a function, method or module `forward` (at its first line) that a compiled function
    calls in a loop, with an argument the loop carries from one pass to the next (`for blk in
    self.blocks: x = blk(x)`, `x = x + blk(x)`, `tok, h = self.step(tok, h)`, `if done(z_next, z):
    ... z = z_next` after `z_next = self.f(z)`), starting from the caller's own input and computed
    in the loop with a layer (a module, a method that calls one, a function given one), when the
    caller has a break TorchDynamo cannot resume from (in the loop, in a `try`, an RNN): only then
    does the caller run eagerly. Only a caller that no scanned code calls (the
    model's input is its input): one that another module calls may be given an activation, which
    requires grad from the start. The input may first go through calls of no layer
    (`x = torch.cat([x, x], -1)` before the loop), into a local too, and the module's buffers
    (`state = (x - self.mean) / self.std`), which require no grad; or the loop may start from a
    tensor a factory makes (`flow = torch.zeros(B, 2, H, W)`). Where that function breaks itself, each frame
    TorchDynamo resumes it in that reads the input (or holds it on its stack) is flagged at the
    break, and so is a helper it hands the input to at a breaking call: at its `def` when it
    reads the input before its first break, and where it resumes.

    ## Why is this bad?
    When TorchDynamo gives up on a frame, it runs it eagerly and compiles each function it calls
    as a frame of its own. The first pass gives the callee the caller's input, which does not
    require grad; the next passes give it what the loop computed, which does (with the module's
    parameters): its guard on `requires_grad` fails, and it compiles again (once, in
    grad mode; both compiled versions stay cached). Layers whose inputs change size recompile too.
    The extra compile comes on top of the lost whole-loop graph. A frame resumed after a break
    guards the input again, so it recompiles as well.

    ## Example
    ```python
    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
            logger.debug("block done")   # breaks in the loop: forward runs eagerly
        return x
    ```

    ## Use instead
    Remove the break from the loop (log after it, or not under compile); the loop is then traced
    into one graph and no block is compiled on its own.
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):  # recompile
                    return self.fc(x).relu()

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(Block() for _ in range(3))

                def forward(self, x):
                    for blk in self.blocks:
                        x = blk(x)
                        print("block done")  # break (another rule)
                    return x
        """, entry="Stack()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cell = nn.Linear(8, 8)

                def _step(self, h):  # recompile
                    return torch.tanh(self.cell(h))

                def forward(self, h):
                    for _ in range(3):
                        h = self._step(h)
                        if h.sum() > 0:  # break (another rule)
                            h = h * 0.5
                    return h
        """, entry="Decoder()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            def count_nodes(index):
                return int(index.max()) + 1  # break (another rule)

            def scatter_mean(src, index):
                size = count_nodes(index)  # recompile
                return src.new_zeros(size, src.shape[-1]).index_add_(0, index, src)

            class Conv(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)

                def forward(self, x, index):  # recompile
                    aggr = scatter_mean(x, index)  # recompile
                    return self.lin(aggr + x)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList(Conv() for _ in range(2))

                def forward(self, x, index):
                    for layer in self.layers:
                        x = layer(x, index)
                    return x
        """, entry="Net()", inputs="[(torch.randn(6, 8), torch.arange(6)), (torch.randn(6, 8), torch.arange(6))]"),
        Example("""
            import torch
            from torch import nn

            class Stepper(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)

                def forward(self, state):  # recompile
                    return state + 0.1 * self.fc(state)

            class Rollout(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stepper = Stepper()
                    self.register_buffer("mean", torch.zeros(4))

                def forward(self, x):
                    state = x - self.mean  # a buffer requires no grad: still the input
                    for _ in range(2):
                        state = self.stepper(state)
                        print("step done")  # break (another rule)
                    return state
        """, entry="Rollout()", inputs="[torch.randn(2, 4), torch.randn(2, 4)]"),
        Example("""
            import time

            import torch
            from torch import nn

            class Update(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 2)

                def forward(self, feats, flow):  # recompile
                    return flow + self.proj(feats)

            class Refiner(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.update = Update()

                def forward(self, feats):
                    flow = torch.zeros(feats.shape[0], 2)  # made here: requires no grad
                    for _ in range(3):
                        started = time.perf_counter()  # break (another rule)
                        flow = self.update(feats, flow)
                    return flow
        """, entry="Refiner()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            def residual_norm(update, state):  # recompile
                return (update - state).norm()

            class FixedPoint(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.f = nn.Linear(4, 4)

                def forward(self, z):
                    for _ in range(3):
                        z_next = torch.tanh(self.f(z))
                        if residual_norm(z_next, z) < 1e-3:  # break (another rule)
                            break
                        z = z_next  # computed with the layer: requires grad from the second pass
                    return z
        """, entry="FixedPoint()", inputs="[torch.randn(2, 4), torch.randn(2, 4)]"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Quantizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.codebook = nn.Linear(8, 8)

                def forward(self, z):
                    return self.codebook(z).tanh()

            class ResidualQuantizer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = nn.ModuleList(Quantizer() for _ in range(3))

                def forward(self, x):
                    residual, out = x, torch.zeros_like(x)
                    for layer in self.layers:
                        q = layer(residual)
                        residual = residual - q.detach()  # never comes to require grad
                        out = out + q
                        print("stage done")  # break (another rule)
                    return out
        """, entry="ResidualQuantizer()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Denoiser(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(6, 16), nn.SiLU(), nn.Linear(16, 6))

                def forward(self, sample):
                    return sample - 0.1 * self.net(sample)

            class Sampler(nn.Module):
                def __init__(self, steps=3):
                    super().__init__()
                    self.denoiser = Denoiser()
                    self.steps = steps

                def forward(self, noise):
                    with torch.no_grad():  # nothing requires grad: every pass gives the same
                        for step in range(self.steps):
                            noise = self.denoiser(noise)
                            print(f"step {step}")  # break (another rule)
                    return noise
        """, entry="Sampler()", inputs="[torch.randn(2, 6), torch.randn(2, 6)]"),
        Example("""
            import torch
            from torch import nn

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    return self.fc(x).relu()

            class Stack(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(Block() for _ in range(3))

                def forward(self, x):
                    for blk in self.blocks:
                        x = blk(x)  # the loop is traced whole: no block is compiled on its own
                    return x
        """, entry="Stack()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
        Example("""
            import torch
            from torch import nn

            class Refine(nn.Module):
                def __init__(self, width):
                    super().__init__()
                    self.mix = nn.Linear(width, width)
                    self.rounds = 2

                def forward(self, h):
                    for r in range(self.rounds):
                        h = torch.tanh(self.mix(h))
                        print("round", r)  # break (another rule)
                    return h

            class Cascade(nn.Module):
                def __init__(self, width=6):
                    super().__init__()
                    self.stages = nn.ModuleList([Refine(width), Refine(width)])

                def forward(self, h):
                    for stage in self.stages:
                        h = stage(h)  # it breaks in its loop: this frame runs eagerly, and each
                    return h  # stage gives up before its first graph, so it never recompiles
        """, entry="Cascade()", inputs="[torch.randn(3, 6), torch.randn(3, 6)]"),
    )

    def __init__(self) -> None:
        self.reported: set[str] = set()

    def on_Call(self, node: cst.Call, ctx) -> None:
        if not ctx.loop_depth or ctx.is_called:
            return  # called by scanned code, its input may be an activation that requires grad already
        if _without_grad(node, ctx):
            return  # nothing computed requires grad: every pass gives the same
        carried = [argument.value for argument in node.args if isinstance(argument.value, cst.Name)
                   and ctx.is_known_tensor(argument.value) and _carried_from_input(argument.value.value, node, ctx)]
        if not carried:
            return
        for callee in ctx.callees(node):
            owner = f"{callee.module.name}.{callee.class_name}"
            if callee.key in self.reported or owner in ctx.call_sites.per_instance_compiles:
                continue  # compiled layer by layer: BR006's, whose guard TorchDynamo reports first
            self.reported.add(callee.key)
            start = callee.node.decorators[0] if callee.node.decorators else callee.node
            ctx.report_in(self, callee, start, f"{self.message} (`{ctx.code(node)}`, carrying "
                                               f"`{carried[0].value}`)", only_if_eager=True,
                          differing_inputs=_parameters_carrying(node, callee, carried))


_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode"})


def _without_grad(call: cst.Call, ctx) -> bool:
    """Whether the call runs with grad mode off: the function is decorated `@torch.no_grad()` (or
    `inference_mode`), or the call is in a `with torch.no_grad():` block."""
    if any(ctx.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in _GRAD_OFF
           for d in ctx.function.node.decorators):
        return True
    return any(isinstance(holder, cst.With) and any(
        isinstance(item.item, cst.Call) and ctx.qualname(item.item.func) in _GRAD_OFF for item in holder.items)
        for holder in ancestors(call, ctx.memoised(parent_map, ctx.function.top_statement)))


def _parameters_carrying(call: cst.Call, callee, carried: list[cst.Name]) -> tuple[str, ...]:
    """The callee's parameters given the carried names (`blk(x)`: `forward`'s `x`)."""
    names = {name.value for name in carried}
    params = callee.positional_params
    positional = [a for a in call.args if a.keyword is None and not a.star]
    found = [params[i].name.value for i, a in enumerate(positional)
             if i < len(params) and isinstance(a.value, cst.Name) and a.value.value in names]
    found += [a.keyword.value for a in call.args
              if a.keyword is not None and isinstance(a.value, cst.Name) and a.value.value in names]
    return tuple(found)


def _calls_a_layer(method, ctx) -> bool:
    """Whether a method of the module calls one of its layers (`self.lm_head(h)`): a call of
    `self.<name>` where `name` is no method of its class."""
    info = ctx.find_class(f"{method.module.name}.{method.class_name}")
    return info is not None and any(
        isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
        and ctx.method_of(info, call.func.attr.value) is None
        for call in find_nodes(method.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)))


def _carried_from_input(name: str, call: cst.Call, ctx) -> bool:
    """Whether `name` is a parameter of the function, bound nowhere but in the loop around `call`
    (`x = blk(x)`): the loop's first pass gives the call the input, the next ones what it made."""
    function = ctx.function.node
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)} - {"self"}
    loop = next((holder for holder in ancestors(call, ctx.memoised(parent_map, ctx.function.top_statement))
                 if isinstance(holder, (cst.For, cst.While))), None)
    if loop is None:
        return False
    if not _rebound_with_grad(loop, name, ctx):
        return False  # `residual = residual - q.detach()`: it never comes to require grad
    inside = {id(target) for target in _bindings(loop.body, name)}
    outside = {id(target) for target in _bindings(function.body, name)} - inside
    # A parameter, or a local the code before the loop computes from one (`state = (x - self.mean) / self.std`).
    sources = {name} if name in params else params
    return bool(inside) and (name in params or bool(outside)) and outside <= _grad_free_rebindings(
        function.body, loop, name, sources, ctx)


def _rebound_with_grad(loop: cst.For | cst.While, name: str, ctx) -> bool:
    """Whether the loop binds `name` to what may require grad: a value computed there with a layer
    (a call of a module, of a method of the module that calls one, or of a function given one:
    `x = blk(x)`, `x = x + self.fc(x)`, `y_new = step(self.f, y)`) or with a name so bound, not
    through `.detach()` (`t, y = t + h, y_new`; not `residual = residual - q.detach()`)."""
    bindings: list[tuple[set[str], cst.BaseExpression]] = []
    for node in find_nodes(loop.body, (cst.Assign, cst.AugAssign, cst.AnnAssign), prune=(cst.FunctionDef,
                                                                                           cst.Lambda)):
        if node.value is None:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if (isinstance(target, cst.Tuple) and isinstance(node.value, cst.Tuple)
                    and len(target.elements) == len(node.value.elements)
                    and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *node.value.elements))):
                bindings += [(_bound_names(t.value), e.value) for t, e in zip(target.elements, node.value.elements)]
            else:
                bindings.append((_bound_names(target), node.value))
    graded: set[str] = set()
    changed = True
    while changed:
        changed = False
        for names, value in bindings:
            if not names <= graded and _computed_with_grad(value, graded, ctx):
                graded |= names
                changed = True
    return name in graded


def _bound_names(target: cst.BaseExpression) -> set[str]:
    return {n.value for n in find_nodes(target, (cst.Name,), prune=(cst.Attribute, cst.Subscript))
            if isinstance(n, cst.Name)}


def _computed_with_grad(value: cst.BaseExpression, graded: set[str], ctx) -> bool:
    """Whether the expression calls a layer, or reads a name in `graded` other than through `.detach()`."""
    calls = [call for call in find_nodes(value, (cst.Call,), prune=(cst.Lambda,)) if isinstance(call, cst.Call)]
    unread = {id(n) for call in calls if isinstance(call.func, cst.Attribute) and call.func.attr.value == "detach"
              for n in find_nodes(call.func.value, (cst.Name,))}
    unread |= {id(a.attr) for a in find_nodes(value, (cst.Attribute,)) if isinstance(a, cst.Attribute)}
    unread |= {id(arg.keyword) for call in calls for arg in call.args if arg.keyword is not None}
    if any(isinstance(n, cst.Name) and n.value in graded and id(n) not in unread
           for n in find_nodes(value, (cst.Name,), prune=(cst.Lambda,))):
        return True
    return any(_calls_with_layer(call, ctx) for call in calls)


def _calls_with_layer(call: cst.Call, ctx) -> bool:
    """A call of a module, of a method of the module that calls one of its layers, or of a function
    given a module: what it gives is computed with parameters."""
    if ctx.is_module(ctx.value(call.func)) or any(ctx.is_module(ctx.value(arg.value)) for arg in call.args):
        return True
    return (isinstance(call.func, cst.Attribute) and ctx.value(call.func.value) == v.SELF and ctx.self_is_module()
            and any(_calls_a_layer(method, ctx) for method in ctx.callees(call)))


def _grad_free_rebindings(body: cst.CSTNode, loop: cst.CSTNode, name: str, sources: set[str], ctx) -> set[int]:
    """`id` of the names `name` that statements before the loop bind to what they compute from
    `sources` with no layer and no attribute of the object but its buffers (`x = torch.cat([x, x],
    dim=-1)`, `x = (x - self.mean) / self.std`): the input still, as far as requiring grad goes."""
    owner = ctx.self_class
    buffers = {attr for known in ctx.class_lineage(owner) for attr in known.buffer_attrs} if owner else set()
    found: set[int] = set()
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if statement is loop:
            break
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            value = small.value
            reads = {n.value for n in find_nodes(value, (cst.Name,)) if isinstance(n, cst.Name)}
            layered = any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == "self"
                          and n.attr.value not in buffers for n in find_nodes(value, (cst.Attribute,))) or any(
                ctx.is_module(ctx.value(call.func)) for call in find_nodes(value, (cst.Call,)) if isinstance(call, cst.Call))
            if (reads & sources and not layered) or _made_without_grad(value, ctx):
                found |= {id(target) for target in _bindings(small, name)}
    return found


def _made_without_grad(value: cst.BaseExpression, ctx) -> bool:
    """A tensor a factory makes afresh, which requires no grad (`flow = torch.zeros(B, 2, H, W)`,
    `h = x.new_zeros(n, d)`), unless told to."""
    if not isinstance(value, cst.Call) or any(a.keyword is not None and a.keyword.value == "requires_grad"
                                              for a in value.args):
        return False
    qualified = ctx.qualname(value.func) or ""
    if qualified.startswith("torch.") and qualified.rpartition(".")[2] in _FACTORIES:
        return True
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in _NEW_FACTORIES and ctx.is_known_tensor(
        value.func.value)


_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "randn", "rand", "randint", "arange", "linspace", "eye",
                        "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like", "tensor"})
_NEW_FACTORIES = frozenset({"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})


def _bindings(block: cst.CSTNode, name: str) -> list[cst.Name]:
    """The names `name` that assignments and loops in the block bind (targets, unpacked or not)."""
    targets: list[cst.BaseExpression] = []
    for node in find_nodes(block, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For), prune=(cst.FunctionDef,
                                                                                            cst.Lambda)):
        if isinstance(node, cst.Assign):
            targets.extend(target.target for target in node.targets)
        else:
            targets.append(node.target)
    return [found for target in targets for found in find_nodes(target, (cst.Name,), prune=(cst.Attribute,
                                                                                            cst.Subscript))
            if isinstance(found, cst.Name) and found.value == name]

