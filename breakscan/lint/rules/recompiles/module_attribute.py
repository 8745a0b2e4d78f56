import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.index import FunctionInfo
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.built import built_truth
from breakscan.lint.semantics.state import held_attribute, persistent_attribute
from breakscan.lint.semantics.steps import lineages_at, step_methods
from breakscan.lint.traverse import find_nodes, parent_map, subtree_ids
from breakscan.model import Severity


class ModuleAttributeUpdated(Rule):
    id = "BR001"
    name = "module-attribute-updated"
    kind = "recompile"
    gb_ids = ()
    message = ("an int attribute of the module is read here and updated later in compiled code: TorchDynamo "
               "specialises module int attributes, so every call recompiles (until the recompile limit, "
               "then the function runs eagerly)")
    fix_hint = ("keep the value as a 0-d tensor buffer (`self.register_buffer(\"step\", torch.zeros((), "
                "dtype=torch.long))`), or update it outside the compiled code")
    docs = """
    ## What it does
    Flags the first read, in compiled code, of a number, bool or None attribute of an `nn.Module`
    (set to an int, float, bool or None in `__init__`) that the same function updates afterwards
    (or a step between the calls `BREAKSCAN_TARGETS` declares), and of a plain object the module
    keeps in an attribute (`self.cache.seen`, read directly or through a method that returns it,
    updated by a method of the object: `self.cache.update(n)`):
    `self.step += 1`, `self.seen = self.seen + n`, `if self.first: ... self.first = False`,
    `if self.cache is None: self.cache = ...` (a module stored there, as a lazily built head or a
    deep-copied teacher, moves into the module's submodules, and TorchDynamo's guard on it is
    reported where the function starts), or a flag a method it calls sets to the other value
    than `__init__` gives it (`self._initialize(x)` setting `self.initialized = True`). Reported
    where TorchDynamo installs its guard: the read, or, for a copy in a local (`count =
    self.count`), where the local is first used. An int counted up under a test of a tensor's data
    (`if not torch.isfinite(loss): self.skipped += 1`) is a warning: only calls whose data takes
    that branch recompile. An attribute of a held object read through a local name for it (`cfg =
    self.precision; cfg.use_amp`) is read there. A list, dict or set attribute whose contents a
    step changes (`self.enabled.update(names)`) is guarded where it is read (an `nn.ModuleList` or
    another of torch's containers of the compiled module itself, as the function starts); a list
    whose numbers a step sets (`self.side_weights[i] = float(w)`), where its items are first used
    (in a loop over it, or over a `zip` or `enumerate` of it: where the loop's name for the item is
    first read).

    ## Why is this bad?
    TorchDynamo 2.13 treats an nn.Module's int and bool attributes as constants and guards on
    their value (`self.step == 0`). An attribute that the compiled code itself changes fails that
    guard on the next call. For an int, every call compiles the function again, and after 8
    recompiles (`torch._dynamo.config.recompile_limit`) TorchDynamo gives up and runs it eagerly:
    an error. A float is made dynamic after its first recompile, and a bool has two values: one
    recompile each, a warning.
    An attribute set to a value not computed from itself (`self.cached_len = seq_len`) fails
    the guard only when the value changes: once, for a length the same from call to call, a
    warning. An attribute that is None until the compiled code fills it (a lazily built cache)
    fails its `is None` guard once, on the second call: a warning. A function that puts back the
    value it read before it ends (`saved = self.active ... self.active = saved`) leaves the guard
    holding, and is not flagged; nor is a store under a flag the class leaves off when built with
    its defaults (`if self.cached:` with `cached: bool = False`: torch-geometric's GCNConv).
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` makes an int attribute dynamic
    after one recompile (then the finding is a warning); a tensor buffer avoids recompiling at
    all. An attribute set without being read first (`self.step = 0`) does not recompile, and is
    not flagged.
    A method that the steps `BREAKSCAN_TARGETS` declares between calls call on the module or on a
    submodule (`"[x, lambda m: m.set_alpha(0.5), x]"`, `lambda m: m.pool.set_kind("max")`; read,
    never run) changes what it stores as well, and so does a step that sets an attribute itself
    (`lambda m: setattr(m.config, "temperature", 0.05)`, or a function of the file named as a step,
    `def turn_off(m): m.cfg.normalize = False`, or on every module of a class it holds, `for q in
    m.modules(): if isinstance(q, Quantizer): q.calibrating = False`); so does a method setting an
    attribute of an object the module holds (`self.scale.temperature = value`), read where that
    object's own method reads it (`self.temperature`): the first read of such an attribute in
    compiled code is flagged, a string included (a warning: one recompile for each step that changes
    the value).

    ## Example
    ```python
    def forward(self, x):
        self.step += 1
        return x * self.step
    ```

    ## Use instead
    ```python
    self.register_buffer("step", torch.zeros((), dtype=torch.long))   # in __init__
    ...
    def forward(self, x):
        self.step += 1          # an in-place update of the buffer: no guard on its value
        return x * self.step
    ```
    """
    invalid = (
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = 0

                def forward(self, x):
                    self.step += 1  # recompile
                    return x * self.step
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Warmup(torch.nn.Module):
                def __init__(self, total: int = 100):
                    super().__init__()
                    self.total = total
                    self.seen = 0

                def forward(self, x):
                    self.seen = self.seen + x.shape[0]  # recompile
                    return x * min(1.0, self.seen / self.total)
        """, entry="Warmup()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            torch._dynamo.config.allow_unspec_int_on_nn_module = True  # one recompile, then dynamic

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = 0

                def forward(self, x):
                    self.step += 1  # recompile
                    return x * self.step
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Decay(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rate = 1.0

                def forward(self, x):
                    self.rate *= 0.9  # recompile
                    return x * self.rate
        """, entry="Decay()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Cached(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cached_len = 0

                def forward(self, x):
                    n = x.shape[0]
                    if n <= self.cached_len:  # recompile
                        return x * 2
                    self.cached_len = n
                    return x + 1
        """, entry="Cached()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class FirstCall(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.first = True

                def forward(self, x):
                    if self.first:  # recompile
                        self.first = False
                        return x * 2
                    return x
        """, entry="FirstCall()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Tally(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.count = 0

                def forward(self, x):
                    count = self.count  # read where `count` is first used
                    y = x * 2
                    self.count = count + 1  # recompile
                    return y
        """, entry="Tally()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Rotary(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cached = None

                def forward(self, x):
                    if self.cached is None:  # recompile
                        self.cached = torch.arange(x.shape[-1]) * 0.5
                    return x * self.cached
        """, entry="Rotary()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Positions(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cached_len = None

                def forward(self, x):
                    n = x.shape[-1]
                    if n != self.cached_len:  # recompile
                        self.cached_len = n
                    return x * n
        """, entry="Positions()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Stepper(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self._step_index = None

                def _init_step_index(self):
                    self._step_index = 0  # a method the compiled code calls sets it

                def forward(self, x):
                    if self._step_index is None:  # recompile
                        self._init_step_index()
                    return x * 2
        """, entry="Stepper()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Positions(torch.nn.Module):
                def __init__(self, max_len=4):
                    super().__init__()
                    self._set_cache(max_len)

                def _set_cache(self, seq_len):
                    self.cached_len = seq_len  # `__init__` calls it: an int
                    self.table = torch.arange(seq_len).float()

                def forward(self, x):
                    if x.shape[0] > self.cached_len:  # recompile
                        self._set_cache(x.shape[0])
                    return x + self.table[: x.shape[0]]
        """, entry="Positions(2)", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Normalized(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self._cached = None

                def forward(self, x):
                    cache = self._cached
                    if cache is None:  # recompile
                        weight = torch.ones(x.shape[0]) / x.shape[0]
                        self._cached = (weight, x.shape[0])
                    else:
                        weight, _ = cache
                    return x * weight
        """, entry="Normalized()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch
            from torch import nn

            class LazyHead(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = None

                def forward(self, x):  # recompile
                    if self.head is None:
                        self.head = nn.Linear(x.shape[-1], 2)  # break (another rule)
                    return self.head(x)
        """, entry="LazyHead()", inputs="[torch.ones(3, 4), torch.ones(3, 4), torch.ones(3, 4)]"),
        Example("""
            import torch
            from torch import nn

            class AnnealedLoss(nn.Module):
                def __init__(self, warmup=100):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)
                    self.warmup = warmup
                    self.global_step = 0

                def kl_weight(self):
                    return min(1.0, self.global_step / self.warmup)  # recompile

                def forward(self, x):
                    beta = self.kl_weight()
                    self.global_step += 1
                    return self.proj(x).pow(2).mean() * beta
        """, entry="AnnealedLoss()", inputs="[torch.ones(2, 4), torch.ones(2, 4), torch.ones(2, 4)]"),
        Example("""
            import torch

            class Blend(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.mix = 0.0

                def set_mix(self, mix):
                    self.mix = float(mix)  # called between steps, outside the compiled code

                def forward(self, x):
                    return (1 - self.mix) * x + self.mix * x.sin()  # recompile

            BREAKSCAN_TARGETS = {"Blend()": "[torch.ones(4), lambda m: m.set_mix(0.5), torch.ones(4)]"}
        """, entry="Blend()", inputs="[torch.ones(4), lambda m: m.set_mix(0.5), torch.ones(4)]"),
        Example("""
            import torch
            from torch import nn

            class Scale(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.temperature = 1.0

                def forward(self, x):
                    return x / max(self.temperature, 1e-5)  # recompile

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(4, 4)
                    self.scale = Scale()

                def set_temperature(self, value):
                    self.scale.temperature = value  # a submodule's attribute, set by its parent

                def forward(self, x):
                    return self.scale(self.proj(x))

            BREAKSCAN_TARGETS = {"Head()": "[torch.ones(2, 4), lambda m: m.set_temperature(0.7), torch.ones(2, 4)]"}
        """, entry="Head()", inputs="[torch.ones(2, 4), lambda m: m.set_temperature(0.7), torch.ones(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class Attention(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.score = nn.Linear(4, 4)
                    self.temperature = 1.0

                def forward(self, x):
                    return torch.softmax(self.score(x) / self.temperature, dim=-1)  # recompile

            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.first = Attention()
                    self.second = Attention()

                def set_temperature(self, t):
                    for layer in (self.first, self.second):  # each submodule, through the loop's name
                        layer.temperature = t

                def forward(self, x):
                    return self.second(self.first(x))

            BREAKSCAN_TARGETS = {"Encoder()": "[torch.ones(2, 4), lambda m: m.set_temperature(0.5), torch.ones(2, 4)]"}
        """, entry="Encoder()", inputs="[torch.ones(2, 4), lambda m: m.set_temperature(0.5), torch.ones(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class Sampler(nn.Module):
                def __init__(self, top_k=None):
                    super().__init__()
                    self.proj = nn.Linear(4, 6)
                    self.top_k = top_k  # None, as the declared entry builds it

                def forward(self, x):
                    probs = self.proj(x).softmax(-1)
                    if self.top_k is not None:  # recompile
                        kth = probs.topk(self.top_k, dim=-1).values[:, -1:]
                        probs = torch.where(probs >= kth, probs, torch.zeros_like(probs))
                    return probs.argmax(-1)

            BREAKSCAN_TARGETS = {"Sampler()": "[torch.randn(2, 4), lambda m: setattr(m, 'top_k', 2), torch.randn(2, 4)]"}
        """, entry="Sampler()", inputs="[torch.randn(2, 4), lambda m: setattr(m, 'top_k', 2), torch.randn(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class MultiTask(nn.Module):
                def __init__(self, dims=(1, 3)):
                    super().__init__()
                    self.trunk = nn.Linear(4, 8)
                    self.heads = nn.ModuleList(nn.Linear(8, d) for d in dims)

                def add_task(self, out_dim):
                    self.heads.append(nn.Linear(8, out_dim))

                def forward(self, x):  # recompile
                    h = torch.relu(self.trunk(x))
                    return [head(h) for head in self.heads]

            BREAKSCAN_TARGETS = {"MultiTask()": "[torch.randn(2, 4), lambda m: m.add_task(5), torch.randn(2, 4)]"}
        """, entry="MultiTask()", inputs="[torch.randn(2, 4), lambda m: m.add_task(5), torch.randn(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class Pool(nn.Module):
                def __init__(self, kind="avg"):
                    super().__init__()
                    self.kind = kind

                def set_kind(self, kind):
                    self.kind = kind

                def forward(self, x):
                    if self.kind == "avg":  # recompile
                        return x.mean(-1)
                    return x.amax(-1)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.pool = Pool()

                def forward(self, x):
                    return self.pool(x) * 2

            BREAKSCAN_TARGETS = {"Net()": "[torch.ones(2, 4), lambda m: m.pool.set_kind('max'), torch.ones(2, 4)]"}
        """, entry="Net()", inputs="[torch.ones(2, 4), lambda m: m.pool.set_kind('max'), torch.ones(2, 4)]"),
        Example("""
            import dataclasses
            import torch
            from torch import nn

            @dataclasses.dataclass
            class HeadConfig:
                temperature: float = 0.07

            class Head(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.config = HeadConfig()
                    self.proj = nn.Linear(4, 4)

                def forward(self, x):
                    return self.proj(x) / self.config.temperature  # recompile

            BREAKSCAN_TARGETS = {"Head()": "[torch.ones(2, 4), lambda m: setattr(m.config, 'temperature', 0.05), torch.ones(2, 4)]"}
        """, entry="Head()", inputs="[torch.ones(2, 4), lambda m: setattr(m.config, 'temperature', 0.05), torch.ones(2, 4)]"),
        Example("""
            import dataclasses
            import torch
            from torch import nn

            @dataclasses.dataclass
            class Precision:
                use_amp: bool = False

            class Restorer(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.precision = Precision()
                    self.conv = nn.Conv2d(3, 3, 3, padding=1)

                def autocast(self, x):
                    cfg = self.precision
                    return torch.autocast(x.device.type, enabled=cfg.use_amp)  # recompile

                def forward(self, x):
                    with self.autocast(x):
                        return x - self.conv(x)

            def enable_amp(model):
                model.precision.use_amp = True

            BREAKSCAN_TARGETS = {"Restorer()": "[torch.ones(1, 3, 8, 8), enable_amp, torch.ones(1, 3, 8, 8)]"}
        """, entry="Restorer()", inputs="[torch.ones(1, 3, 8, 8), enable_amp, torch.ones(1, 3, 8, 8)]"),
        Example("""
            import torch
            from torch import nn

            class DeepSupervision(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.heads = nn.ModuleList(nn.Linear(4, 1) for _ in range(3))
                    self.side_weights = [1.0] * 3

                def set_side_weights(self, weights):
                    for i, w in enumerate(weights):
                        self.side_weights[i] = float(w)

                def forward(self, x):
                    loss = x.new_zeros(())
                    for weight, head in zip(self.side_weights, self.heads):
                        loss = loss + weight * head(x).mean()  # recompile
                    return loss

            BREAKSCAN_TARGETS = {"DeepSupervision()": "[torch.ones(2, 4), lambda m: m.set_side_weights([1.0, 0.5, 0.0]), torch.ones(2, 4)]"}
        """, entry="DeepSupervision()", inputs="[torch.ones(2, 4), lambda m: m.set_side_weights([1.0, 0.5, 0.0]), torch.ones(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class LossBank(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.enabled = {"l1"}

                def enable(self, *names):
                    self.enabled.update(names)

                def forward(self, pred, target):
                    loss = pred.new_zeros(())
                    for name in sorted(self.enabled):  # recompile
                        diff = pred - target
                        loss = loss + (diff.abs().mean() if name == "l1" else diff.pow(2).mean())
                    return loss

            BREAKSCAN_TARGETS = {"LossBank()": "[(torch.ones(4), torch.zeros(4)), lambda m: m.enable('l2'), (torch.ones(4), torch.zeros(4))]"}
        """, entry="LossBank()", inputs="[(torch.ones(4), torch.zeros(4)), lambda m: m.enable('l2'), (torch.ones(4), torch.zeros(4))]"),
        Example("""
            import torch
            from torch import nn

            class Progressive(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.stem = nn.Linear(4, 4)
                    self.blocks = nn.ModuleList()

                def grow(self):
                    self.blocks.append(nn.Linear(4, 4))

                def forward(self, x):  # recompile
                    x = self.stem(x)
                    for block in self.blocks:
                        x = block(x)
                    return x

            BREAKSCAN_TARGETS = {"Progressive()": "[torch.ones(2, 4), lambda m: m.grow(), torch.ones(2, 4)]"}
        """, entry="Progressive()", inputs="[torch.ones(2, 4), lambda m: m.grow(), torch.ones(2, 4)]"),
        Example("""
            import dataclasses
            import torch
            from torch import nn

            @dataclasses.dataclass
            class LossConfig:
                normalize: bool = True

            class Loss(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cfg = LossConfig()

                def forward(self, x):
                    if self.cfg.normalize:  # recompile
                        x = (x - x.mean()) / (x.std() + 1e-8)
                    return x.pow(2).mean()

            def turn_off(loss):
                loss.cfg.normalize = False  # a step named by the declared calls

            BREAKSCAN_TARGETS = {"Loss()": "[torch.randn(8), turn_off, torch.randn(8)]"}
        """, entry="Loss()", inputs="[torch.randn(8), turn_off, torch.randn(8)]"),
        Example("""
            import torch
            from torch import nn

            class Gate(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.frozen = False

                def forward(self, x):
                    if self.frozen:  # recompile
                        return x
                    return self.fc(x)

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.gate = Gate()
                    self.out = nn.Linear(4, 4)

                def forward(self, x):
                    return self.out(self.gate(x))

            def freeze_gates(model):
                for m in model.modules():  # sets it on every module of the class
                    if isinstance(m, Gate):
                        m.frozen = True

            BREAKSCAN_TARGETS = {"Net()": "[torch.randn(2, 4), freeze_gates, torch.randn(2, 4)]"}
        """, entry="Net()", inputs="[torch.randn(2, 4), freeze_gates, torch.randn(2, 4)]"),
        Example("""
            import torch
            from torch import nn

            class TokenCount:  # a plain object the module keeps from call to call
                def __init__(self):
                    self.seen = 0

                def get_seq_length(self):
                    return self.seen

                def update(self, n):
                    self.seen += n

            class Decoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.pos = nn.Embedding(16, 4)
                    self.cache = TokenCount()

                def forward(self, x):
                    past = self.cache.get_seq_length()
                    positions = torch.arange(past, past + x.shape[0])  # recompile
                    self.cache.update(x.shape[0])
                    return x + self.pos(positions)
        """, entry="Decoder()", inputs="[torch.ones(1, 4), torch.ones(1, 4), torch.ones(1, 4)]"),
        Example("""
            import torch
            from torch import nn

            class ActNorm(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.loc = nn.Parameter(torch.zeros(4))
                    self.initialized = False

                @torch.no_grad()
                def _initialize(self, x):
                    self.loc.copy_(-x.mean(0))
                    self.initialized = True

                def forward(self, x):
                    if not self.initialized:  # recompile
                        self._initialize(x)
                    return x + self.loc
        """, entry="ActNorm()", inputs="[torch.randn(3, 4), torch.randn(3, 4)]"),
        Example("""
            import torch
            from torch import nn

            class Counter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.hits = 0

                def forward(self, x):
                    if x.sum() > 0:  # break (another rule)
                        self.hits += 1  # recompile
                    return x * 2
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )
    valid = (
        Example("""
            import torch

            class Normalized(torch.nn.Module):
                def __init__(self, cached: bool = False):
                    super().__init__()
                    self.cached = cached
                    self._cached = None

                def forward(self, x):
                    cache = self._cached
                    if cache is None:
                        weight = torch.ones(x.shape[0]) / x.shape[0]
                        if self.cached:  # off as the class is built by default
                            self._cached = weight
                    else:
                        weight = cache
                    return x * weight
        """, entry="Normalized()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Counter(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("step", torch.zeros((), dtype=torch.long))

                def forward(self, x):
                    self.step += 1
                    return x * self.step
        """, entry="Counter()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Reset(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.step = 0

                def forward(self, x):
                    self.step = 1
                    return x * 2
        """, entry="Reset()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Scoped(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.active = False
                    self.calls = 0

                def forward(self, x):
                    active, calls = self.active, self.calls
                    saved = self.active
                    self.active = True
                    self.calls = calls + 1
                    y = self.step(x)
                    self.active = saved  # the call ends with the value it found
                    self.calls = calls
                    return y

                def step(self, x):
                    return x * 2 if self.active else x
        """, entry="Scoped()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Buffered(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.pending = None
                    self.mask = None

                def forward(self, x):
                    if self.pending is None:
                        self.pending = None  # left as the call found it
                    self.mask = self.mask.to(x.dtype) if self.mask is not None else None  # None stays None
                    return x * 2
        """, entry="Buffered()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
        Example("""
            import torch

            class Cache:  # not a module: each call builds its own
                def __init__(self):
                    self.seen = 0

                def update(self, x):
                    self.seen += x.shape[0]
                    return x * self.seen

            class Decoder(torch.nn.Module):
                def forward(self, x):
                    return Cache().update(x)
        """, entry="Decoder()", inputs="[torch.ones(4), torch.ones(4), torch.ones(4)]"),
    )

    def __init__(self) -> None:
        self.first_reads: dict[str, cst.BaseExpression] = {}  # attribute name -> its first read here
        self.stores: set[int] = set()  # assignment targets, which are not reads
        self.reported: set[str] = set()
        self.steps_reported: set[str] = set()  # the steps whose change of a container's contents is reported
        # `saved = self.active`: local name -> the attribute it holds. TorchDynamo reads such an
        # attribute lazily, where the local is first used, and a store of the local back into
        # the attribute at the end (`self.active = saved`) leaves it as the call found it.
        self.saved: dict[str, str] = {}
        self.copies: set[int] = set()  # the `self.active` of those assignments
        self.kinds: dict[str, v.Value] = {}  # attribute name -> its kind at the first read
        self.stored: set[str] = set()  # attributes this function has stored so far
        self.set_by_calls: set[str] = set()  # attributes a method it called stored, before any read
        # attribute name -> the method of the module this function called that read it first
        # (`beta = self.kl_weight()`, which reads `self.global_step`): TorchDynamo inlines it and
        # guards there
        self.read_in: dict[str, FunctionInfo] = {}

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        self.stores.add(id(node.attr))  # the name after the dot is no local
        if id(node) not in self.stores and id(node) not in self.copies:
            self._read(node, ctx)

    def on_Name(self, node: cst.Name, ctx) -> None:
        attribute = self.saved.get(node.value)
        if attribute is not None and id(node) not in self.stores and attribute not in self.first_reads:
            kind = self._as_read(attribute, ctx.value(node), ctx)
            if _guarded(attribute, kind, ctx):
                self._first_read(attribute, node, kind, ctx)

    def on_Call(self, node: cst.Call, ctx) -> None:
        """`self._init_step_index(t)`: what a method of the module sets, it sets here; so does
        `self.cache.update(n)`, a method of an object the module holds, on that object."""
        func = node.func
        prefix = _receiver(func, ctx) if isinstance(func, cst.Attribute) else None
        if prefix is None:
            return
        callee = ctx.callee(node)
        if callee is None or callee.class_name is None:
            return
        stores = ctx.memoised(_assigned_attributes, callee.node)
        if prefix == "":
            # Only what the method reads and leaves: one it stores too is its own walk's to report.
            for attribute, read in ctx.memoised(_read_attributes, callee.node):
                kind = ctx.built_kind(attribute)
                if attribute in stores or attribute in self.first_reads or attribute in self.set_by_calls or (
                        attribute in self.stored) or (
                        kind is None or not (kind in _SPECIALISED or kind == v.STR) or not _guarded(attribute, kind, ctx)):
                    continue
                self.read_in[attribute] = callee
                self._first_read(attribute, read, kind, ctx)
        for stored_name, store in stores.items():
            attribute = prefix + stored_name
            if attribute not in self.first_reads:
                self.set_by_calls.add(attribute)  # what later reads find is not known here
            # What the method stores is not known here: an update of itself (`+= 1`), or a value
            # given to an attribute that was None, changes what the guard read; a number set to
            # another value (`self._set_cache(seq_len)` storing `self.max_len = seq_len`) changes
            # it when that value differs, as such a store in this function does; a flag set back
            # to what it was may not. A flag the method sets to the other value than `__init__`
            # gives it (`self.initialized = True`) changes what the guard read.
            elif store == "updated" or (store == "set" and self.kinds.get(attribute) in (v.NONE, v.INT, v.FLOAT)) or (
                    store in ("True", "False") and self.kinds.get(attribute) == v.BOOL
                    and _built_flag(callee, attribute, ctx) not in (None, store)):
                self._written(attribute, node, ctx, from_itself=store == "updated")

    def on_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        if isinstance(node.target, cst.Name):
            self.saved.pop(node.target.value, None)
        self._read(node.target, ctx)  # `self.step += 1` reads it first
        self.stores.add(id(node.target))
        self._written(persistent_attribute(node.target, ctx), node.target, ctx, from_itself=True)

    def on_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            for element in (target.target, *_unpacked(target.target)):  # `a, b = ...` binds names, reads none
                if isinstance(element, cst.Name):
                    self.stores.add(id(element))
                    self.saved.pop(element.value, None)
        copied = False
        for local, value in _pairs(node):
            attribute = _attribute_read(value, ctx) or _returned_attribute(value, ctx)
            if attribute is not None and attribute not in self.first_reads:
                self.saved[local.value] = attribute
                self.copies.add(id(value))
                copied = True
        if copied:
            return
        stored = {persistent_attribute(target.target, ctx) for target in node.targets} - {None}
        read_here = set()
        if stored:  # `self.step = self.step + 1` reads it before the store
            for attribute in find_nodes(node.value, (cst.Attribute,)):
                if attribute.attr.value in stored and persistent_attribute(attribute, ctx) is not None:
                    read_here.add(attribute.attr.value)
                    self._read(attribute, ctx)
            after_dots = {id(a.attr) for a in find_nodes(node.value, (cst.Attribute,))}
            for name in find_nodes(node.value, (cst.Name,)):
                if self.saved.get(name.value) in stored and id(name) not in after_dots:
                    read_here.add(self.saved[name.value])  # `self.count = count + 1`, `count` its copy
                    self.on_Name(name, ctx)
        for target in node.targets:
            for element in _unpacked(target.target):  # `self.cos, self.sin = ...`: stores, not reads
                self.stores.add(id(element))
                if persistent_attribute(element, ctx) is not None:
                    self._written(persistent_attribute(element, ctx), element, ctx, from_itself=False)
            self.stores.add(id(target.target))
            name = persistent_attribute(target.target, ctx)
            if name is not None and isinstance(node.value, cst.Name) and self.saved.get(node.value.value) == name:
                continue  # `self.active = saved`: the value the call found is put back
            self._written(name, target.target, ctx, from_itself=name in read_here, value=node.value)

    def _read(self, node: cst.BaseExpression, ctx) -> None:
        name = _attribute_read(node, ctx) or self._read_through_copy(node, ctx)
        if name is None or name in self.first_reads or name in self.set_by_calls:
            return
        kind = ctx.value(node)
        if isinstance(node, cst.Attribute):
            kind = self._as_read(name, kind, ctx)
        if _guarded(name, kind, ctx):
            self._first_read(name, node, kind, ctx)

    def _read_through_copy(self, node: cst.BaseExpression, ctx) -> str | None:
        """`precision.use_amp` for `cfg.use_amp` after `cfg = self.precision`: an attribute of an
        object the module holds, read through a local name for it."""
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
            return None
        owner = self.saved.get(node.value.value)
        held = ctx.value(node.value) if owner is not None and "." not in owner else None
        return f"{owner}.{node.attr.value}" if isinstance(held, v.ModuleValue) and not held.fresh else None

    def _as_read(self, attribute: str, kind: v.Value, ctx) -> v.Value:
        """Kinds joined over `__init__` and the methods that store the attribute again later (None,
        then an int `_init_step_index` sets, or a tuple this function caches): as built, until this
        function stores it; read directly or through a copy (`cache = self._cached`)."""
        if attribute in self.stored:
            return kind
        built = ctx.built_kind(attribute)
        if kind == v.OTHER or built == v.NONE:
            # None as built: what the first compile finds, and guards (`self._shadow is None`),
            # whatever a later call stores there
            return built or kind
        return kind

    def _first_read(self, name: str, node: cst.BaseExpression, kind: v.Value, ctx) -> None:
        """Where TorchDynamo guards the attribute: reported at once when a step the declared calls
        make in between (`lambda m: m.set_alpha(0.5)`) stores it."""
        self.first_reads[name] = node
        self.kinds[name] = kind
        step = _set_between_calls(ctx).get(name)
        items_step, numbers = _items_set_between_calls(ctx).get(name, (None, False)) if step is None else (None, False)
        if items_step is not None and name not in self.reported and items_step not in self.steps_reported and (
                numbers or _a_container(kind)):
            self.reported.add(name)
            self.steps_reported.add(items_step)  # the first guard the step fails is the recompile's
            # numbers in a list are guarded where each is used; a dict's keys, a set where it is read;
            # a module or parameter container of the compiled module itself as its frame starts
            # (`len(self._modules)`: a guard with no line of its own)
            at = _item_use(node, ctx) if numbers else ctx.function_start if (
                isinstance(kind, v.ModuleValue) and ctx.is_root and "." not in name) else node
            self._report_read(ctx, name, at,
                       f"`{items_step}`, a step BREAKSCAN_TARGETS declares between calls, changes what this list, "
                       "dict or set attribute of the module holds: TorchDynamo guards on its contents where it uses "
                       "them, so the call after the step recompiles", severity="warning")
        if step is not None and name not in self.reported:
            self.reported.add(name)
            owner = f"`self.{name.rpartition('.')[0]}`" if "." in name else "the module"
            shown = "None" if kind == v.NONE else kind
            self._report_read(ctx, name, node, f"`{step}`, a step BREAKSCAN_TARGETS declares between calls, sets this {shown} "
                                   f"attribute of {owner}: TorchDynamo guards on its value here, so the call after "
                                   "the step recompiles", severity="warning")

    def _report_read(self, ctx, name: str, node: cst.CSTNode, message: str, *, severity: Severity | None = None,
                     guard: cst.BaseExpression | None = None) -> None:
        """Report at the attribute's first read: in this function, or in the method of the module
        it called that read it (a guard there makes the finding a warning)."""
        method = self.read_in.get(name)
        if method is None:
            ctx.report(self, node, message, severity=severity, guard=guard)
        else:
            ctx.report_in(self, method, node, message, severity="warning" if guard is not None else severity)

    def _written(self, name: str | None, store: cst.CSTNode, ctx, *, from_itself: bool,
                 value: cst.BaseExpression | None = None) -> None:
        """The attribute `name` is stored at `store` (a target, or the call of a method that stores it)."""
        if name is None:
            return
        self.stored.add(name)
        read = self.first_reads.get(name)
        if read is None or name in self.reported or _restored(name, self.saved, store, ctx):
            return
        kind = self.kinds[name]
        if kind == v.NONE and value is not None and (ctx.value(value) == v.NONE or _keeps_none(value, name)):
            # `self.cache = None`, or `self.mask = self.mask.to(x) if self.mask is not None else
            # None`: as the call found it.
            return
        if _off_by_default(ctx):
            # `if self.cached: self._cached_edge_index = ...` with `cached=False` by default: an
            # object built as the class builds it by default never stores it.
            return
        self.reported.add(name)
        owner = "the module" if "." not in name else f"an object the module holds (`self.{name}`)"
        # Under a test of a tensor's data (`if not torch.isfinite(loss): self.skipped += 1`), only
        # where the data takes that branch.
        data_test = next((branch.test for branch in ctx.conditions if branch.test is not None and (
            ctx.is_bool_tested_tensor(_negated(branch.test)))), None)
        if data_test is not None and kind == v.INT and from_itself:
            self._report_read(ctx, name, read, f"an int attribute of {owner} is read here and updated later in compiled code: "
                                   "TorchDynamo specialises module int attributes, so each call that takes this "
                                   "branch recompiles", guard=data_test)
            return
        if kind == v.NONE and value is not None and "." not in name and ctx.is_module(ctx.value(value)):
            # `self._shadow = copy.deepcopy(self.model)`: an nn.Module stored on a module moves into
            # its `_modules`, and TorchDynamo guards where the attribute lives as the frame starts.
            ctx.report(self, ctx.function_start, f"`self.{name}` is None until the compiled code stores a module "
                                                 "in it, which nn.Module keeps among its submodules: TorchDynamo "
                                                 f"guards where `{name}` is found as this function starts (`KeyError "
                                                 "on self.…`), so the next call recompiles once", severity="warning")
        elif kind == v.NONE:
            self._report_read(ctx, name, read, f"an attribute of {owner} that is None until the compiled code sets it is "
                                   "read here and set later: TorchDynamo guards that it is None, so the next call, "
                                   "which finds it set, recompiles once", severity="warning")
        elif not from_itself and kind in (v.INT, v.FLOAT):
            # `self.cached_len = seq_len`: the guard fails only when the value stored differs
            # from the one read; for a length the same from call to call, once.
            self._report_read(ctx, name, read, f"a {kind.name} attribute of {owner} is read here and set later in compiled "
                                   "code: TorchDynamo guards on its value, so a call recompiles whenever the value "
                                   "stored differs from the one read (once, for a value the same from call to "
                                   "call)", severity="warning")
        elif kind == v.INT and ctx.dynamo.enabled("allow_unspec_int_on_nn_module"):
            self._report_read(ctx, name, read, f"an int attribute of {owner} is read here and updated later in compiled "
                                   "code: the next call recompiles once, then `allow_unspec_int_on_nn_module` "
                                   "makes it dynamic", severity="warning")
        elif kind == v.INT:
            self._report_read(ctx, name, read, f"an int attribute of {owner} is read here and updated later in compiled code: "
                                   "TorchDynamo specialises module int attributes, so every call recompiles (until "
                                   f"the recompile limit, {ctx.dynamo.number('recompile_limit')}, then the function "
                                   "runs eagerly)")
        else:
            what = "a float (made dynamic after its first recompile)" if kind == v.FLOAT else "a bool (two values)"
            self._report_read(ctx, name, read, f"a {kind.name} attribute of {owner} is read here and updated later in "
                                   f"compiled code: TorchDynamo guards on its value, so the next call recompiles "
                                   f"once; it is {what}", severity="warning")


_SPECIALISED = (v.INT, v.FLOAT, v.BOOL, v.NONE)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """`x` of `not x`."""
    return test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) else test


def _guarded(attribute: str, kind: v.Value, ctx) -> bool:
    """Whether TorchDynamo guards on the attribute's value: a number, bool or None; a string too,
    where a step between the declared calls sets it (a string the compiled code stores is left);
    a container whose contents such a step changes (`self.side_weights[i] = float(w)`,
    `self.enabled.update(names)`): its length, keys and items."""
    return kind in _SPECIALISED or (kind == v.STR and attribute in _set_between_calls(ctx)) or (
        attribute in _items_set_between_calls(ctx))


def _attribute_read(node: cst.BaseExpression, ctx) -> str | None:
    """The attribute a read is of: the module's own (`step`) or one of an object it holds (`cache.seen`)."""
    return persistent_attribute(node, ctx) or held_attribute(node, ctx)


def _receiver(func: cst.Attribute, ctx) -> str | None:
    """The prefix of what a method called on the module ("") or on an object it holds
    (`self.cache.update`: "cache.") stores; None for another receiver."""
    if persistent_attribute(func, ctx) is not None:
        return ""
    held = held_attribute(func, ctx)
    return held.rpartition(".")[0] + "." if held is not None else None


def _returned_attribute(value: cst.BaseExpression, ctx) -> str | None:
    """`self.cache.get_seq_length()` where the method is `return self._seen_tokens`: a read of that
    attribute, which TorchDynamo makes where the result is first used."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)):
        return None
    prefix = _receiver(value.func, ctx)
    callee = ctx.callee(value) if prefix is not None else None
    body = callee.node.body if callee is not None and callee.class_name is not None else None
    lines = [line for line in body.body if not (isinstance(line, cst.SimpleStatementLine) and isinstance(
        line.body[0], cst.Expr) and isinstance(line.body[0].value, cst.BaseString))] if isinstance(body, cst.IndentedBlock) else []
    if len(lines) != 1 or not isinstance(lines[0], cst.SimpleStatementLine) or len(lines[0].body) != 1:
        return None
    returned = lines[0].body[0]
    if isinstance(returned, cst.Return) and isinstance(returned.value, cst.Attribute) and isinstance(
            returned.value.value, cst.Name) and returned.value.value.value == "self":
        return f"{prefix}{returned.value.attr.value}"
    return None


def _set_between_calls(ctx) -> dict[str, str]:
    """The attributes of this method's object that the steps between the declared calls store, by
    the methods they call on it (on the compiled object, or an object it holds), each with the step."""
    if ctx.function.class_name is None:
        return {}
    own = f"{ctx.module.name}.{ctx.function.class_name}"
    stored: dict[str, str] = {}
    for called in step_methods(ctx):
        if own in called.reached:
            for attribute in ctx.memoised(_assigned_attributes, called.method.node):
                stored.setdefault(attribute, called.step)
        for path, attribute in ctx.memoised(_assigned_held_attributes, called.method.node):
            if own in lineages_at(ctx, called.reached, path):  # `self.processor.temperature = t`, read in the processor
                stored.setdefault(attribute, called.step)
    for entry, stores in ctx.module.declared_step_stores.items():
        for path, attribute, step in stores:
            if entry == ctx.function.class_name:
                stored.setdefault(".".join((*path, attribute)), step)  # `setattr(m.config, "temperature", t)`
            if path and own in lineages_at(ctx, {f"{ctx.module.name}.{entry}"}, path):
                stored.setdefault(attribute, step)  # ... read by a method of the object it sets
    info = ctx.find_class(own)
    lineage = {f"{c.module.name}.{c.name}" for c in ctx.class_lineage(info)} if info is not None else {own}
    for held, stores in ctx.module.declared_class_stores.items():
        if held == "*" or held in lineage:  # `for m in model.modules(): if isinstance(m, Quantizer): m.x = ...`
            for attribute, step in stores:
                stored.setdefault(attribute, step)
    return stored


def _items_set_between_calls(ctx) -> dict[str, tuple[str, bool]]:
    """The container attributes of this method's object whose contents the steps between the
    declared calls change, by the methods they call on it: each with the step, and whether it
    stores numbers in the items only."""
    if ctx.function.class_name is None:
        return {}
    own = f"{ctx.module.name}.{ctx.function.class_name}"
    changed: dict[str, tuple[str, bool]] = {}
    for called in step_methods(ctx):
        if own in called.reached:
            for attribute, numbers in ctx.memoised(_contents_changed, called.method.node).items():
                changed.setdefault(attribute, (called.step, numbers))
    return changed


def _a_container(kind: v.Value) -> bool:
    """A list, dict or set (a deque, an OrderedDict), or one of torch's module and parameter
    containers; not an object of a scanned class with its own `add` or `update`."""
    if isinstance(kind, v.ModuleValue):  # (the layers it is built with may be among its classes)
        return all(name.startswith("torch.") for name in kind.classes) and any(
            name.rpartition(".")[2] in _TORCH_CONTAINERS for name in kind.classes)
    return v.sort_of(kind) in ("list", "dict", "set")


_TORCH_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Sequential"})


def _item_use(read: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """Where the items of a list read at `read` are first used: a loop over it (or over a `zip` or
    `enumerate` of it) uses its item where the loop's name for it is first read; else `read`."""
    parents = ctx.memoised(parent_map, ctx.function.node)
    iterated, position = read, None
    holder = parents.get(id(read))
    if isinstance(holder, cst.Arg) and isinstance(zipped := parents.get(id(holder)), cst.Call):
        called = ctx.qualname(zipped.func)
        if called not in ("builtins.zip", "builtins.enumerate"):
            return read
        iterated = zipped
        position = 1 if called == "builtins.enumerate" else [a.value for a in zipped.args].index(read)
    loop = parents.get(id(iterated))
    if not (isinstance(loop, cst.For) and loop.iter is iterated):
        return read
    target = loop.target
    if position is not None:
        if not (isinstance(target, cst.Tuple) and position < len(target.elements)):
            return read
        target = target.elements[position].value
    if not isinstance(target, cst.Name):
        return read
    name = target.value
    return next((n for n in find_nodes(loop.body, (cst.Name,)) if isinstance(n, cst.Name) and n.value == name), read)


def _contents_changed(function: cst.FunctionDef) -> dict[str, bool]:
    """The container attributes whose contents a method changes: numbers stored in its items
    (`self.side_weights[i] = float(w)`: a literal, or `float()`/`int()`/`bool()` of something), or
    a mutating method called on it (`self.enabled.update(names)`, `self.policy.update(bits)`):
    whether only numbers are stored in its items, by attribute."""
    found: dict[str, bool] = {}
    for node in find_nodes(function.body, (cst.Assign, cst.Call), prune=(cst.FunctionDef, cst.Lambda)):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MUTATING and _own(func.value):
                assert isinstance(func.value, cst.Attribute)
                found[func.value.attr.value] = False
            continue
        assert isinstance(node, cst.Assign)
        number = isinstance(node.value, (cst.Integer, cst.Float)) or (isinstance(node.value, cst.Call) and isinstance(
            node.value.func, cst.Name) and node.value.func.value in ("float", "int", "bool"))
        for target in (t.target for t in node.targets):
            if number and isinstance(target, cst.Subscript) and _own(target.value):
                assert isinstance(target.value, cst.Attribute)
                found.setdefault(target.value.attr.value, True)
    return found


# Methods that change a list's, dict's or set's contents.
_MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard",
                       "setdefault", "popitem"})


def _own(node: cst.BaseExpression) -> bool:
    """`self.name`."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def _off_by_default(ctx) -> bool:
    """Whether a branch around here is one the object does not take as the code builds it: `if
    self.cached:` where `__init__` stores False there, or a parameter defaulting to False
    (`cached: bool = False`) that no construction sets otherwise; `if not self.x:` the other way
    round (semantics.built)."""
    for branch in ctx.conditions:
        test = branch.test
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        flag = test.expression if negated else test
        if not (isinstance(flag, cst.Attribute) and isinstance(flag.value, cst.Name) and flag.value.value == "self"):
            continue
        default = built_truth(ctx, flag)
        if default is not None and (default != negated) != branch.when:
            return True
    return False


def _built_flag(method, attribute: str, ctx) -> str | None:
    """"True"/"False": the flag the class's `__init__` sets the attribute to (`self.initialized =
    False`), the method's class's own or inherited; None when it sets it otherwise or not at all."""
    info = ctx.find_class(f"{method.module.name}.{method.class_name}")
    init = ctx.method_of(info, "__init__") if info is not None else None
    if init is None or "." in attribute:
        return None
    store = ctx.memoised(_assigned_attributes, init.node).get(attribute)
    return store if store in ("True", "False") else None


def _assigned_attributes(function: cst.FunctionDef) -> dict[str, str]:
    """The attributes of `self` a method stores: "updated" when a store computes it from itself
    (`self.step += 1`), "none" when every store is None, "True"/"False" when every store is that
    flag (`self.initialized = True`), else "set"."""
    stored: dict[str, str] = {}
    rank = {"none": 0, "True": 1, "False": 1, "set": 2, "updated": 3}
    for node in find_nodes(function.body, (cst.Assign, cst.AugAssign), prune=(cst.FunctionDef, cst.Lambda)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
                literal = node.value.value if isinstance(node.value, cst.Name) else None
                store = ("updated" if isinstance(node, cst.AugAssign) or _reads_itself(node.value, target.attr.value)
                         else "none" if literal == "None" else literal if literal in ("True", "False") else "set")
                known = stored.get(target.attr.value)
                if known in ("True", "False") and store in ("True", "False") and known != store:
                    store = "set"  # set both ways: what it is after the call is not known here
                stored[target.attr.value] = store if known is None or rank[store] >= rank[known] else known
    return stored


def _read_attributes(function: cst.FunctionDef) -> list[tuple[str, cst.Attribute]]:
    """The attributes of `self` a method reads (`self.step += 1` reads it too), each with its first
    read, in the order the method reads them."""
    nodes = find_nodes(function.body, (cst.Assign, cst.Call, cst.Attribute), prune=(cst.FunctionDef, cst.Lambda))
    skipped = {id(t.target) for node in nodes if isinstance(node, cst.Assign) for t in node.targets}
    skipped |= {id(node.func) for node in nodes if isinstance(node, cst.Call)}  # a method called, not read
    first: dict[str, cst.Attribute] = {}
    for node in nodes:
        if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"
                and id(node) not in skipped):
            first.setdefault(node.attr.value, node)
    return list(first.items())


def _assigned_held_attributes(function: cst.FunctionDef) -> set[tuple[tuple[str, ...], str]]:
    """The attributes of objects `self` holds that a method stores, each with the path to its
    object: `(("processor",), "temperature")` for `self.processor.temperature = value`, and for
    each object a name stands for (`for layer in (self.gat1, self.gat2): layer.temperature = t`,
    `head = self.head`)."""
    aliases: dict[str, list[tuple[str, ...]]] = {}
    for node in find_nodes(function.body, (cst.For, cst.Assign), prune=(cst.FunctionDef, cst.Lambda)):
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and isinstance(node.iter, (cst.Tuple, cst.List)):
            paths = [_held_path(element.value) for element in node.iter.elements]
            if paths and None not in paths:
                aliases[node.target.value] = [path for path in paths if path is not None]
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            path = _held_path(node.value)
            if path is not None:
                aliases[node.targets[0].target.value] = [path]
    stored: set[tuple[tuple[str, ...], str]] = set()
    for node in find_nodes(function.body, (cst.Assign, cst.AugAssign), prune=(cst.FunctionDef, cst.Lambda)):
        for target in [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]:
            if not isinstance(target, cst.Attribute):
                continue
            path = _held_path(target.value)
            if path is not None:
                stored.add((path, target.attr.value))
            elif isinstance(target.value, cst.Name):
                stored.update((held, target.attr.value) for held in aliases.get(target.value.value, ()))
    return stored


def _held_path(node: cst.BaseExpression) -> tuple[str, ...] | None:
    """`("processor", "cfg")` for `self.processor.cfg`: the attributes from `self` to an object it holds."""
    path: list[str] = []
    while isinstance(node, cst.Attribute):
        path.insert(0, node.attr.value)
        node = node.value
    return tuple(path) if path and isinstance(node, cst.Name) and node.value == "self" else None


def _reads_itself(value: cst.BaseExpression, attribute: str) -> bool:
    """`max(self.min_tau, self.tau * self.decay)` for `self.tau`: the new value is computed from the old."""
    return any(isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value == attribute
               for node in find_nodes(value, (cst.Attribute,)))


def _keeps_none(value: cst.BaseExpression, attribute: str) -> bool:
    """`self.mask.to(x) if self.mask is not None else None` (or the other way round): None when
    the attribute is None."""
    if not (isinstance(value, cst.IfExp) and isinstance(value.test, cst.Comparison)
            and len(value.test.comparisons) == 1):
        return False
    test, comparison = value.test, value.test.comparisons[0]
    if not (isinstance(test.left, cst.Attribute) and test.left.attr.value == attribute
            and isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
        return False
    when_none = value.orelse if isinstance(comparison.operator, cst.IsNot) else value.body
    return isinstance(comparison.operator, (cst.Is, cst.IsNot)) and (
        isinstance(when_none, cst.Name) and when_none.value == "None")


def _unpacked(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The targets inside a tuple or list target, nested ones included."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return []
    inner = [e.value for e in target.elements]
    return [*inner, *(t for e in inner for t in _unpacked(e))]


def _pairs(node: cst.Assign) -> list[tuple[cst.Name, cst.BaseExpression]]:
    """The local names an assignment binds and the expressions each gets: `a = e`, `a, b = e, f`."""
    if len(node.targets) != 1:
        return []
    target, value = node.targets[0].target, node.value
    if isinstance(target, cst.Name):
        return [(target, value)]
    if (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements))):
        return [(t.value, e.value) for t, e in zip(target.elements, value.elements) if isinstance(t.value, cst.Name)]
    return []


def _restored(attribute: str, saved: dict[str, str], written: cst.BaseExpression, ctx) -> bool:
    """Whether the function, on every path past this store, ends by putting back the value it
    read: `self.active = saved` as a statement of its body (or of a `finally` there) after it."""
    copies = {local for local, held in saved.items() if held == attribute}
    if not copies:
        return False
    body = ctx.function.node.body
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    for statement in list(statements):
        if isinstance(statement, cst.Try) and statement.finalbody is not None:
            statements.append(statement.finalbody)
    holder = next((i for i, statement in enumerate(statements) if id(written) in subtree_ids(statement)), None)
    if holder is None:
        return False
    for statement in statements[holder:]:
        lines = statement.body.body if isinstance(statement, cst.Finally) else [statement]
        for line in lines:
            if isinstance(line, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value in copies
                    and any(persistent_attribute(t.target, ctx) == attribute for t in small.targets)
                    for small in line.body) and id(written) not in subtree_ids(line):
                return True
    return False
