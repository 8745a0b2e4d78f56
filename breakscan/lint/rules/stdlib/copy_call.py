import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule

_CONTAINER_DISPLAYS = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)
_CONTAINER_BUILDERS = frozenset({"builtins.list", "builtins.dict", "builtins.set"})


class CopyCall(Rule):
    id = "BS504"
    name = "copy-call"
    gb_ids = ("GB4198", "GB0208", "GB0007", "GB0008")
    message = "`copy.deepcopy`/`copy.copy` of a tensor, module or container cannot be traced: the graph breaks here"
    fix_hint = "use tensor.clone() (or dict(d) / list(l) for containers), and copy modules outside the compiled code"
    docs = """
    ## What it does
    Flags `copy.deepcopy(...)` of tensors, modules, containers holding tensors or plain objects
    built with tensors (`self.prior = GaussianState(torch.zeros(1, d), self.cov0)` in `__init__`),
    and `copy.copy(...)` of tensors, modules, lists, dicts and sets, in compiled code; and
    `dataclasses.asdict(...)`/`astuple(...)` of a dataclass object with a field that holds a tensor
    (as built, or as its class declares: `hidden_states: torch.Tensor`), which deep-copy each field.

    ## Why is this bad?
    TorchDynamo 2.13 refuses to deep-copy a tensor or a module (GB4198 "Attempted to
    copy.deepcopy a tensor"), and `copy.copy` goes through `__reduce_ex__` machinery it cannot
    trace (GB0208 for a tensor, GB0007 for a list, dict or set, GB0008 for a module). The graph
    ends at the call. Deep copies of plain Python data (a config, a list of ints) are traced, and
    so are copies of plain objects holding no tensor (a config dataclass; one holding a tensor
    breaks, probed): a parameter annotated with a class that is neither a tensor, a module nor a
    container (`cache: Cache | None`) is not flagged.

    ## Example
    ```python
    residual = copy.deepcopy(hidden)
    state = copy.copy(kwargs)
    ```

    ## Use instead
    ```python
    residual = hidden.clone()
    state = dict(kwargs)
    ```
    """
    invalid = (
        Example("""
            import dataclasses
            from typing import Optional

            import torch
            from torch import nn

            @dataclasses.dataclass
            class AttentionOutput:
                hidden_states: torch.Tensor
                attn_weights: Optional[torch.Tensor] = None

                def to_dict(self):
                    return dataclasses.asdict(self)  # break

            class Block(nn.Module):
                def forward(self, x):
                    out = AttentionOutput(x.softmax(-1))
                    return out.to_dict()["hidden_states"].relu()  # break (another rule)
        """, entry="Block()", inputs="torch.randn(2, 4)"),
        Example("""
            import copy
            import torch
            from torch import nn

            class GaussianState:
                def __init__(self, mean, cov):
                    self.mean = mean
                    self.cov = cov

            class Filter(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.register_buffer("cov0", torch.eye(4))
                    self.prior = GaussianState(torch.zeros(1, 4), self.cov0)

                def forward(self, z):
                    state = copy.deepcopy(self.prior)  # break
                    return z - state.mean @ state.cov
        """, entry="Filter()", inputs="torch.randn(2, 4)"),
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                h = torch.tanh(x)
                residual = copy.deepcopy(h)  # break
                return h * 2 + residual
        """),
        Example("""
            import copy
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    shadow = copy.deepcopy(self.proj)  # break
                    return y + shadow(x)
        """, entry="Model()"),
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                y = x + 1
                stats = copy.copy({"scale": 2.0})  # break
                return y * stats["scale"]
        """),
        Example("""
            import copy
            import torch

            class Sampler(torch.nn.Module):
                def __init__(self, **overrides):
                    super().__init__()
                    self.defaults = dict({"temperature": 1.0}, **overrides)

                def forward(self, x):
                    options = copy.copy(self.defaults)  # break
                    return x / options["temperature"]
        """, entry="Sampler()", inputs="torch.randn(4)"),
        Example("""
            import copy

            import torch
            from torch import nn

            class Momentum(nn.Module):
                def __init__(self, encoder: nn.Module):
                    super().__init__()
                    self.encoder = encoder
                    self._target = None

                @property
                def target(self) -> nn.Module:
                    if self._target is None:
                        object.__setattr__(self, "_target", copy.deepcopy(self.encoder))  # break
                    return self._target

                def forward(self, x):
                    return self.encoder(x) - self.target(x).detach()
        """, entry="Momentum(torch.nn.Linear(4, 4))", inputs="torch.randn(2, 4)"),
    )
    valid = (
        Example("""
            import dataclasses

            import torch

            @dataclasses.dataclass
            class Settings:
                scale: float = 2.0
                name: str = "proj"

            @torch.compile
            def fn(x):
                settings = dataclasses.asdict(Settings())  # no field holds a tensor
                return x * settings["scale"]
        """),
        Example("""
            import copy
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.cfg = {"scale": 2.0}

                def forward(self, x):
                    cfg = copy.deepcopy(self.cfg)
                    return x * cfg["scale"]
        """, entry="Model()"),
        Example("""
            import copy
            import torch

            @torch.compile
            def fn(x):
                sizes = copy.copy((2, 4))
                return x.clone().view(sizes)
        """),
        Example("""
            from copy import copy
            from dataclasses import dataclass
            import torch
            from torch import nn

            @dataclass
            class Cache:
                length: int = 0

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = nn.Linear(8, 8)

                def forward(self, x, cache: Cache | None = None):
                    def run(inp, cache=None):
                        return self.proj(inp)

                    x = run(x, cache=cache)
                    if cache is not None:
                        cache = copy(cache)
                        x = x + cache.length
                    return x
        """, entry="Model()", inputs="torch.randn(8), Cache(1)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        if not node.args or node.args[0].keyword is not None:
            return
        qualified = ctx.qualname(node.func)
        argument = node.args[0].value
        if _annotated_plain_object(argument, ctx):
            return
        if qualified == "copy.deepcopy" and _holds_tensors(argument, ctx):
            ctx.report(self, node)
        elif qualified == "copy.copy" and not isinstance(argument, cst.Tuple) and (
            _holds_tensors(argument, ctx) or _is_mutable_container(argument, ctx)
        ):  # a tuple is immutable: copy.copy returns it as is
            ctx.report(self, node)
        elif qualified in _FIELD_COPIES and _fields_hold_tensors(argument, ctx):
            ctx.report(self, node, f"`{qualified}` deep-copies each field of the dataclass, and one holds a tensor: "
                                   "the graph breaks here")


# They build their result from `copy.deepcopy` of each field (probed: one holding a tensor breaks).
_FIELD_COPIES = frozenset({"dataclasses.asdict", "dataclasses.astuple"})


def _fields_hold_tensors(node: cst.BaseExpression, ctx) -> bool:
    """A dataclass object with a field that holds a tensor: as built here (`Output(hidden, None)`),
    or as its class declares (`hidden_states: torch.Tensor`, for `self` in its own method)."""
    value = ctx.value(node)
    if isinstance(value, v.ModuleValue) and any(field in (v.TENSOR, v.TENSORS) for _, field in value.fields):
        return True
    if value == v.SELF and ctx.self_class is not None:
        classes = ctx.class_lineage(ctx.self_class)
    elif isinstance(value, v.ModuleValue) and not value.fields:
        classes = [info for name in value.classes if (info := ctx.find_class(name)) is not None]
    else:
        return False
    return any(annotation is not None and ctx.declared(annotation, info) in (v.TENSOR, v.TENSORS)
               for info in classes for annotation in info.annotated.values())


def _holds_tensors(node: cst.BaseExpression, ctx) -> bool:
    value = ctx.value(node)
    return value in (v.TENSOR, v.TENSORS, v.SELF) or ctx.is_module(value) or (
        isinstance(value, v.ModuleValue) and any(field in (v.TENSOR, v.TENSORS) for _, field in value.fields))


def _is_mutable_container(node: cst.BaseExpression, ctx) -> bool:
    if isinstance(node, _CONTAINER_DISPLAYS):
        return True
    keywords = ctx.function.node.params.star_kwarg
    if isinstance(node, cst.Name) and isinstance(keywords, cst.Param) and node.value == keywords.name.value:
        return True  # `**options` is always a dict, whatever its values are
    return (isinstance(node, cst.Call) and ctx.qualname(node.func) in _CONTAINER_BUILDERS) or (
        v.sort_of(ctx.value(node)) in ("list", "dict", "set"))


# Words in a parameter annotation that say it may hold a tensor, a module or a mutable container.
_TRACE_BREAKING_TYPES = ("Tensor", "Module", "Parameter", "list", "List", "dict", "Dict", "set", "Set", "Mapping",
                         "Sequence", "Iterable", "Any", "object")


def _annotated_plain_object(node: cst.BaseExpression, ctx) -> bool:
    """`cache` where the function declares `cache: Cache | None`: a plain object (a dataclass, a
    config), whatever the value inference guessed. `copy.copy` of one is traced."""
    if not isinstance(node, cst.Name):
        return False
    params = ctx.function.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == node.value and param.annotation is not None:
            text = ctx.code(param.annotation.annotation)
            return not any(word in text for word in _TRACE_BREAKING_TYPES)
    return False
