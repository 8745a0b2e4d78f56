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
from breakscan.model import TargetSpec

# Layers that keep their input's shape: looked through when synthesising inputs. Any other
# layer without a rule stops the search; guessing past it would feed the model a wrong shape.
_SHAPE_KEEPING = (nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d,
                  nn.AlphaDropout, nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid,
                  nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Mish, nn.Hardswish)


class Skip(Exception):
    """The target cannot be run as given; the message says what to add."""


_modules: dict[str, ModuleType] = {}


def load_module(path: str) -> ModuleType:
    """Import the user's file once per worker, with its folder on sys.path."""
    if path not in _modules:
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        stem = os.path.splitext(os.path.basename(path))[0]
        taken = not stem.isidentifier() or stem in sys.modules
        name = f"_breakscan_{len(_modules)}_{stem}" if taken else stem
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _modules[path] = module
    return _modules[path]


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
            raise Skip(f"{spec.entry}: {why}; declare its inputs in {os.path.basename(spec.path)}: "
                       f"{declaration_hint([spec.entry])}")
        return args, {}
    value = eval(spec.inputs, namespace)  # noqa: S307 - the user's own expression
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, dict):
        return (), value
    return (value,), {}


def prepare(spec: TargetSpec, device: str) -> tuple[Callable, tuple, dict]:
    """(callable or module, args, kwargs), moved to `device`."""
    namespace = load_module(spec.path).__dict__
    target = original_callable(eval(spec.entry, namespace))  # noqa: S307 - the user's own expression
    if isinstance(target, type) and issubclass(target, nn.Module):
        target = target()
    args, kwargs = _arguments(spec, target, namespace)
    if isinstance(target, nn.Module):
        target = target.to(device)
    moved = tree_map_only(torch.Tensor, lambda tensor: tensor.to(device), (args, kwargs))
    return target, *moved
