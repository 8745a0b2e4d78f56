"""From a `TargetSpec` to what to compile: the user's module imported, the entry and inputs
evaluated in its namespace (or inputs synthesised from the first layer), all on the device.

Runs in the worker only (it imports torch).
"""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_map_only

from breakscan.confirm.capture import original_callable
from breakscan.confirm.discover import declaration_hint
from breakscan.confirm.locate import ModuleSite
from breakscan.confirm.sources import text_loader
from breakscan.model import TargetSpec

# Layers that keep their input's shape: looked through when synthesising inputs. Any other
# layer without a rule stops the search; guessing past it would feed the model a wrong shape.
_SHAPE_KEEPING = (nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d,
                  nn.AlphaDropout, nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid,
                  nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Mish, nn.Hardswish)


SEED = 1234


class Skip(Exception):
    """The target cannot be run as given; the message says what to add."""


_modules: dict[str, ModuleType] = {}


def put_first_on_path(folders: tuple[str, ...]) -> None:
    """`folders` at the front of sys.path, in order."""
    for folder in reversed(folders):
        if folder in sys.path:
            sys.path.remove(folder)
        sys.path.insert(0, folder)


def forget_other_copies(name: str, search_path: tuple[str, ...]) -> None:
    """Drop a module of the same top-level package imported from elsewhere (another project's
    `pkg`, run earlier by this worker): `name` must come from `search_path`."""
    top = name.split(".")[0]
    loaded = sys.modules.get(top)
    where = getattr(loaded, "__file__", None) or next(iter(getattr(loaded, "__path__", [])), None)
    if loaded is not None and not (where and any(os.path.abspath(where).startswith(os.path.join(folder, ""))
                                                 for folder in search_path)):
        for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[key]


def forget_modules() -> None:
    _modules.clear()


