import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import torch_attribute_break, torch_probed_break, torch_probed_gb_ids


class UntraceableTorchCall(Rule):
    id = "BS507"
    name = "untraceable-torch-call"
    gb_ids = torch_probed_gb_ids()
    message = "TorchDynamo cannot trace this torch call: the graph breaks here"
    fix_hint = "call it outside the compiled code and pass the result in, or use the traceable equivalent the message names"
    docs = """
    ## What it does
    Flags calls of torch functions and tensor methods that the installed TorchDynamo was seen to
    break on, given the same kind of arguments, by the catalogue of probes
    (`python bench/catalogue.py`, stored in `breakscan/lint/data/catalogue.json`): comparisons that
    return a Python bool (`torch.equal`, `x.allclose(y)`, `s.is_nonzero()`), storage and layout
    queries (`x.storage_offset()`, `x.is_pinned()`), global RNG state (`torch.manual_seed`,
    `torch.get_rng_state`, `torch.Generator()`, `x.random_()`), sparse and MKL-DNN conversions,
    and the like, and reads of the tensor attributes it was seen to break on (`x.grad_dtype`).
    Methods of torch objects the compiled code holds are matched to probes of such objects: a
    `torch.optim` optimizer's `step()` breaks on purpose (its `torch._dynamo.graph_break()`, GB0025)
    and `zero_grad()` is skipped (GB0008), in a training step compiled whole; a module hook's handle
    (`handle.remove()`), made where registering it broke, cannot be represented (GB0013); calling a
    `torch.ao.quantization` fake-quantize module or observer (`self.act_fq(x)`) inlines code
    TorchDynamo skips (GB0008).
    Calls given objects are matched to probes given objects of torch classes:
    `kl_divergence(q, prior)` of two distributions breaks in its dispatch (the first time a pair of
    distribution types is seen, which is the compiled call's, GB0059). A probe given a flag
    (`Dirichlet(alpha, validate_args=True)`: the validation breaks, GB0007) matches only calls
    passing the same flag (a warning where the value passed cannot be read).
    A call the catalogue saw break only because a 0-d tensor was given where the op takes a
    Python number (`F.dropout(x, p)`, `eps=`, `momentum=`, `scaled_dot_product_attention(...,
    scale=)`) is flagged only where a tensor is given there.
    Calls other rules own (`.item()`, `nonzero`, `unique`, `one_hot`, building modules...) are
    left to them; a call is not flagged under a setting the catalogue saw capture
    it, nor where the probe broke only because of the input it was given (an in-place view change
    of the function's argument, `x.t_()`: on a tensor made in the compiled code it is traced).

    ## Why is this bad?
    TorchDynamo cannot put these in a graph: some return Python values computed from tensor data
    (GB0033 "Data dependent operator"), some are methods it does not model (GB0208), some touch
    global state it refuses to trace (GB0007, GB0107, GB0363). The graph ends at the call, the
    call runs eagerly and a new graph starts after it.

    ## Example
    ```python
    def forward(self, x, ref):
        if torch.equal(x, ref):
            return x
        return self.net(x)
    ```

    ## Use instead
    Keep comparisons as tensors (`(x == ref).all()`, `torch.isclose(x, y).all()`) and select with
    `torch.where`; seed and query global state outside the compiled function (pass a generator's
    draws in as tensors).
    """
    invalid = (
        Example("""
            import torch

            @torch.compile
            def fn(x):
                ref = x.clamp(min=0)
                same = torch.equal(x, ref)  # break
                return x * 2, same
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                dtype = x.grad_dtype  # break
                return x.to(dtype) * 2
        """),
        Example("""
            import torch
            from torch.quasirandom import SobolEngine

            @torch.compile
            def fn(x):
                if torch.cpu.is_available():  # break
                    x = x + 1
                torch.cpu.synchronize()
                engine = SobolEngine(dimension=4, seed=0)  # break
                return x * 2, engine
        """),
        Example("""
            import torch
            from torch.quasirandom import SobolEngine

            class Sampler(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.engine = SobolEngine(dimension=4, scramble=True, seed=0)

                def forward(self, x):
                    return x + self.engine.draw(x.shape[0])  # break
        """, entry="Sampler()", inputs="torch.randn(3, 4)"),
        Example("""
            import torch
            from torch import nn

            class Stem(nn.Module):
                def forward(self, x):
                    y = x * 2
                    if x.is_pinned():  # break
                        y = y + 1
                    noise = torch.empty_like(y)
                    noise.random_()  # break
                    return y + noise
        """, entry="Stem()"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                y = x.sin()
                torch.manual_seed(0)  # break
                return y + torch.rand(8)
        """),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                generator = torch.Generator(device="cpu")  # break
                return x * 2, generator.device
        """),
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Attention(nn.Module):
                def __init__(self, temperature=2.0):
                    super().__init__()
                    self.register_buffer("temperature", torch.tensor(temperature))

                def forward(self, q, k, v):
                    # a 0-d tensor: the op takes a Python float there
                    out = F.scaled_dot_product_attention(q, k, v, scale=1 / self.temperature)  # break
                    return out * 2
        """, entry="Attention()", inputs="(torch.randn(1, 4, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 8))"),
        Example("""
            import torch
            from torch import nn
            from torch.distributions import Normal
            from torch.distributions.kl import kl_divergence

            class Posterior(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.mu = nn.Linear(8, 4)
                    self.log_sigma = nn.Linear(8, 4)

                def forward(self, x):
                    q = Normal(self.mu(x), self.log_sigma(x).exp())
                    prior = Normal(torch.zeros(4), torch.ones(4))
                    return kl_divergence(q, prior).sum(-1).mean()  # break
        """, entry="Posterior()", inputs="torch.randn(3, 8)"),
        Example("""
            import torch
            from torch import nn

            class Adapted(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.optimizer = torch.optim.AdamW(self.fc.parameters(), lr=1e-3)

                def forward(self, x):
                    y = self.fc(x)
                    self.optimizer.step()  # break
                    self.optimizer.zero_grad()  # break
                    return y * 2
        """, entry="Adapted()", inputs="torch.randn(2, 4)"),
        Example("""
            import torch
            from torch import nn

            def setup():
                model = nn.Linear(4, 1)
                return model, torch.optim.RMSprop(model.parameters(), lr=0.01), torch.randn(8, 4)

            def train_step(model, optimizer, x):
                loss = model(x).square().mean()
                optimizer.step()  # break
                return loss.detach()

            BREAKSCAN_TARGETS = {"train_step": "setup()"}  # the optimizer its calls are given
        """, entry="train_step", inputs="setup()"),
        Example("""
            import torch
            from torch import nn

            class Tap(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.body = nn.Linear(4, 4)

                def forward(self, x):
                    seen = []
                    handle = self.body.register_forward_hook(lambda m, a, out: seen.append(out))  # break (another rule)
                    y = self.body(x)
                    handle.remove()  # break
                    return y + seen[0]
        """, entry="Tap()", inputs="torch.randn(2, 4)"),
        Example("""
            import torch
            from torch import nn
            from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver

            def act_fake_quant(bits=8):
                return FakeQuantize(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=2 ** bits - 1)

            class QATBlock(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.act_fq = act_fake_quant()  # a torch.ao module, built by a helper

                def forward(self, x):
                    y = self.act_fq(self.fc(x).relu())  # break
                    return y * 2
        """, entry="QATBlock()", inputs="torch.randn(2, 4)"),
        Example("""
            import torch
            from torch.distributions import Dirichlet

            @torch.compile(backend="eager")
            def fn(logits):
                alpha = torch.nn.functional.softplus(logits) + 1.0
                belief = Dirichlet(alpha, validate_args=True)  # break
                return belief.mean
        """, inputs="torch.randn(2, 3)"),
    )
    valid = (
        Example("""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Block(nn.Module):
                def __init__(self, p=0.1, eps=1e-5):
                    super().__init__()
                    self.p, self.eps = p, eps

                def forward(self, x):
                    x = F.layer_norm(x, x.shape[-1:], eps=self.eps)
                    return F.dropout(x, self.p, training=self.training)  # Python floats
        """, entry="Block()", inputs="torch.randn(2, 8)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                ref = x.clamp(min=0)
                same = (x == ref).all()
                close = torch.isclose(x, ref).all()
                x = x.unsqueeze(0)
                return x * 2, same, close
        """),
        Example("""
            import torch

            def setup():
                torch.manual_seed(0)

            @torch.compile
            def fn(x):
                return x * 2
        """),
        Example("""
            import torch
            from torch.distributions import Dirichlet

            @torch.compile(backend="eager")
            def fn(logits):
                alpha = torch.nn.functional.softplus(logits) + 1.0
                return Dirichlet(alpha).mean  # validated only when asked: traced
        """, inputs="torch.randn(2, 3)"),
    )

    def on_Attribute(self, node: cst.Attribute, ctx) -> None:
        entry = torch_attribute_break(node, ctx)
        if entry is not None:
            how = f"probed as `{entry.call}` under torch {catalogue.torch_version()}: {', '.join(entry.gb_ids)}"
            ctx.report(self, node, f"TorchDynamo cannot read this tensor attribute: the graph breaks here ({how})")

    def on_Call(self, node: cst.Call, ctx) -> None:
        probed = torch_probed_break(node, ctx)
        if probed is not None:
            entry, unknown = probed
            how = f"probed as `{entry.call}` under torch {catalogue.torch_version()}: {', '.join(entry.gb_ids)}"
            flag = next((a.keyword.value for a in node.args if a.keyword is not None and a.value is unknown), None)
            if flag is not None:  # the probe broke with a flag this call passes as a value the analysis cannot read
                ctx.report(self, node, f"{self.message} ({how}), when `{ctx.code(unknown)}` (its `{flag}`) is that "
                                       "value: breakscan cannot tell", unknown=None, severity="warning")
            else:
                ctx.report(self, node, f"{self.message} ({how})", unknown=unknown)
