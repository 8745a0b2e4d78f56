"""What TorchDynamo breaks on, from evidence: the catalogue probed by `bench/catalogue.py`.

Every entry is one construct run inside a tiny `@torch.compile` function under the installed
TorchDynamo: whether it breaks there, with which GB ids, and the type of what it returns (a tensor,
a Python int, a `torch.Size`...), under the default config or one that captures it
(`capture_scalar_outputs = True`...). The data is `breakscan/lint/data/catalogue.json`, read once on
first use; nothing here imports torch.

    >>> from breakscan.lint import catalogue
    >>> catalogue.tensor_method("item").breaks
    True
    >>> catalogue.tensor_method("size").result, catalogue.tensor_method("dim").result
    ('size', 'int')
    >>> catalogue.call("math.sqrt", args="tensor").gb_ids
    ('GB0033',)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "catalogue.json")
DECLARED_PATH = os.path.join(os.path.dirname(DATA_PATH), "torch_returns.json")
FORMAT = 1
DEFAULT = "default"

# What a probed construct returns: "size" is a torch.Size (a tuple of ints); "error" when the probe
# raised when run eagerly; "other" for any other object (a dtype, a device, a generator...).
Result = Literal["tensor", "int", "float", "bool", "size", "tuple", "list", "dict", "none", "str", "ndarray",
                 "other", "error", "unknown", "tensors"]
Category = Literal["tensor-method", "tensor-attribute", "tensor-operator", "torch", "functional", "builtin",
                   "stdlib", "numpy", "construct"]


@dataclass(frozen=True)
class Entry:
    key: str  # "torch.Tensor.item", "builtins.print", "math.sqrt", "construct:generator-function"
    category: Category
    call: str  # the probed expression as written ("x.size(0)"), or a construct's summary
    args: str  # what the call is given: "tensor", "python" or "none"
    config: str  # "default", or the setting the probe ran under ("capture_scalar_outputs = True")
    breaks: bool  # TorchDynamo breaks on the probe's own lines
    gb_ids: tuple[str, ...]
    skips_frame: bool  # the break makes Dynamo run the whole frame eagerly
    result: Result
    items: str | None  # for a tuple/list result: the kind its items share ("tensor", "int"), or "mixed"
    type: str  # the result's exact type ("torch.Size", "torch.return_types.max", "numpy.float64")
    status: str  # how the probe ran under TorchDynamo: "ok", or "failed"/"timeout"/"crashed"
    source: str
    inputs: str
    lines: tuple[int, int]  # the probe's own lines in `source`
    break_sites: tuple[tuple[int, str], ...]  # every (line, GB id) seen in the probe's source


@dataclass(frozen=True)
class Catalogue:
    torch: str  # the torch version the data was probed with
    entries: tuple[Entry, ...]
    not_probed: tuple[tuple[str, str, str], ...]  # (category, key, why)
    # NumPy functions TorchDynamo handles as NumPy calls, which `torch._numpy` has no function for
    # ("numpy.interp"): read from the installed torch when the data was written, not probed
    numpy_without_torch_equivalent: frozenset[str]


def _read(path: str) -> dict:
    """A data file of this package, in the format this code reads."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: format {data.get('format')!r}, expected {FORMAT}")
    return data


@lru_cache(maxsize=1)
def load() -> Catalogue:
    data = _read(DATA_PATH)
    entries = tuple(
        Entry(key=e["key"], category=e["category"], call=e["call"], args=e["args"], config=e["config"],
              breaks=e["breaks"], gb_ids=tuple(e["gb_ids"]), skips_frame=e["skips_frame"], result=e["result"],
              items=e["items"], type=e["type"], status=e["status"], source=e["source"], inputs=e["inputs"],
              lines=(e["lines"][0], e["lines"][1]),
              break_sites=tuple((line, gb) for line, gb in e["break_sites"]))
        for e in data["entries"]
    )
    not_probed = tuple((n["category"], n["key"], n["reason"]) for n in data["not_probed"])
    return Catalogue(data["torch"], entries, not_probed, frozenset(data["numpy_without_torch_equivalent"]))


@lru_cache(maxsize=1)
def _by_key() -> dict[str, tuple[Entry, ...]]:
    grouped: dict[str, list[Entry]] = {}
    for entry in load().entries:
        grouped.setdefault(entry.key, []).append(entry)
    return {key: tuple(entries) for key, entries in grouped.items()}


