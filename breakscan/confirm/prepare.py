"""From a `TargetSpec` to what to compile: the user's module imported, the entry and inputs
evaluated in its namespace (or inputs synthesised from the first layer), all on the device.

Runs in the worker only (it imports torch).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch
from torch import nn
from torch.utils._pytree import tree_map_only

from breakscan.confirm.capture import original_callable
from breakscan.confirm.discover import declaration_hint
from breakscan.confirm.locate import ModuleSite
from breakscan.model import TargetSpec

# Layers that keep their input's shape: looked through when synthesising inputs. Any other
# layer without a rule stops the search; guessing past it would feed the model a wrong shape.
_SHAPE_KEEPING = (nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d,
                  nn.AlphaDropout, nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid,
                  nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Mish, nn.Hardswish)


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
    spec = importlib.util.spec_from_file_location(name, path)
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


def _arguments(spec: TargetSpec, target: Any, namespace: dict) -> tuple[tuple, dict]:
    if spec.inputs is None:
        args, why = synthesize(target)
        if why:
            advice = spec.missing_inputs or (f"declare its inputs in {os.path.basename(spec.path)}: "
                                             f"{declaration_hint([spec.entry])}")
            raise Skip(f"{spec.entry}: {why}; {advice}")
        return args, {}
    value = eval(spec.inputs, namespace)  # noqa: S307 - the user's own expression
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, dict):
        return (), value
    return (value,), {}


def prepare(spec: TargetSpec, site: ModuleSite, device: str) -> tuple[Callable, tuple, dict]:
    """(callable or module, args, kwargs), moved to `device`."""
    # `torch` is there for the expressions even where the module imports only `from torch import nn`.
    namespace = {"torch": torch, **load_module(spec.path, site).__dict__}
    target = original_callable(eval(spec.entry, namespace))  # noqa: S307 - the user's own expression
    if isinstance(target, type) and issubclass(target, nn.Module):
        target = target()
    args, kwargs = _arguments(spec, target, namespace)
    if isinstance(target, nn.Module):
        target = target.to(device)
    moved = tree_map_only(torch.Tensor, lambda tensor: tensor.to(device), (args, kwargs))
    return target, *moved
