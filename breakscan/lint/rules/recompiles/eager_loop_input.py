import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.grad import carried_from_input, parameters_carrying, without_grad


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
    caller has a break TorchDynamo cannot resume from (in the loop, in a `try`; before the loop, an
    RNN or an unsupported `with`, after which the rest of the function runs eagerly): only then
    does the caller run the loop eagerly. Only a caller that no scanned code calls (the
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
        Example("""
            import torch
            from torch import nn

            class Stepper(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)

                def log_step(self):
                    print("step")  # break (another rule)

                def forward(self, state):  # its first graph reads no input: guards none
                    self.log_step()  # recompile
                    return state + 0.1 * self.fc(state)

            class Rollout(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stepper = Stepper()

                def forward(self, x):
                    state = x
                    for _ in range(2):
                        state = self.stepper(state)
                    return state
        """, entry="Rollout()", inputs="[torch.randn(2, 4), torch.randn(2, 4)]"),
        Example("""
            import time

            import torch
            from torch import nn

            class StageTimer:
                def __enter__(self):
                    self.start = time.perf_counter()
                    return self

                def __exit__(self, *exc):
                    return False

            class Block(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):  # recompile
                    return self.fc(x).relu()

            class Trunk(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(Block() for _ in range(2))
                    self.timer = StageTimer()

                def forward(self, z):
                    with self.timer:  # break (another rule)
                        z = z * 2  # still the input, as far as requiring grad goes
                    for block in self.blocks:
                        z = block(z)  # after the `with`: run eagerly
                    return z
        """, entry="Trunk()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
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
        Example("""
            import time

            import torch
            from torch import nn

            class StageTimer:
                def __enter__(self):
                    self.start = time.perf_counter()
                    return self

                def __exit__(self, *exc):
                    return False

            class Trunk(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))
                    self.head = nn.Linear(8, 4)
                    self.timer = StageTimer()

                def forward(self, z):
                    for block in self.blocks:
                        z = z + block(z)  # compiled up to the `with`: the loop is in that graph
                    with self.timer:  # break (another rule)
                        logits = self.head(z)
                    return logits.log_softmax(-1)
        """, entry="Trunk()", inputs="[torch.randn(2, 8), torch.randn(2, 8)]"),
    )

    def __init__(self) -> None:
        self.reported: set[str] = set()

    def on_Call(self, node: cst.Call, ctx) -> None:
        if not ctx.loop_depth or ctx.is_called:
            return  # called by scanned code, its input may be an activation that requires grad already
        if without_grad(node, ctx):
            return  # nothing computed requires grad: every pass gives the same
        carried = [argument.value for argument in node.args if isinstance(argument.value, cst.Name)
                   and ctx.is_known_tensor(argument.value) and carried_from_input(argument.value.value, node, ctx)]
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
                          differing_inputs=parameters_carrying(node, callee, carried))