def torch_version() -> str:
    return load().torch


def entries(key: str, *, config: str | None = DEFAULT) -> tuple[Entry, ...]:
    """Every probe of `key` (several argument forms), under `config` (None: every config). A torch
    name imported from the submodule defining it (`torch.distributions.kl.kl_divergence`) has the
    probes of the package's re-export (`torch.distributions.kl_divergence`)."""
    by_key = _by_key()
    found = by_key.get(key)
    if found is None:
        parts = key.split(".")
        if len(parts) >= 4 and parts[0] == "torch" and parts[-2].islower():
            found = by_key.get(".".join(parts[:-2] + parts[-1:]))
    return tuple(e for e in found or () if config is None or e.config == config)


def _first(key: str, config: str, args: str | None = None) -> Entry | None:
    return next((e for e in entries(key, config=config) if args is None or e.args == args), None)


def tensor_method(name: str, *, config: str = DEFAULT) -> Entry | None:
    """`torch.Tensor.NAME` (a method, an attribute or an operator dunder) in its first probed form:
    `tensor_method("size")` is `x.size()`; `entries("torch.Tensor.size")` has `x.size(0)` too."""
    return _first(f"torch.Tensor.{name}", config)


def call(qualified: str, *, args: str | None = None, config: str = DEFAULT) -> Entry | None:
    """A call of a qualified function: "torch.cat", "torch.nn.functional.relu", "builtins.len",
    "math.sqrt", "numpy.sqrt"; `args="tensor"` or `"python"` picks the probe given those."""
    return _first(qualified, config, args)


@lru_cache(maxsize=1)
def _declared() -> dict:
    return _read(DECLARED_PATH)


@lru_cache(maxsize=1)
def _declared_results() -> dict[str, Result]:
    return {key: entry["kind"] for key, entry in _declared()["entries"].items()}


@lru_cache(maxsize=1)
def result_fields() -> frozenset[str]:
    """The fields of the named tuples of tensors torch's functions return (`torch.return_types.sort`:
    `values`, `indices`): each holds a tensor."""
    return frozenset(_declared()["result_fields"])


def module_tensor(qualified_class: str, attr: str) -> Literal["tensor", "optional"] | None:
    """Whether a torch.nn class (`torch.nn.BatchNorm1d`, however its module is spelled) registers
    `attr` as a buffer or parameter: "tensor", "optional" where it may register None instead
    (`bias=False`), None when it does not; read from torch's sources by `bench/torch_returns.py`."""
    if not qualified_class.startswith("torch.nn."):
        return None
    return _declared().get("module_tensors", {}).get(f"torch.nn.{qualified_class.rpartition('.')[2]}", {}).get(attr)


def declared_result(qualified: str) -> Result | None:
    """What torch declares a public function or tensor method returns ("torch.is_autocast_enabled":
    "bool", "torch.Tensor.unbind": "tensors"), from its stubs and annotations as
    `bench/torch_returns.py` read them; None where it declares nothing the lint can use (unions,
    `Optional[Tensor]`, types it has no kind for) or the name is not torch's."""
    return _declared_results().get(qualified)


def construct(name: str, *, config: str = DEFAULT) -> Entry | None:
    """A language construct: "generator-function", "user-context-manager", "super-call"..."""
    return _first(f"construct:{name}", config)


@lru_cache(maxsize=1)
def _library_modules() -> frozenset[str]:
    """Modules of torch and NumPy, as the dotted prefixes of probed functions that are neither
    functions nor classes: "torch", "torch.nn.functional", "numpy.random"..."""
    found = set()
    for key in _by_key():
        parts = key.split(".")
        if parts[0] not in ("torch", "numpy"):
            continue
        for end in range(1, len(parts)):
            if parts[end - 1][:1].isupper():
                break
            found.add(".".join(parts[:end]))
    return frozenset(found - set(_by_key()))


def is_library_module(qualified: str) -> bool:
    """Whether a qualified name is a module of torch or NumPy some probe lives in; False for
    functions and classes, and for modules no probe reaches."""
    return qualified in _library_modules()


def not_probed(key: str) -> str | None:
    """Why `key` is not in the catalogue, when it was left out on purpose."""
    return next((why for _, k, why in load().not_probed if k == key), None)
