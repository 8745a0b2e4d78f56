"""A stand-in for torchvision, for the ecosystem benchmark's workers only.

torchvision's wheels on PyPI are CUDA builds whose extension needs CUDA's torch libraries, so it
cannot be installed beside the CPU torch 2.13.0 the benchmark pins. timm imports it (data transforms,
`FrozenBatchNorm2d`) but its models' forward code never calls it. Any `torchvision.*` module imports
as a stand-in whose names can be read (at import time) but not called, subclassed or instantiated:
a model that would really use torchvision fails loudly and is stored as skipped, never run on a fake.
Only libraries declaring `stubs=("torchvision",)` in bench/ecosystem.py get this folder on their path.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

__version__ = "0.0+stub"


class _StandInMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"torchvision is a stand-in in this benchmark: {cls.__qualname__} cannot be called")


def _stand_in(name: str) -> type:
    return _StandInMeta(name, (), {"__qualname__": name, "__module__": "torchvision"})


class _StandInModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(__name__ + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StandInModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


sys.meta_path.insert(0, _Finder())
sys.modules[__name__].__class__ = _StandInModule