def load_module(path: str, site: ModuleSite) -> ModuleType:
    """Import the user's file once per worker as the module it is: in a package, by its dotted
    name with its import root first on sys.path (relative and absolute imports of the project
    work); a file in no package as a script, under a private name when a module of its name is
    already imported (the standard library's `copy`, another target's `model`)."""
    if path in _modules:
        return _modules[path]
    if site.package:
        put_first_on_path(site.search_path)
        forget_other_copies(site.name, site.search_path)
        _modules[path] = importlib.import_module(site.name)
        return _modules[path]
    taken = not site.name.isidentifier() or site.name in sys.modules
    put_first_on_path(site.search_path)
    name = f"_breakscan_{len(_modules)}_{site.name}" if taken else site.name
    spec = importlib.util.spec_from_file_location(name, path, loader=text_loader(name, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    _modules[path] = module
    return module


def resolve_device(requested: str) -> str:
    available = torch.cuda.is_available()
    if requested == "auto":
        return "cuda" if available else "cpu"
    if requested == "cuda" and not available:
        raise RuntimeError(
            f"--device cuda was requested but CUDA is not available here "
            f"(torch {torch.__version__}: torch.cuda.is_available() is False)"
        )
    return requested


def _example_input(layer: nn.Module) -> torch.Tensor | None:
    if isinstance(layer, nn.Linear):
        return torch.randn(2, layer.in_features)
    if isinstance(layer, nn.Conv1d):
        return torch.randn(2, layer.in_channels, 32)
    if isinstance(layer, nn.Conv2d):
        return torch.randn(2, layer.in_channels, 32, 32)
    if isinstance(layer, nn.Conv3d):
        return torch.randn(2, layer.in_channels, 8, 16, 16)
    if isinstance(layer, nn.Embedding):
        return torch.randint(0, layer.num_embeddings, (2, 8))
    if isinstance(layer, nn.LayerNorm):
        return torch.randn(2, 8, *layer.normalized_shape)
    return None


def first_layer(module: nn.Module) -> nn.Module | None:
    """The first leaf submodule, in registration order, that does not keep its input's shape."""
    for sub in module.modules():
        if next(sub.children(), None) is None and not isinstance(sub, _SHAPE_KEEPING):
            return sub
    return None


def synthesize(target: Any) -> tuple[tuple, str | None]:
    """(positional args, None), or ((), why not) when the first layer does not tell the input."""
    if not isinstance(target, nn.Module):
        return (), "it is not an nn.Module, so there is no first layer to read the input from"
    layer = first_layer(target)
    example = _example_input(layer) if layer is not None else None
    if example is not None:
        return (example,), None
    what = f"its first layer is {type(layer).__name__}" if layer is not None else "it has no layers"
    return (), f"cannot infer example inputs ({what})"


@dataclass(frozen=True)
class Call:
    args: tuple
    kwargs: dict


# Between calls, a step acts on the target: `lambda m: m.eval()` (its result is ignored).
Step = Callable[[Any], object]


@dataclass(frozen=True)
class Prepared:
    target: Any
    calls: tuple[Call | Step, ...]

    def run(self, function: Callable) -> list[Any]:
        """Call `function` (the target, or its compiled form) once per call, running the steps
        between them on the target; the outputs of the calls, in order."""
        outputs = []
        for call in self.calls:
            if isinstance(call, Call):
                outputs.append(function(*call.args, **call.kwargs))
            else:
                call(self.target)
        return outputs

    @property
    def call_count(self) -> int:
        return sum(isinstance(call, Call) for call in self.calls)


def _call(value: Any) -> Call:
    """A tuple is the positional arguments, a dict the keyword arguments, anything else the one
    argument."""
    if isinstance(value, tuple):
        return Call(value, {})
    if isinstance(value, dict):
        return Call((), value)
    return Call((value,), {})


def _is_step(value: Any) -> bool:
    return callable(value) and not isinstance(value, (torch.Tensor, nn.Module))


def _calls(spec: TargetSpec, target: Any, namespace: dict) -> tuple[Call | Step, ...]:
    """The calls `spec.inputs` asks for: one, or a list of calls and steps."""
    if spec.inputs is None:
        args, why = synthesize(target)
        if why:
            advice = spec.missing_inputs or (f"declare its inputs in {os.path.basename(spec.path)}: "
                                             f"{declaration_hint([spec.entry])}")
            raise Skip(f"{spec.entry}: {why}; {advice}")
        return (Call(args, {}),)
    value = eval(spec.inputs, namespace)  # noqa: S307 - the user's own expression
    if not isinstance(value, list):
        return (_call(value),)
    calls = tuple(item if _is_step(item) else _call(item) for item in value)
    if not any(isinstance(call, Call) for call in calls):
        raise Skip(f"{spec.entry}: the list of calls {spec.inputs!r} has no call in it")
    return calls


def seed_everything() -> None:
    """The same random state for every run of a target (a fix is verified against the same
    weights and inputs): Python's, NumPy's when it is there, and torch's on every device."""
    random.seed(SEED)
    torch.manual_seed(SEED)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(SEED)


def prepare(spec: TargetSpec, site: ModuleSite, device: str) -> Prepared:
    """The callable or module, and its calls with their tensors moved to `device`."""
    seed_everything()  # the module's own import may draw numbers: the same ones in every worker
    module = load_module(spec.path, site)
    seed_everything()  # and the build the same whether this worker imported the module just now or before
    # `torch` is there for the expressions even where the module imports only `from torch import nn`.
    namespace = {"torch": torch, **module.__dict__}
    target = original_callable(eval(spec.entry, namespace))  # noqa: S307 - the user's own expression
    if isinstance(target, type) and issubclass(target, nn.Module):
        target = target()
    calls = _calls(spec, target, namespace)
    if isinstance(target, nn.Module):
        target = target.to(device)
    moved = tuple(Call(*tree_map_only(torch.Tensor, lambda tensor: tensor.to(device), (call.args, call.kwargs)))
                  if isinstance(call, Call) else call for call in calls)
    return Prepared(target, moved)
