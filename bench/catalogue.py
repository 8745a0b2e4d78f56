"""What the installed TorchDynamo breaks on, probed construct by construct: the catalogue.

    python bench/catalogue.py --write        # probe everything, write breakscan/lint/data/catalogue.json
    python bench/catalogue.py --check        # probe again, diff against the stored file (exit 1 on a change)
    python bench/catalogue.py --uncovered    # breaking probes no rule flags, from the stored file

Each probe is one expression (or, for language constructs, one small program) inside a tiny
`@torch.compile(backend="eager")` function `probe`. The probes are written to a temporary folder and
run in ONE batch through breakscan's confirmation runner (`run_targets`: one or two worker processes,
each importing torch once), which records every break with its GB id and line. The result type is
the type of the value the probe returns when run eagerly in this process: TorchDynamo preserves it.

Which probes exist:
- every public `torch.Tensor` method and attribute (`dir(torch.Tensor)`): a method is called with the
  first of a few representative argument forms that runs eagerly on CPU (on a float, int, bool, 1-d or
  complex tensor), plus any later form whose result has another type (`x.size()` and `x.size(0)`);
- tensor operators written as syntax (`x + y`, `x[m]`, `x[0] = 1.0`...);
- a curated list of the `torch.*` and `torch.nn.functional.*` functions models use, then every other
  public `torch.*` op and `F.*` function whose simple argument forms run eagerly;
- Python builtins and the standard-library modules model code calls (random, time, math, copy,
  threading, contextlib, functools, itertools, inspect, warnings, logging, os, sys, json, re,
  collections, operator, dataclasses) and numpy's common functions, on tensors and on Python values;
- language constructs (classes, context managers, generators, closures, `super()`...);
- the data-dependent ones again under the config settings that capture them.

What is not probed is listed in the file with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import io
import json
import os
import platform
import re
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from breakscan.lint.catalogue import DATA_PATH, FORMAT  # noqa: E402

DEFAULT = "default"
PROBE_TIMEOUT = 60.0

# torch.optim classes whose methods are probed on an object built outside the compiled code.
# (Not LBFGS, whose `step` needs a closure, SparseAdam, which needs sparse grads, nor Muon, which
# takes 2-d parameters only.)
OPTIMIZERS = ("SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adafactor", "Adamax", "ASGD", "NAdam", "RAdam",
              "RMSprop", "Rprop")
# torch.ao.quantization modules whose call is probed on a module built outside the compiled code.
QUANTIZATION_MODULES = ("FakeQuantize", "FusedMovingAvgObsFakeQuantize", "MinMaxObserver",
                        "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
                        "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "QuantStub", "DeQuantStub")
# Objects a model keeps from call to call, built outside the compiled code (in `__init__`, or at module
# level): name -> (the object's class, the module-level code that builds it). The probes build them at
# module level, where the lint sees what they are, as it does for an attribute set in `__init__`.
# Library objects whose methods are probed: NumPy's and Python's random generators, a queue a model
# fills for a logging or serving thread (holding items to take), a lock, and what a model writes a
# log to (a CSV writer, an in-memory buffer, an open file).
LIBRARY_OBJECTS = {
    "gen": ("numpy.random.Generator", "import numpy as np\ngen = np.random.default_rng(0)"),
    "rstate": ("numpy.random.RandomState", "import numpy as np\nrstate = np.random.RandomState(0)"),
    "prng": ("random.Random", "import random\nprng = random.Random(0)"),
    "fifo": ("queue.Queue", "import queue\nfifo = queue.Queue()\nfor i in range(8):\n    fifo.put(i)"),
    "lock": ("threading.Lock", "import threading\nlock = threading.Lock()"),
    "table": ("csv.writer", "import csv\nimport io\ntable = csv.writer(io.StringIO())"),
    "text": ("io.StringIO", "import io\ntext = io.StringIO()"),
    "raw": ("io.BytesIO", "import io\nraw = io.BytesIO()"),
    "sink": ("io.TextIOWrapper", "import os\nsink = open(os.devnull, 'w')"),
}
# Iterators the compiled code advances (`next`, a `for` loop, a generator's `send`): `self.batches =
# iter(loader)`, a generator kept as a coroutine.
HELD_ITERATORS = {
    "it_generator": ("builtins.generator", "def draws():\n    while True:\n        yield 1.0\n\n\n"
                                           "it_generator = draws()"),
    "it_iter": ("builtins.iterator", "it_iter = iter([1.0] * 100)"),
    "it_zip": ("builtins.zip", "it_zip = zip([1.0] * 100, [2.0] * 100)"),
    "it_map": ("builtins.map", "it_map = map(float, range(100))"),
    "it_enumerate": ("builtins.enumerate", "it_enumerate = enumerate([1.0] * 100)"),
    "it_filter": ("builtins.filter", "it_filter = filter(None, [1.0] * 100)"),
    "it_reversed": ("builtins.reversed", "it_reversed = reversed([1.0] * 100)"),
    **{f"it_{name}": (f"itertools.{name}", f"import itertools\nit_{name} = itertools.{name}({arguments})")
       for name, arguments in (("cycle", "[1.0, 2.0]"), ("count", ""), ("chain", "[1.0] * 50, [2.0] * 50"),
                               ("islice", "[1.0] * 100, 100"), ("repeat", "1.0"))},
}


# The probe's inputs, by parameter name: every probe takes the ones its code mentions.
INPUTS = {
    "x": "torch.rand(4, 4)",  # positive: log, sqrt, multinomial... run on it
    "y": "torch.rand(4, 4)",
    "k": "torch.randint(0, 4, (4, 4))",
    "m": "torch.rand(4, 4) > 0.5",
    "v": "torch.rand(4)",
    "c": "torch.randn(4, 4, dtype=torch.cfloat)",
    "s": "torch.tensor(1.5)",  # a 0-d tensor
    "p": "torch.tensor(0.25)",  # a 0-d tensor where a probability or a small factor goes (`dropout_p=`, `eps=`)
    "i": "torch.tensor([0, 2])",  # an index tensor
    "w": "torch.rand(4, 4, requires_grad=True)",  # a leaf that requires grad
    "r": "torch.get_rng_state()",  # a generator state (a uint8 tensor)
}
# Imports a probe gets when its code names the module.
IMPORTS = {
    "np": "import numpy as np",
    "F": "import torch.nn.functional as F",
    "nn": "from torch import nn",
    "scipy": "import scipy.linalg, scipy.ndimage, scipy.signal, scipy.special, scipy.stats",
    **{name: f"import {name}" for name in (
        "random", "time", "math", "copy", "threading", "contextlib", "functools", "itertools", "inspect",
        "warnings", "logging", "os", "sys", "json", "re", "collections", "operator", "dataclasses",
        "typing", "enum", "numbers", "string", "types", "weakref", "pickle", "io", "struct", "statistics",
        "bisect", "heapq", "hashlib", "uuid", "datetime", "secrets", "textwrap", "fractions", "decimal",
        "unicodedata", "html", "binascii", "shlex", "fnmatch")},
    "urllib": "import urllib.parse",
}


@dataclass(frozen=True)
class Probe:
    key: str  # "torch.Tensor.size", "builtins.len", "math.sqrt", "construct:generator"
    category: str
    call: str  # what is probed, as written (the expression, or the construct's one-line summary)
    args: str  # "tensor", "python", "none", "generator": what the probed call is given
    source: str
    inputs: str  # the inputs expression (a tuple), evaluated in the source's namespace
    lines: tuple[int, int]  # the probe's own lines: a break there is a break of the construct
    config: str = DEFAULT


@dataclass
class Catalogue:
    probes: list[Probe] = field(default_factory=list)
    not_probed: dict[tuple[str, str], str] = field(default_factory=dict)  # (category, key) -> why

    def skip(self, category: str, key: str, reason: str) -> None:
        self.not_probed.setdefault((category, key), reason)


def _names(code: str) -> set[str]:
    """Names CODE mentions, outside plain string literals (an f-string's fields count)."""
    code = re.sub(r"(?<![fF])('[^']*'|\"[^\"]*\")", "''", code)
    return set(re.findall(r"(?<![.\w])([A-Za-z_]\w*)", code))


def _inputs(params: list[str]) -> str:
    return "(" + "".join(f"{INPUTS[p]}, " for p in params) + ")"


def expression_probe(key: str, category: str, code: str, *, args: str, config: str = DEFAULT,
                     statement: bool = False, returns: str = "result") -> Probe:
    """A probe of one line: `result = CODE` (or CODE itself as a statement) in the compiled function."""
    used = _names(code) | _names(returns)
    params = [p for p in INPUTS if p in used]
    imports = ["import torch", *(IMPORTS[n] for n in IMPORTS if n in used and n != "torch")]
    header = list(imports)
    if config != DEFAULT:
        header.append(f"torch._dynamo.config.{config}")
    line = len(header) + 5
    body = code if statement else f"result = {code}"
    ret = returns if not statement or returns != "result" else "None"
    source = "\n".join([*header, "", "", '@torch.compile(backend="eager")', f"def probe({', '.join(params)}):",
                        f"    {body}", f"    return {ret}", ""])
    return Probe(key, category, code, args, source, _inputs(params), (line, line), config)


def program_probe(key: str, category: str, summary: str, program: str, *, config: str = DEFAULT) -> Probe:
    """A language construct: a small module whose compiled `probe` uses it; any line of it counts.
    The probe is given the inputs its parameters without a default name."""
    signature = re.findall(r"def probe\(([^)]*)\)", program)[0]
    names = [p.strip() for p in signature.split(",") if p.strip() and "=" not in p]
    used = _names(program)
    imports = ["import torch", *(IMPORTS[n] for n in IMPORTS if n in used and n != "torch")]
    if config != DEFAULT:
        imports.append(f"torch._dynamo.config.{config}")
    source = "\n".join(imports) + "\n\n\n" + program.strip("\n") + "\n"
    first = len(imports) + 3
    return Probe(key, category, summary, "tensor" if names else "none", source, _inputs(names),
                 (first, source.count("\n")), config)


def held_object_probe(key: str, category: str, setup: str, code: str, *, statement: bool = False) -> Probe:
    """A probe of one line on an object the module-level `setup` builds (`gen.choice(4)`), given
    the inputs the line names (`fakequantize(x)`)."""
    body = code if statement else f"result = {code}"
    params = ", ".join(p for p in INPUTS if p in _names(code))
    program = (f'{setup}\n\n\n@torch.compile(backend="eager")\ndef probe({params}):\n    {body}\n'
               f'    return {"None" if statement else "result"}\n')
    return program_probe(key, category, code, program)


# --- running ------------------------------------------------------------------------------------


def classify(value: Any) -> tuple[str, str | None, str]:
    """(result kind, kind of the items for a tuple/list when they share one, type name)."""
    import numpy as np
    import torch

    kind = type(value)
    name = "None" if value is None else f"{kind.__module__}.{kind.__qualname__}".removeprefix("builtins.")
    if isinstance(value, torch.Tensor):
        return "tensor", None, name
    if isinstance(value, torch.Size):
        return "size", "int", name
    simple = [(bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (tuple, "tuple"), (list, "list"),
              (dict, "dict"), (np.ndarray, "ndarray")]
    for python_type, result in simple:
        if isinstance(value, python_type):
            items = None
            if isinstance(value, tuple | list) and value:
                kinds = {classify(item)[0] for item in value}
                items = kinds.pop() if len(kinds) == 1 else "mixed"
            return result, items, name
    return ("none" if value is None else "other"), None, name


def eager_run(source: str, inputs: str) -> Any:
    """Run the probe's function eagerly (uncompiled) on fresh inputs; its output is swallowed."""
    module = types.ModuleType("breakscan_catalogue_probe")
    module.__file__ = __file__
    sys.modules[module.__name__] = module  # a dataclass looks its module up there
    try:
        with _quiet():
            exec(compile(source, "<probe>", "exec"), module.__dict__)  # noqa: S102 - our own probe
            function = module.__dict__["probe"]
            function = getattr(function, "_torchdynamo_orig_callable", function)
            return function(*eval(inputs, module.__dict__))  # noqa: S307 - our own probe
    finally:
        del sys.modules[module.__name__]


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _restoring_dynamo_config():
    """A variant's source sets torch._dynamo.config when it is executed: undo it afterwards."""
    import torch

    saved = torch._dynamo.config.get_config_copy()
    try:
        yield
    finally:
        with warnings.catch_warnings():  # the copy holds deprecated settings, which warn when set
            warnings.simplefilter("ignore", FutureWarning)
            torch._dynamo.config.load_config(saved)


_AT_PROBE = re.compile(r"\(at \S*probe_\d+\.py:(\d+)\)")  # where an error happened, without the temporary folder


def run_probes(probes: list[Probe], *, progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Every probe under TorchDynamo in one batch (breakscan's runner), its result type eagerly."""
    from breakscan.confirm import run_targets
    from breakscan.confirm.runner import Step
    from breakscan.model import TargetSpec

    with tempfile.TemporaryDirectory(prefix="breakscan-catalogue-") as folder:
        specs = []
        for index, probe in enumerate(probes):
            path = os.path.join(folder, f"probe_{index:05d}.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(probe.source)
            specs.append(TargetSpec(path, "probe", probe.inputs, name=f"{index}"))
        done = [0]

        def counting(step: Step) -> None:
            if progress and step.phase == "done":
                done[0] += 1
                if done[0] % 100 == 0 or done[0] == len(specs):
                    progress(f"{done[0]}/{len(specs)} probes run")

        results = run_targets(specs, device="cpu", timeout=PROBE_TIMEOUT, progress=counting)
    entries = []
    for probe, result in zip(probes, results):
        first, last = probe.lines
        sites = sorted({(b.line, b.gb_id or "unknown", b.frame_skipped) for b in result.breaks
                        if os.path.basename(b.path).startswith("probe_")})
        own = [site for site in sites if first <= site[0] <= last]
        with _restoring_dynamo_config():
            try:
                kind, items, type_name = classify(eager_run(probe.source, probe.inputs))
            except Exception as exc:  # noqa: BLE001 - a probe that fails eagerly says so
                kind, items, type_name = "error", None, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        entries.append({
            "key": probe.key, "category": probe.category, "call": probe.call, "args": probe.args,
            "config": probe.config, "status": result.status,
            "breaks": bool(own), "gb_ids": sorted({gb for _, gb, _ in own}),
            "skips_frame": any(skipped for _, _, skipped in own),
            "result": kind, "items": items, "type": type_name,
            "break_sites": [[line, gb] for line, gb, _ in sites],
            "lines": list(probe.lines), "source": probe.source, "inputs": probe.inputs,
            **({"error": _AT_PROBE.sub(r"(at line \1)", result.error)} if result.error else {}),
        })
    return entries


# --- what is probed -------------------------------------------------------------------------------


def _try(code: str) -> tuple[bool, str]:
    """Does CODE run eagerly on fresh inputs? (and the kind of its result)"""
    import numpy as np
    import torch
    import torch.nn.functional as F

    namespace: dict[str, Any] = {"torch": torch, "np": np, "F": F}
    try:
        with _quiet():
            for name, expression in INPUTS.items():
                namespace[name] = eval(expression, namespace)  # noqa: S307 - our own inputs
            return True, classify(eval(code, namespace))[0]  # noqa: S307 - our own probe
    except Exception:  # noqa: BLE001 - any failure means "not this form"
        return False, ""


# Argument forms tried for a tensor method, in order; {o} is another tensor like the receiver.
METHOD_FORMS = ("", "{o}", "0", "{o}, {o}", "1", "0, 1", "1, 0", "-1", "4, 4", "0, i", "m, 0.0", "0, k, {o}",
                "torch.float64", "0, 0, 2", "s")
# Receiver -> the other tensor: float, int, bool, 1-d, complex, 0-d.
RECEIVERS = {"x": "y", "k": "k", "m": "m", "v": "v", "c": "c", "s": "s"}
MAX_FORMS = 3
# Tensor methods not probed, and why (they are covered elsewhere or cannot be called simply).
METHOD_SKIPS = {
    "set_": "replaces the tensor's storage: not a model-code operation",
    "apply_": "takes a Python callable applied per element (CPU only)",
    "map_": "takes a Python callable applied per element (CPU only)",
    "map2_": "takes a Python callable applied per element (CPU only)",
    "backward": "needs a tensor that requires grad: see construct:backward-call",
    "register_hook": "needs a tensor that requires grad: see construct:register-hook",
    "register_post_accumulate_grad_hook": "needs a leaf that requires grad",
    "retain_grad": "needs a tensor that requires grad: see construct:retain-grad",
    "record_stream": "needs a CUDA stream",
}


def tensor_probes(catalogue: Catalogue) -> None:
    import torch

    sample = torch.rand(2, 2)
    for name in sorted(n for n in dir(torch.Tensor) if not n.startswith("_")):
        key = f"torch.Tensor.{name}"
        try:
            with _quiet():
                member = getattr(sample, name, None)
        except RuntimeError:  # `.imag` of a real tensor
            member = None
        if not callable(member):
            receiver = next((r for r in RECEIVERS if _try(f"{r}.{name}")[0]), None)
            if receiver is None:
                catalogue.skip("tensor-attribute", key, "reading it raised on every sample tensor")
            else:
                catalogue.probes.append(expression_probe(key, "tensor-attribute", f"{receiver}.{name}", args="tensor"))
            continue
        if name in METHOD_SKIPS:
            catalogue.skip("tensor-method", key, METHOD_SKIPS[name])
            continue
        forms = _method_forms(name)
        if not forms:
            catalogue.skip("tensor-method", key, "no representative call ran eagerly on CPU "
                           f"(tried {len(METHOD_FORMS)} argument forms on float, int, bool, 1-d and complex tensors)")
        for code in forms:
            catalogue.probes.append(expression_probe(key, "tensor-method", code, args="tensor"))


def _method_forms(name: str) -> list[str]:
    """The first form that runs, then later ones whose result has a kind not seen yet."""
    for receiver, other in RECEIVERS.items():
        kinds: dict[str, str] = {}
        for form in METHOD_FORMS:
            code = f"{receiver}.{name}({form.format(o=other)})"
            ok, kind = _try(code)
            if ok and kind not in kinds:
                kinds[kind] = code
                if len(kinds) == MAX_FORMS:
                    break
        if kinds:
            return list(kinds.values())
    return []


TENSOR_OPERATORS = {
    "__add__": ["x + y", "x + 1"], "__sub__": ["x - y"], "__mul__": ["x * y", "x * 2"], "__truediv__": ["x / y"],
    "__floordiv__": ["x // y"], "__mod__": ["x % y"], "__pow__": ["x ** 2"], "__matmul__": ["x @ y"],
    "__neg__": ["-x"], "__pos__": ["+x"], "__invert__": ["~m"], "__and__": ["m & m"], "__or__": ["m | m"],
    "__xor__": ["m ^ m"], "__lshift__": ["k << 1"], "__rshift__": ["k >> 1"], "__eq__": ["x == y"],
    "__ne__": ["x != y"], "__lt__": ["x < y"], "__gt__": ["x > 0.5"], "__le__": ["x <= y"], "__ge__": ["x >= y"],
    "__radd__": ["1 + x"], "__rmul__": ["2 * x"], "__rsub__": ["1 - x"], "__rtruediv__": ["1 / x"],
    "__rpow__": ["2 ** x"],
    "__getitem__": ["x[0]", "x[0, 1]", "x[:, 1:3]", "x[None]", "x[..., 0]", "x[i]", "x[m]", "x[k]", "x[x > 0.5]",
                    "x[s.long()]", "x[v.argmax()]", "x[:, i]", "x[k[0, 0]]", "x[: k[0, 0]]"],
    # len(x), bool(s), int(s), abs(x), repr(x), list(x)... are probed with the builtins.
    "__index__": ["[1, 2, 3, 4][k[0, 0]]"], "__contains__": ["0.5 in x"], "__reversed__": ["list(reversed(v))"],
    "__format__": ["f'{x}'", "f'{s:.2f}'", "f'{x.shape}'", "f'{x.shape[0]}'"], "__dlpack__": ["x.__dlpack__()"],
}
TENSOR_STATEMENTS = {
    "__setitem__": ["x[0] = 1.0", "x[m] = 0.0", "x[:, 0] = y[:, 0]", "x[i] = 0.0", "x[x > 0.5] = 0.0"],
    "__iadd__": ["x += 1"], "__imul__": ["x *= y"],
}


def operator_probes(catalogue: Catalogue) -> None:
    for name, codes in TENSOR_OPERATORS.items():
        for code in codes:
            catalogue.probes.append(expression_probe(f"torch.Tensor.{name}", "tensor-operator", code, args="tensor"))
    for name, codes in TENSOR_STATEMENTS.items():
        for code in codes:
            catalogue.probes.append(expression_probe(f"torch.Tensor.{name}", "tensor-operator", code, args="tensor",
                                                     statement=True, returns="x"))


# The torch functions models use, with representative arguments.
TORCH_CALLS = [
    "torch.cat([x, y])", "torch.cat([x, y], dim=1)", "torch.stack([x, y])", "torch.hstack([x, y])",
    "torch.vstack([x, y])", "torch.zeros(4, 4)", "torch.zeros(x.shape)", "torch.zeros(x.size(0), 2)",
    "torch.zeros(k[0, 0])", "torch.zeros_like(x)", "torch.ones(4)", "torch.ones_like(x)", "torch.full((2, 2), 1.0)",
    "torch.full_like(x, 2.0)", "torch.empty(2, 2)", "torch.empty_like(x)", "torch.rand(2)", "torch.randn(2, 3)",
    "torch.randint(0, 4, (2,))", "torch.randn_like(x)", "torch.rand_like(x)", "torch.randperm(4)",
    "torch.arange(4)", "torch.arange(x.shape[0])", "torch.arange(k[0, 0])", "torch.linspace(0, 1, 5)",
    "torch.logspace(0, 1, 5)", "torch.eye(3)", "torch.tensor([1.0, 2.0])", "torch.tensor(x.shape)",
    "torch.tensor(3)", "torch.tensor(s)", "torch.as_tensor([1, 2])", "torch.as_tensor(x)",
    "torch.full((2,), p)", "torch.clamp(x, min=p)",
    "torch.from_numpy(np.ones(2))", "torch.matmul(x, y)", "torch.mm(x, y)", "torch.bmm(x[None], y[None])",
    "torch.einsum('ij,jk->ik', x, y)", "torch.softmax(x, dim=-1)", "torch.log_softmax(x, 1)", "torch.sigmoid(x)",
    "torch.tanh(x)", "torch.relu(x)", "torch.exp(x)", "torch.log(x)", "torch.sqrt(x)", "torch.rsqrt(x)",
    "torch.abs(x)", "torch.clamp(x, 0.2, 0.8)", "torch.clamp(x, min=s)", "torch.where(m, x, y)",
    "torch.where(m, x, 0.0)", "torch.where(m)", "torch.nonzero(x)", "torch.nonzero(x, as_tuple=True)",
    "torch.argwhere(x)", "torch.masked_select(x, m)", "torch.unique(k)", "torch.unique(k, return_counts=True)",
    "torch.unique_consecutive(k)", "torch.bincount(k.flatten())", "torch.bincount(k.flatten(), minlength=4)",
    "torch.argmax(x)", "torch.argmax(x, dim=1)", "torch.max(x)", "torch.max(x, 0)", "torch.max(x, y)",
    "torch.min(x)", "torch.topk(x, 2)", "torch.sort(x)", "torch.argsort(x)", "torch.sum(x)", "torch.mean(x, 0)",
    "torch.std(x)", "torch.var(x)", "torch.prod(x)", "torch.cumsum(x, 0)", "torch.cumprod(x, 0)",
    "torch.norm(x)", "torch.dist(x, y)", "torch.cdist(x, y)", "torch.flatten(x)", "torch.reshape(x, (16,))",
    "torch.transpose(x, 0, 1)", "torch.permute(x, (1, 0))", "torch.squeeze(x)", "torch.unsqueeze(x, 0)",
    "torch.split(x, 2)", "torch.split(x, [1, 3])", "torch.chunk(x, 2)", "torch.unbind(x)",
    "torch.gather(x, 1, k)", "torch.scatter(x, 1, k, y)", "torch.scatter_add(x, 1, k, y)",
    "torch.index_select(x, 0, i)", "torch.tril(x)", "torch.triu(x)", "torch.diag(v)", "torch.diagonal(x)",
    "torch.outer(v, v)", "torch.flip(x, [0])", "torch.roll(x, 1)", "torch.repeat_interleave(x, 2)",
    "torch.repeat_interleave(k.flatten())", "torch.repeat_interleave(v, k[0])",
    "torch.repeat_interleave(v, torch.tensor([1, 2, 0, 1]), output_size=4)", "torch.tile(x, (2,))", "torch.broadcast_to(v, (4, 4))",
    "torch.broadcast_tensors(x, v)", "torch.meshgrid(v, v, indexing='ij')", "torch.allclose(x, y)",
    "torch.equal(x, y)", "torch.isclose(x, y)", "torch.isnan(x)", "torch.isinf(x)", "torch.isfinite(x)",
    "torch.any(m)", "torch.all(m)", "torch.logical_and(m, m)", "torch.logical_not(m)", "torch.maximum(x, y)",
    "torch.minimum(x, y)", "torch.lerp(x, y, 0.5)", "torch.addmm(x, x, y)", "torch.erf(x)", "torch.pow(x, 2)",
    "torch.floor(x)", "torch.ceil(x)", "torch.round(x)", "torch.sign(x)", "torch.fmod(x, 0.3)",
    "torch.remainder(x, 0.3)", "torch.div(x, y, rounding_mode='floor')", "torch.floor_divide(x, y)",
    "torch.numel(x)", "torch.is_tensor(x)", "torch.is_floating_point(x)", "torch.is_complex(x)",
    "torch.get_default_dtype()", "torch.is_grad_enabled()", "torch.is_inference_mode_enabled()",
    "torch.is_autocast_enabled()", "torch.manual_seed(0)", "torch.seed()", "torch.initial_seed()",
    "torch.get_rng_state()", "torch.set_rng_state(r)", "torch.random.get_rng_state()", "torch.random.set_rng_state(r)",
    "torch.random.manual_seed(0)", "torch.cuda.manual_seed(0)", "torch.cuda.manual_seed_all(0)",
    "torch.finfo(torch.float32).eps", "torch.finfo(x.dtype).max",
    "torch.iinfo(torch.int64).max", "torch.broadcast_shapes((4, 1), (1, 4))", "torch.result_type(x, y)",
    "torch.promote_types(torch.float32, torch.int64)", "torch.can_cast(torch.float32, torch.int64)",
    "torch.device('cpu')", "torch.Generator()", "torch.empty_strided((2, 2), (2, 1))",
    "torch.nested.nested_tensor([x, y])", "torch.nested.as_nested_tensor([x, y])", "torch.random.fork_rng(devices=[])",
    "torch.tensor_split(x, 2)", "torch.searchsorted(torch.sort(v).values, v)", "torch.bucketize(v, v.sort().values)",
    "torch.histc(x)", "torch.histogram(x)", "torch.multinomial(v, 2)", "torch.bernoulli(x)", "torch.normal(x, 1.0)",
    "torch.poisson(x)", "torch.dropout(x, 0.5, True)", "torch.layer_norm(x, (4,))", "torch.count_nonzero(x)",
    "torch.diff(x)", "torch.kron(x, y)", "torch.cross(x[:3, :3], y[:3, :3], dim=0)", "torch.nan_to_num(x)",
    "torch.clip(x, 0.0, 1.0)", "torch.addcmul(x, x, y)", "torch.block_diag(x, y)", "torch.cartesian_prod(v, v)",
    "torch.combinations(v)", "torch.rot90(x)", "torch.narrow(x, 0, 0, 2)", "torch.select(x, 0, 1)",
    "torch.take_along_dim(x, k, 1)", "torch.logsumexp(x, 0)", "torch.amax(x, 0)", "torch.quantile(x, 0.5)",
    "torch.median(x)", "torch.mode(v)", "torch.kthvalue(v, 2)", "torch.std_mean(x)", "torch.var_mean(x)",
    "torch.tensordot(x, y, dims=1)", "torch.trace(x)", "torch.cov(x)", "torch.corrcoef(x)", "torch.atleast_2d(v)",
    "torch.complex(x, y)", "torch.view_as_real(c)", "torch.view_as_complex(torch.stack([x, y], -1))",
    "torch.real(c)", "torch.polar(x, y)", "torch.stft(v.repeat(16), 8, return_complex=True)",
    "torch.linalg.norm(x)", "torch.linalg.vector_norm(x)", "torch.linalg.matrix_norm(x)",
    "torch.linalg.inv(x + 4 * torch.eye(4))", "torch.linalg.solve(x + 4 * torch.eye(4), y)",
    "torch.linalg.det(x)", "torch.linalg.svd(x)", "torch.linalg.qr(x)", "torch.linalg.eigh(x + x.T)",
    "torch.linalg.cholesky(x @ x.T + torch.eye(4))", "torch.linalg.eig(x)", "torch.linalg.lstsq(x, y)",
    "torch.linalg.pinv(x)", "torch.linalg.matrix_rank(x)", "torch.fft.fft(x)", "torch.fft.rfft(x)",
    "torch.fft.ifft(c)", "torch.fft.fftfreq(4)", "torch.special.erf(x)", "torch.special.logit(x)",
    "torch.autograd.grad((w * 2).sum(), w)", "torch.cuda.is_available()", "torch.cuda.device_count()",
    "torch.backends.cudnn.enabled", "torch.jit.is_scripting()", "torch.jit.is_tracing()",
    "torch.jit.isinstance(x, torch.Tensor)", "torch.jit.annotate(torch.Tensor, x)",
    "torch.compiler.is_compiling()", "torch.compiler.is_dynamo_compiling()", "torch._dynamo.graph_break()",
    "torch._C._get_tracing_state()", "torch.overrides.has_torch_function((x,))", "torch.get_num_threads()",
    "torch.are_deterministic_algorithms_enabled()", "torch.typename(x)", "torch.is_nonzero(s)",
    "torch.nn.Parameter(x)", "torch.nn.Linear(4, 4)", "torch.nn.init.normal_(x)",
    "torch.nn.init.xavier_uniform_(x)", "torch.distributions.Normal(x, 1.0).sample()",
    "torch.distributions.Normal(x, 1.0, validate_args=True)", "torch.distributions.Dirichlet(x + 0.1)",
    "torch.distributions.Dirichlet(x + 0.1, validate_args=True)", "torch.distributions.Categorical(probs=x)",
    "torch.distributions.Categorical(probs=x, validate_args=True)",
    "torch.distributions.kl_divergence(torch.distributions.Normal(x, 1.0), torch.distributions.Normal(y, 1.0))",
    "torch.utils.checkpoint.checkpoint(torch.sin, x, use_reentrant=False)", "torch.vmap(torch.sin)(x)",
    "torch.func.grad(lambda t: t.sin().sum())(x)", "torch.cond(s > 1, torch.sin, torch.cos, (x,))",
    "torch.nonzero_static(x, size=16)", "torch.sym_int(x.shape[0] / 2)", "torch.sym_max(x.shape[0], 2)",
    # Modules on TorchDynamo's skip list (MOD_SKIPLIST): which of their functions it special-cases
    # can only be told by probing each.
    "torch.cpu.is_available()", "torch.cpu.device_count()", "torch.cpu.current_device()",
    "torch.cpu.synchronize()", "torch.quasirandom.SobolEngine(4)",
]
# Methods of torch's own objects, given one built outside the compiled code: (key, code).
# Methods of torch objects built outside the compiled code, at module level: (key, setup, call).
TORCH_OBJECT_CALLS = [
    *((f"torch.quasirandom.SobolEngine.{method}", "engine = torch.quasirandom.SobolEngine(4)",
       f"engine.{method}({arguments})") for method, arguments in (("draw", "2"), ("reset", ""))),
    *((f"torch.optim.{name}.{method}", f"opt = torch.optim.{name}([torch.nn.Parameter(torch.rand(4))], lr=0.1)",
       f"opt.{method}()") for name in OPTIMIZERS for method in ("step", "zero_grad")),
    *((f"torch.ao.quantization.{name}.__call__", f"quant = torch.ao.quantization.{name}()", "quant(x)")
      for name in QUANTIZATION_MODULES),
    # The handle a module hook's registration gives (registered where the code runs eagerly).
    ("torch.utils.hooks.RemovableHandle.remove",
     "handle = torch.nn.Linear(4, 4).register_forward_hook(lambda module, args, output: None)", "handle.remove()"),
]
FUNCTIONAL_CALLS = [
    "F.relu(x)", "F.gelu(x)", "F.gelu(x, approximate='tanh')", "F.silu(x)", "F.softmax(x, dim=-1)",
    "F.log_softmax(x, dim=-1)", "F.sigmoid(x)", "F.tanh(x)", "F.dropout(x, 0.1)", "F.dropout(x, 0.1, training=False)",
    "F.linear(x, y)", "F.linear(x, y, v)", "F.conv1d(x[None], torch.rand(2, 4, 3))",
    "F.conv2d(x[None, None], torch.rand(2, 1, 3, 3))", "F.conv2d(x[None, None], torch.rand(2, 1, 3, 3), padding='same')",
    "F.conv_transpose2d(x[None, None], torch.rand(1, 2, 3, 3))", "F.max_pool2d(x[None], 2)", "F.avg_pool2d(x[None], 2)",
    "F.adaptive_avg_pool2d(x[None], 1)", "F.adaptive_max_pool2d(x[None], 1)",
    "F.interpolate(x[None, None], scale_factor=2)", "F.interpolate(x[None, None], size=(8, 8), mode='bilinear')",
    "F.pad(x, (1, 1))", "F.pad(x, (1, 1), mode='reflect')", "F.layer_norm(x, (4,))", "F.group_norm(x[None], 2)",
    "F.batch_norm(x, torch.zeros(4), torch.ones(4))", "F.instance_norm(x[None])", "F.normalize(x)",
    "F.normalize(x, dim=-1)", "F.embedding(k, x)", "F.one_hot(k)", "F.one_hot(k, 4)", "F.one_hot(k, num_classes=-1)",
    "F.cross_entropy(x, k[:, 0])", "F.cross_entropy(x, k[:, 0], ignore_index=0)", "F.mse_loss(x, y)",
    "F.l1_loss(x, y)", "F.smooth_l1_loss(x, y)", "F.huber_loss(x, y)", "F.binary_cross_entropy(x, y)",
    "F.binary_cross_entropy_with_logits(x, y)", "F.nll_loss(F.log_softmax(x, 1), k[:, 0])",
    "F.kl_div(x.log(), y, reduction='batchmean')", "F.cosine_similarity(x, y)", "F.pairwise_distance(x, y)",
    "F.scaled_dot_product_attention(x[None], y[None], y[None])",
    "F.scaled_dot_product_attention(x[None], y[None], y[None], is_causal=True)",
    "F.scaled_dot_product_attention(x[None], y[None], y[None], attn_mask=m[None])",
    "F.unfold(x[None, None], 2)", "F.fold(torch.rand(1, 4, 9), (4, 4), 2)", "F.pixel_shuffle(torch.rand(1, 4, 2, 2), 2)",
    "F.softplus(x)", "F.elu(x)", "F.leaky_relu(x, 0.1)", "F.hardswish(x)", "F.mish(x)", "F.glu(x)", "F.relu6(x)",
    "F.softsign(x)", "F.logsigmoid(x)", "F.hardtanh(x)", "F.gumbel_softmax(x)", "F.grid_sample(x[None, None], torch.rand(1, 2, 2, 2))",
    "F.affine_grid(torch.rand(1, 2, 3), [1, 1, 4, 4])", "F.embedding_bag(k, x)", "F.triplet_margin_loss(x, y, x)",
    "F.margin_ranking_loss(v, v, v.sign())", "F.ctc_loss(F.log_softmax(torch.rand(5, 1, 4), 2), torch.tensor([[1, 2]]), (5,), (2,))",
    "F.multi_margin_loss(x, k[:, 0])", "F.dropout2d(x[None], 0.1)", "F.alpha_dropout(x, 0.1)",
    "F.local_response_norm(x[None, None], 2)", "F.rms_norm(x, (4,))", "F.threshold(x, 0.5, 0.0)",
    # a 0-d tensor where the op's schema takes a Python number (a learned temperature, a buffer)
    "F.batch_norm(x, torch.zeros(4), torch.ones(4), training=True, momentum=p)",
    "F.batch_norm(x, torch.zeros(4), torch.ones(4), eps=p)", "F.layer_norm(x, (4,), eps=p)",
    "F.batch_norm(x, torch.zeros(4), torch.ones(4), None, None, True, p)",
    "F.batch_norm(x, torch.zeros(4), torch.ones(4), None, None, False, 0.1, p)", "F.layer_norm(x, (4,), None, None, p)",
    "F.group_norm(x[None], 2, None, None, p)", "F.elu(x, p)", "F.softplus(x, p)",
    "F.group_norm(x[None], 2, eps=p)", "F.instance_norm(x[None], eps=p)", "F.rms_norm(x, (4,), eps=p)",
    "F.dropout(x, p)", "F.dropout(x, p=p)", "F.alpha_dropout(x, p)", "F.dropout2d(x[None], p)",
    "F.leaky_relu(x, p)", "F.leaky_relu(x, negative_slope=p)", "F.elu(x, alpha=p)", "F.celu(x, alpha=p)",
    "F.softplus(x, beta=p)", "F.hardtanh(x, min_val=p)", "F.threshold(x, p, 0.0)", "F.celu(x)",
    "F.smooth_l1_loss(x, y, beta=p)", "F.huber_loss(x, y, delta=p)", "F.cross_entropy(x, k[:, 0], label_smoothing=p)",
    "F.cosine_similarity(x, y, eps=p)", "F.normalize(x, eps=p)", "F.pairwise_distance(x, y, eps=p)",
    "F.scaled_dot_product_attention(x[None], y[None], y[None], scale=p)",
    "F.scaled_dot_product_attention(x[None], y[None], y[None], dropout_p=p)",
    "F.gumbel_softmax(x, tau=p)", "F.triplet_margin_loss(x, y, x, margin=p)",
    "F.margin_ranking_loss(v, v, v.sign(), margin=p)", "F.pad(x, (1, 1), value=p)",
    "F.local_response_norm(x[None, None], 2, alpha=p)", "F.softmax(x / p, dim=-1)",
]
# torch.* names the introspection leaves alone: they change global state or read/write files.
TORCH_NAME_SKIPS = ("set_", "use_", "save", "load", "compile", "manual_seed", "seed", "from_file",
                    "fork_rng", "autocast", "export", "sym_", "cond", "vmap", "while_loop")
SIMPLE_FORMS = ("x", "x, y", "x, 0", "v", "m", "x, y, y", "k")


def _key_of(code: str) -> str:
    """`torch.max(x, 0)` -> `torch.max`; `torch.finfo(x.dtype).max` -> `torch.finfo`."""
    match = re.match(r"[\w.]+", code)
    name = match.group(0) if match else code
    return name.replace("F.", "torch.nn.functional.", 1) if name.startswith("F.") else name


def function_probes(catalogue: Catalogue) -> None:
    import torch
    import torch.nn.functional as F

    for category, calls in (("torch", TORCH_CALLS), ("functional", FUNCTIONAL_CALLS)):
        for code in calls:
            catalogue.probes.append(expression_probe(_key_of(code), category, code, args="tensor"))
    for key, setup, code in TORCH_OBJECT_CALLS:  # a SobolEngine, an optimizer (a training step compiled whole
        catalogue.probes.append(held_object_probe(key, "torch", setup, code))  # calls it), a quantization module
    curated = {_key_of(code) for code in TORCH_CALLS + FUNCTIONAL_CALLS}
    ops = sorted(n for n in dir(torch._C._VariableFunctions) if not n.startswith("_") and not n.endswith("_"))
    public_f = sorted(n for n in dir(F) if n[:1].islower() and callable(getattr(F, n))
                      and getattr(getattr(F, n), "__module__", "").startswith("torch"))
    for category, module, prefix, names in (("torch", torch, "torch", ops), ("functional", F, "F", public_f)):
        for name in names:
            key = _key_of(f"{prefix}.{name}")
            if key in curated or not hasattr(module, name):
                continue
            if name.startswith(TORCH_NAME_SKIPS):
                catalogue.skip(category, key, "changes global state or touches files: not probed by introspection")
                continue
            form = next((f for f in SIMPLE_FORMS if _try(f"{prefix}.{name}({f})")[0]), None)
            if form is None:
                catalogue.skip(category, key, f"no simple argument form ran eagerly (tried {', '.join(SIMPLE_FORMS)})")
                continue
            catalogue.probes.append(expression_probe(key, category, f"{prefix}.{name}({form})", args="tensor"))


# Builtins, on tensors and on Python values: (code, args).
BUILTIN_CALLS = [
    ("len(x)", "tensor"), ("len([1, 2])", "python"), ("len(x.shape)", "python"), ("int(s)", "tensor"),
    ("int(x.shape[0] / 2)", "python"), ("int('3')", "python"), ("float(s)", "tensor"), ("float(x.shape[0])", "python"),
    ("bool(s)", "tensor"), ("bool(x.shape[0])", "python"), ("bool([1])", "python"), ("print(x)", "tensor"),
    ("print('hi')", "python"), ("isinstance(x, torch.Tensor)", "tensor"), ("isinstance(3, int)", "python"),
    ("issubclass(type(x), torch.Tensor)", "tensor"), ("any([s > 1])", "tensor"), ("any(v > 0.5)", "tensor"),
    ("any([True, False])", "python"), ("all([s > 1])", "tensor"), ("all(v > 0)", "tensor"),
    ("all([True, False])", "python"), ("sum(x)", "tensor"), ("sum([x, y])", "tensor"), ("sum([1, 2])", "python"),
    ("min(v)", "tensor"), ("min(s, 1.0)", "tensor"), ("min(1, 2)", "python"), ("max(v)", "tensor"),
    ("max(x.shape)", "python"), ("max(1, 2)", "python"), ("sorted(v)", "tensor"), ("sorted([3, 1, 2])", "python"),
    ("list(map(torch.sin, [x, y]))", "tensor"), ("list(map(abs, [1, -2]))", "python"), ("list(zip(x, y))", "tensor"),
    ("list(zip([1, 2], [3, 4]))", "python"), ("list(enumerate(x))", "tensor"), ("list(enumerate([4, 5]))", "python"),
    ("list(range(x.shape[0]))", "python"), ("list(range(k[0, 0] + 1))", "tensor"), ("list(range(3))", "python"),
    ("list(x)", "tensor"), ("list((1, 2))", "python"), ("tuple(x)", "tensor"), ("tuple(x.shape)", "python"),
    ("dict(a=x)", "tensor"), ("dict([(1, 2)])", "python"), ("set([1, 2])", "python"), ("set(v)", "tensor"),
    ("frozenset([1])", "python"), ("hash(x)", "tensor"), ("hash(3)", "python"), ("id(x)", "tensor"),
    ("id([])", "python"), ("repr(x)", "tensor"), ("repr(x.shape)", "python"), ("str(x)", "tensor"),
    ("str(x.shape)", "python"), ("str(x.dtype)", "python"), ("str(3)", "python"), ("format(s, '.2f')", "tensor"),
    ("format(3.5, '.2f')", "python"), ("round(2.5)", "python"), ("round(x.shape[0] / 3)", "python"), ("abs(x)", "tensor"),
    ("abs(-1)", "python"), ("divmod(7, 2)", "python"), ("pow(x, 2)", "tensor"),
    ("pow(2, 3)", "python"), ("iter(x)", "tensor"), ("next(iter(x))", "tensor"), ("next(iter([1, 2]))", "python"),
    ("getattr(x, 'shape')", "tensor"), ("getattr(torch, 'sin')(x)", "tensor"), ("hasattr(x, 'shape')", "tensor"),
    ("type(x)", "tensor"), ("type(3)", "python"), ("callable(x)", "tensor"), ("callable(len)", "python"),
    ("open(__file__).close()", "python"), ("ord('a')", "python"), ("chr(97)", "python"), ("vars(torch.nn.Module())", "python"),
    ("setattr(torch.nn.Module(), 'a', 1)", "python"),
    ("dir(x)", "tensor"), ("globals()", "python"), ("locals()", "python"), ("eval('1 + 1')", "python"),
    ("exec('a = 1')", "python"), ("compile('1', 'f', 'eval')", "python"), ("list(reversed([1, 2]))", "python"),
    ("list(filter(None, [0, 1]))", "python"), ("slice(1, 2)", "python"), ("object()", "python"),
    ("complex(1, 2)", "python"), ("bin(5)", "python"), ("hex(255)", "python"), ("bytes(2)", "python"),
    ("bytearray(2)", "python"), ("ascii('a')", "python"), ("min(x.shape[0], 2)", "python"),
    ("sum(v for v in [1, 2])", "generator"), ("max(s for s in x.shape)", "generator"),
    ("tuple(v for v in [1, 2])", "generator"), ("sorted(v for v in [2, 1])", "generator"),
    ("'-'.join(str(v) for v in [1, 2])", "generator"), ("any(v > 1 for v in [1, 2])", "generator"),
    ("isinstance(x, (list, tuple))", "tensor"), ("all(isinstance(t, torch.Tensor) for t in [x, y])", "tensor"),
    ("sum(t.sum() for t in [x, y])", "tensor"), ("max([x.sum(), y.sum()])", "tensor"),
]
# (code, args) per standard-library and numpy call.
STDLIB_CALLS = [
    ("random.random()", "none"), ("random.uniform(0, 1)", "python"), ("random.randint(0, 3)", "python"),
    ("random.choice([1, 2])", "python"), ("random.shuffle([1, 2, 3])", "python"), ("random.sample([1, 2, 3], 2)", "python"),
    ("random.gauss(0, 1)", "python"), ("random.seed(0)", "python"), ("random.Random(0).random()", "python"),
    ("random.getrandbits(8)", "python"), ("random.random() < 0.5", "none"),
    ("time.time()", "none"), ("time.perf_counter()", "none"), ("time.monotonic()", "none"), ("time.sleep(0)", "python"),
    ("time.process_time()", "none"), ("time.time_ns()", "none"),
    ("math.sqrt(2.0)", "python"), ("math.sqrt(x.shape[0])", "python"), ("math.sqrt(s)", "tensor"),
    ("math.exp(1.0)", "python"), ("math.exp(s)", "tensor"), ("math.log(2.0)", "python"), ("math.log(s)", "tensor"),
    ("math.pow(2.0, 3)", "python"), ("math.floor(2.5)", "python"), ("math.floor(s)", "tensor"),
    ("math.ceil(x.shape[0] / 3)", "python"), ("math.ceil(s)", "tensor"), ("math.isnan(1.0)", "python"),
    ("math.isnan(s)", "tensor"), ("math.isinf(1.0)", "python"), ("math.prod([2, 3])", "python"),
    ("math.prod(x.shape)", "python"), ("math.gcd(4, 6)", "python"), ("math.cos(1.0)", "python"),
    ("math.sin(s)", "tensor"), ("math.tanh(1.0)", "python"), ("math.erf(1.0)", "python"), ("math.log2(8)", "python"),
    ("math.log10(100)", "python"), ("math.fabs(-1.0)", "python"), ("math.isclose(1.0, 1.0)", "python"),
    ("math.hypot(3, 4)", "python"), ("math.atan2(1, 1)", "python"), ("math.radians(180)", "python"),
    ("math.comb(4, 2)", "python"), ("math.factorial(4)", "python"), ("math.copysign(1, -2)", "python"),
    ("math.fmod(5, 3)", "python"), ("math.trunc(2.5)", "python"), ("math.pi", "none"), ("math.inf", "none"),
    ("x * math.pi", "tensor"), ("math.sqrt(x.shape[-1])", "python"),
    ("copy.copy(x)", "tensor"), ("copy.deepcopy(x)", "tensor"), ("copy.copy([1, 2])", "python"),
    ("copy.deepcopy({'a': [1]})", "python"),
    ("threading.Lock()", "none"), ("threading.local()", "none"), ("threading.get_ident()", "none"),
    ("threading.current_thread()", "none"), ("threading.Event()", "none"),
    ("contextlib.nullcontext()", "none"), ("contextlib.suppress(ValueError)", "python"),
    ("functools.partial(torch.add, x)(y)", "tensor"), ("functools.reduce(torch.add, [x, y])", "tensor"),
    ("functools.reduce(operator.mul, [2, 3])", "python"), ("functools.partial(max, 1)(2)", "python"),
    ("list(itertools.product([1, 2], [3]))", "python"), ("list(itertools.chain([1], [2]))", "python"),
    ("list(itertools.accumulate([1, 2, 3]))", "python"), ("list(itertools.combinations([1, 2, 3], 2))", "python"),
    ("list(itertools.permutations([1, 2]))", "python"), ("list(itertools.islice([1, 2, 3], 2))", "python"),
    ("list(itertools.zip_longest([1], [2, 3]))", "python"), ("list(itertools.repeat(1, 2))", "python"),
    ("next(itertools.count())", "none"), ("list(itertools.pairwise([1, 2, 3]))", "python"),
    ("list(itertools.starmap(pow, [(2, 3)]))", "python"), ("list(itertools.chain(x, y))", "tensor"),
    ("[k for k, _ in itertools.groupby([1, 1, 2])]", "python"),
    ("inspect.signature(lambda a: a)", "python"), ("inspect.isfunction(torch.sin)", "python"),
    ("inspect.isclass(int)", "python"), ("inspect.ismethod(x.sin)", "tensor"), ("inspect.currentframe()", "none"),
    ("inspect.stack()", "none"), ("inspect.getfullargspec(lambda a: a)", "python"),
    ("warnings.warn('w')", "python"), ("logging.info('x')", "python"), ("logging.getLogger('m')", "python"),
    ("logging.getLogger('m').info('x')", "python"), ("logging.getLogger('m').debug('x %s', 1)", "python"),
    ("logging.getLogger('m').isEnabledFor(10)", "python"),
    ("os.getenv('HOME')", "python"), ("os.environ.get('HOME')", "python"), ("os.environ['PATH']", "python"),
    ("os.path.join('a', 'b')", "python"), ("os.path.exists('/')", "python"), ("os.getpid()", "none"),
    ("os.cpu_count()", "none"), ("os.sep", "none"), ("os.path.basename('/a/b')", "python"),
    ("sys.getsizeof(1)", "python"), ("sys.version_info >= (3, 8)", "none"), ("sys.platform", "none"),
    ("sys.maxsize", "none"), ("sys.stdout.write('a')", "python"), ("sys.stderr.write('a')", "python"),
    ("sys.getrecursionlimit()", "none"), ("sys.modules.get('torch')", "python"), ("sys.exc_info()", "none"),
    ("json.dumps({'a': 1})", "python"), ("json.loads('[1]')", "python"), ("json.dumps(x.shape)", "python"),
    ("re.compile('a+')", "python"), ("re.match('a', 'ab')", "python"), ("re.sub('a', 'b', 'aa')", "python"),
    ("re.split(',', 'a,b')", "python"), ("re.findall('a', 'aa')", "python"), ("re.fullmatch('a', 'a') is None", "python"),
    ("collections.OrderedDict(a=x)", "tensor"), ("collections.defaultdict(list)", "python"),
    ("collections.deque([1, 2])", "python"), ("collections.Counter([1, 1])", "python"),
    ("collections.namedtuple('P', 'a b')(x, y)", "tensor"), ("operator.add(x, y)", "tensor"),
    ("operator.itemgetter(0)(x)", "tensor"), ("operator.attrgetter('shape')(x)", "tensor"),
    ("operator.mul(2, 3)", "python"), ("typing.cast(int, 3)", "python"), ("enum.Enum('E', 'A B').A", "python"),
    ("string.ascii_letters", "none"), ("types.SimpleNamespace(a=1)", "python"), ("weakref.ref(x)", "tensor"),
    ("pickle.dumps(3)", "python"), ("struct.pack('i', 1)", "python"), ("io.StringIO('a')", "python"),
    ("numbers.Number", "none"), ("isinstance(3, numbers.Number)", "python"),
    ("bisect.bisect_right([1, 2, 3], 2)", "python"), ("bisect.bisect_left([1, 2, 3], 2)", "python"),
    ("bisect.bisect([1, 2, 3], 2)", "python"), ("bisect.insort([1, 3], 2)", "python"),
    ("heapq.nlargest(2, [3, 1, 2])", "python"), ("heapq.nsmallest(2, [3, 1, 2])", "python"),
    ("heapq.heappush([1, 3], 2)", "python"), ("heapq.heappop([1, 2, 3])", "python"), ("heapq.heapify([3, 1, 2])", "python"),
    ("statistics.mean([1, 2])", "python"), ("statistics.median([1, 2, 3])", "python"),
    ("statistics.stdev([1.0, 2.0, 4.0])", "python"), ("textwrap.dedent(' a')", "python"),
    ("fractions.Fraction(1, 3)", "python"), ("decimal.Decimal('1.5')", "python"),
    ("datetime.timedelta(seconds=1)", "python"), ("string.Template('$a').substitute(a=1)", "python"),
    # Text handling a tokenizer or a feature pipeline does in a model's forward.
    ("unicodedata.normalize('NFKD', 'abc')", "python"), ("unicodedata.combining('a')", "python"),
    ("unicodedata.category('a')", "python"), ("html.unescape('a&amp;b')", "python"),
    ("urllib.parse.quote('a b')", "python"), ("binascii.crc32(b'abc')", "python"),
    ("string.capwords('a b')", "python"), ("shlex.split('a b')", "python"), ("fnmatch.fnmatch('ab', 'a*')", "python"),
    # Given a generator expression: a C function consumes it where TorchDynamo cannot follow
    # (`math.prod(x.shape[i] for i in dims)`); the builtins that step through one are traced.
    ("math.prod(v for v in [2, 3])", "generator"), ("math.prod(s for s in x.shape)", "generator"),
    ("math.fsum(v for v in [1.0, 2.0])", "generator"), ("math.hypot(*(v for v in [3, 4]))", "generator"),
    ("statistics.mean(v for v in [1, 2])", "generator"), ("statistics.fmean(v for v in [1.0, 2.0])", "generator"),
    ("functools.reduce(operator.mul, (v for v in [2, 3]))", "generator"),
    ("list(itertools.chain(v for v in [1, 2]))", "generator"),
]
NUMPY_CALLS = [
    ("np.array([1, 2])", "python"), ("np.zeros(3)", "python"), ("np.ones((2, 2))", "python"), ("np.arange(4)", "python"),
    ("np.sqrt(2.0)", "python"), ("np.sqrt(x.shape[0])", "python"), ("np.sqrt(x.numpy())", "tensor"),
    ("np.float32(1.0)", "python"), ("np.random.rand(3)", "python"), ("np.random.randn(2)", "python"),
    ("np.random.randint(0, 5)", "python"), ("np.random.uniform()", "none"), ("np.random.choice(4)", "python"),
    ("np.random.seed(0)", "python"), ("np.random.default_rng(0).random()", "python"),
    ("np.random.permutation(4)", "python"), ("np.random.normal(0, 1, 3)", "python"),
    # given `size=`, a draw is an array, not a number
    ("np.random.randint(0, 5, size=3)", "python"), ("np.random.uniform(0, 1, size=3)", "python"),
    ("np.random.normal(0, 1, size=3)", "python"), ("np.random.choice(4, size=2)", "python"),
    ("np.random.random(size=3)", "python"),
    # Without a size a NumPy sampler returns one Python number (read out of the tensor it traces to).
    ("np.random.rand()", "none"), ("np.random.randn()", "none"), ("np.random.random()", "none"),
    ("np.random.normal()", "none"), ("np.random.standard_normal()", "none"),
    ("np.exp(1.0)", "python"), ("np.log(2.0)", "python"), ("np.mean(x.numpy())", "tensor"),
    ("np.sum([1, 2])", "python"), ("np.max(x.numpy())", "tensor"), ("np.argmax(x.numpy())", "tensor"),
    ("np.concatenate([x.numpy(), y.numpy()])", "tensor"), ("np.stack([x.numpy(), y.numpy()])", "tensor"),
    ("np.linspace(0, 1, 5)", "python"), ("np.pi", "none"), ("np.prod([2, 3])", "python"),
    ("np.prod(x.shape)", "python"), ("np.clip(x.numpy(), 0, 1)", "tensor"), ("np.where(x.numpy() > 0.5)", "tensor"),
    ("np.asarray(x)", "tensor"), ("np.einsum('ij,jk->ik', x.numpy(), y.numpy())", "tensor"),
    ("np.matmul(x.numpy(), y.numpy())", "tensor"), ("np.reshape(x.numpy(), -1)", "tensor"),
    ("np.cumsum([1, 2])", "python"), ("np.abs(-1.0)", "python"), ("np.isnan(1.0)", "python"),
    ("np.floor(2.5)", "python"), ("np.log2(8)", "python"), ("np.ceil(x.shape[0] / 3)", "python"),
    ("int(np.ceil(x.shape[0] / 3))", "python"), ("torch.from_numpy(np.arange(4))", "python"),
    ("torch.tensor(np.arange(4))", "python"), ("np.float32", "none"),
    ("torch.as_tensor(np.sqrt(x.shape[0]))", "python"), ("np.array(x.shape)", "python"),
    ("int(np.sqrt(x.shape[0]))", "python"), ("float(np.floor(x.shape[0] / 3))", "python"),
    ("int(np.prod(x.shape))", "python"), ("int(np.abs(-3))", "python"), ("float(np.mean([1.0, 2.0]))", "python"),
    ("int(np.maximum(x.shape[0] / 3, 1.0))", "python"),
]


_MODULE_CALL = re.compile(r"(?<![.\w])(?:torch|" + "|".join(IMPORTS) + r")\.[\w.]+")
_LOGGER_METHOD = re.compile(r"getLogger\([^)]*\)\.(\w+)")


def _module_key(code: str) -> str:
    """The first module-qualified name in CODE: `list(itertools.chain(...))` -> `itertools.chain`,
    `x * math.pi` -> `math.pi`; numpy as `numpy.`, a logger's method as `logging.Logger.info`."""
    logger = _LOGGER_METHOD.search(code)
    if logger:
        return f"logging.Logger.{logger.group(1)}"
    name = _MODULE_CALL.findall(code)[0]
    return "numpy." + name[3:] if name.startswith("np.") else name


# Third-party packages model code calls that TorchDynamo does not skip, so it traces into their
# Python code: SciPy's functions on arrays and on Python numbers, across its modules.
THIRDPARTY_CALLS = [
    ("scipy.special.gammaln(2.0)", "python"), ("scipy.special.i0e(x.numpy())", "tensor"),
    ("scipy.ndimage.label(x.numpy() > 0.5)", "tensor"), ("scipy.ndimage.gaussian_filter(x.numpy(), 1.0)", "tensor"),
    ("scipy.signal.get_window('hann', 4)", "python"), ("scipy.stats.norm.ppf(0.9)", "python"),
    ("scipy.linalg.expm(x.numpy())", "tensor"),
]


# Argument forms tried for a NumPy array method, in order.
NDARRAY_FORMS = ("", "0", "1, 0")


def ndarray_method_calls() -> list[tuple[str, str]]:
    """The methods of a NumPy array that a tensor does not have (`a.tobytes()`, `a.fill(0)`), each
    called on `x.numpy()` with the first argument form that runs eagerly: (key, code). A method a
    tensor has too is probed as the tensor's."""
    import numpy as np
    import torch

    found = []
    for name in sorted(set(dir(np.ndarray)) - set(dir(torch.Tensor))):
        if name.startswith("_") or name in NDARRAY_SKIPS or not callable(getattr(np.ndarray, name)):
            continue
        code = next((c for form in NDARRAY_FORMS if _try(c := f"x.numpy().{name}({form})")[0]), None)
        if code is not None:
            found.append((f"numpy.ndarray.{name}", code))
    return found


# Array methods not probed, and why.
NDARRAY_SKIPS = {"tofile": "writes a file", "dump": "writes a file", "setflags": "changes the array's flags in place",
                 "resize": "reallocates the array in place"}


# Argument forms tried for a library object's method, in order.
LIBRARY_METHOD_FORMS = ("", "4", "0, 4", "[1, 2, 3]", "1.0", "0.0, 1.0", "2.0, 3.0", "4, 0.5", "[1.0, 2.0]", "'step'",
                        "b'step'", "[[1, 2], [3, 4]]")
# Library object methods not probed, and why.
LIBRARY_METHOD_SKIPS = {"setstate": "replaces the generator's state", "set_state": "replaces the generator's state",
                        "seed": "reseeds the generator", "spawn": "makes other generators",
                        "join": "waits for another thread", "acquire": "waits for the lock (see the lock's other probes)"}


def library_method_calls() -> list[tuple[str, str, str]]:
    """The public methods of the library objects a model keeps (`LIBRARY_OBJECTS`), each called on
    an object built outside the compiled code with the first argument form that runs eagerly:
    (key, the code building the object, the call)."""
    found = []
    for receiver, (cls, setup) in LIBRARY_OBJECTS.items():
        built: dict[str, Any] = {}
        exec(setup, built)  # noqa: S102 - our own setup code
        for name in sorted(dir(built[receiver])):
            if name.startswith("_") or name in LIBRARY_METHOD_SKIPS or not callable(getattr(built[receiver], name)):
                continue
            code = next((c for form in LIBRARY_METHOD_FORMS if _runs(setup, c := f"{receiver}.{name}({form})")), None)
            if code is not None:
                found.append((f"{cls}.{name}", setup, code))
    return found


def _runs(setup: str, code: str) -> bool:
    """Does CODE run eagerly on what a fresh run of SETUP builds?"""
    namespace: dict[str, Any] = {}
    try:
        with _quiet():
            exec(setup, namespace)  # noqa: S102 - our own setup code
            eval(code, namespace)  # noqa: S307 - our own probe
    except Exception:  # noqa: BLE001 - any failure means "not this form"
        return False
    return True


def python_probes(catalogue: Catalogue) -> None:
    for code, args in BUILTIN_CALLS:
        catalogue.probes.append(expression_probe(f"builtins.{_key_of(code)}", "builtin", code, args=args))
    for key, code in ndarray_method_calls():
        catalogue.probes.append(expression_probe(key, "numpy", code, args="tensor"))
    for name, (cls, setup) in HELD_ITERATORS.items():
        category = "builtin" if cls.startswith("builtins.") else "stdlib"
        catalogue.probes.append(held_object_probe(f"{cls}.__next__", category, setup, f"next({name})"))
        catalogue.probes.append(held_object_probe(f"{cls}.__iter__", category, setup, f"for item in {name}: break",
                                                  statement=True))
    catalogue.probes.append(held_object_probe("builtins.generator.send", "builtin", HELD_ITERATORS["it_generator"][1],
                                              "it_generator.send(None)"))
    for key, setup, code in library_method_calls():
        catalogue.probes.append(held_object_probe(key, "numpy" if key.startswith("numpy.") else "stdlib", setup, code))
    for category, calls in (("stdlib", STDLIB_CALLS), ("numpy", NUMPY_CALLS), ("thirdparty", THIRDPARTY_CALLS)):
        for code, args in calls:
            catalogue.probes.append(expression_probe(_module_key(code), category, code, args=args))


# Language constructs: (name, summary, program). The compiled function is always `probe`.
CONSTRUCTS: list[tuple[str, str, str]] = [
    ("class-in-compiled", "a class defined inside the compiled function", """
@torch.compile(backend="eager")
def probe(x):
    class Local:
        scale = 2.0
    return x * Local.scale
"""),
    ("user-class-instance", "instantiating a user class and calling its method", """
class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, t):
        return t * self.factor


@torch.compile(backend="eager")
def probe(x):
    return Scaler(2.0)(x)
"""),
    ("dataclass-instance", "a dataclass built and read in compiled code", """
@dataclasses.dataclass
class Pair:
    a: torch.Tensor
    b: float


@torch.compile(backend="eager")
def probe(x):
    pair = Pair(x, 2.0)
    return pair.a * pair.b
"""),
    ("namedtuple-instance", "a namedtuple built and unpacked", """
Point = collections.namedtuple("Point", "a b")


@torch.compile(backend="eager")
def probe(x):
    a, b = Point(x, x + 1)
    return a + b
"""),
    ("user-context-manager", "a user class with __enter__/__exit__", """
class Scope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@torch.compile(backend="eager")
def probe(x):
    with Scope():
        return x + 1
"""),
    ("contextmanager-generator", "a @contextlib.contextmanager context", """
@contextlib.contextmanager
def scope():
    yield


@torch.compile(backend="eager")
def probe(x):
    with scope():
        return x + 1
"""),
    ("no-grad", "with torch.no_grad()", """
@torch.compile(backend="eager")
def probe(x):
    with torch.no_grad():
        return x + 1
"""),
    ("enable-grad", "with torch.enable_grad()", """
@torch.compile(backend="eager")
def probe(x):
    with torch.enable_grad():
        return x + 1
"""),
    ("inference-mode", "with torch.inference_mode()", """
@torch.compile(backend="eager")
def probe(x):
    with torch.inference_mode():
        return x + 1
"""),
    ("autocast", "with torch.autocast('cpu')", """
@torch.compile(backend="eager")
def probe(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return x @ x
"""),
    ("set-grad-enabled", "with torch.set_grad_enabled(False)", """
@torch.compile(backend="eager")
def probe(x):
    with torch.set_grad_enabled(False):
        return x + 1
"""),
    ("torch-device-context", "with torch.device('cpu')", """
@torch.compile(backend="eager")
def probe(x):
    with torch.device("cpu"):
        return x + torch.ones(4, 4)
"""),
    ("nullcontext", "with contextlib.nullcontext()", """
@torch.compile(backend="eager")
def probe(x):
    with contextlib.nullcontext():
        return x + 1
"""),
    ("suppress", "with contextlib.suppress(...)", """
@torch.compile(backend="eager")
def probe(x):
    with contextlib.suppress(KeyError):
        return x + 1
"""),
    ("exitstack", "with contextlib.ExitStack()", """
@torch.compile(backend="eager")
def probe(x):
    with contextlib.ExitStack():
        return x + 1
"""),
    ("lock-context", "with threading.Lock()", """
LOCK = threading.Lock()


@torch.compile(backend="eager")
def probe(x):
    with LOCK:
        return x + 1
"""),
    ("profiler-record-function", "with torch.profiler.record_function(...)", """
@torch.compile(backend="eager")
def probe(x):
    with torch.profiler.record_function("step"):
        return x + 1
"""),
    ("list-comprehension", "a list comprehension over tensors", """
@torch.compile(backend="eager")
def probe(x):
    return torch.stack([row * 2 for row in x.unbind(0)])
"""),
    ("comprehension-scope-closure", "a comprehension reading an enclosing name", """
@torch.compile(backend="eager")
def probe(x):
    scale = 2.0
    return sum([t * scale for t in (x, x)])
"""),
    ("dict-comprehension", "a dict comprehension", """
@torch.compile(backend="eager")
def probe(x):
    parts = {name: x * i for i, name in enumerate(["a", "b"])}
    return parts["a"] + parts["b"]
"""),
    ("generator-expression-sum", "a generator expression consumed by sum", """
@torch.compile(backend="eager")
def probe(x):
    return sum(x * i for i in range(3))
"""),
    ("generator-expression-list", "a generator expression consumed by list/tuple", """
@torch.compile(backend="eager")
def probe(x):
    return torch.cat(tuple(x * i for i in range(3)))
"""),
    ("generator-function", "a generator function (yield) consumed in compiled code", """
def halves(t):
    yield t / 2
    yield t / 4


@torch.compile(backend="eager")
def probe(x):
    return sum(halves(x))
"""),
    ("generator-returned", "a compiled function that returns a generator", """
@torch.compile(backend="eager")
def probe(x):
    return (x * i for i in range(2))
"""),
    ("yield-in-compiled", "yield inside the compiled function itself", """
def gen(x):
    yield x + 1


@torch.compile(backend="eager")
def probe(x):
    return next(gen(x))
"""),
    ("super-call", "super().__init__ and super().forward in a module", """
class Base(torch.nn.Module):
    def forward(self, t):
        return t + 1


class Child(Base):
    def forward(self, t):
        return super().forward(t) * 2


CHILD = Child()


@torch.compile(backend="eager")
def probe(x):
    return CHILD(x)
"""),
    ("module-built-in-compiled", "an nn.Module built inside compiled code", """
class Twice(torch.nn.Module):
    def forward(self, t):
        return t * 2


@torch.compile(backend="eager")
def probe(x):
    return Twice()(x)
"""),
    ("closure", "a closure over a tensor", """
@torch.compile(backend="eager")
def probe(x):
    def add(t):
        return t + x
    return add(x)
"""),
    ("nonlocal", "a closure that assigns with nonlocal", """
@torch.compile(backend="eager")
def probe(x):
    total = x

    def bump():
        nonlocal total
        total = total + 1
    bump()
    return total
"""),
    ("lambda", "a lambda called in compiled code", """
@torch.compile(backend="eager")
def probe(x):
    double = lambda t: t * 2  # noqa: E731
    return double(x)
"""),
    ("try-except", "try/except around tensor code", """
@torch.compile(backend="eager")
def probe(x):
    try:
        return x + 1
    except RuntimeError:
        return x
"""),
    ("raise-caught", "an exception raised and caught in compiled code", """
@torch.compile(backend="eager")
def probe(x):
    try:
        raise ValueError("no")
    except ValueError:
        return x + 1
"""),
    ("raise-uncaught-branch", "raise on a Python condition that is false", """
@torch.compile(backend="eager")
def probe(x):
    if x.dim() != 2:
        raise ValueError("want 2-d")
    return x + 1
"""),
    ("assert-tensor", "assert on a tensor condition", """
@torch.compile(backend="eager")
def probe(x):
    assert (x >= 0).all()
    return x + 1
"""),
    ("assert-shape", "assert on a shape", """
@torch.compile(backend="eager")
def probe(x):
    assert x.shape[0] == 4, "want 4 rows"
    return x + 1
"""),
    ("assert-tensor-message", "assert on a tensor with an f-string message", """
@torch.compile(backend="eager")
def probe(x):
    assert x.sum() > 0, f"bad sum {x.sum()}"
    return x + 1
"""),
    ("fstring-tensor", "an f-string of a tensor", """
@torch.compile(backend="eager")
def probe(x):
    label = f"value {x}"
    return x, label
"""),
    ("fstring-shape", "an f-string of a shape", """
@torch.compile(backend="eager")
def probe(x):
    label = f"shape {x.shape}"
    return x, label
"""),
    ("walrus", "an assignment expression", """
@torch.compile(backend="eager")
def probe(x):
    if (n := x.shape[0]) > 2:
        return x * n
    return x
"""),
    ("star-unpack-tensor", "star-unpacking a tensor", """
@torch.compile(backend="eager")
def probe(x):
    first, *rest = x
    return first + rest[0]
"""),
    ("unpack-shape", "unpacking a shape", """
@torch.compile(backend="eager")
def probe(x):
    rows, cols = x.shape
    return x.reshape(rows * cols)
"""),
    ("iterate-tensor", "a for loop over a tensor", """
@torch.compile(backend="eager")
def probe(x):
    total = 0
    for row in x:
        total = total + row
    return total
"""),
    ("iterate-range-shape", "a for loop over range(x.shape[0])", """
@torch.compile(backend="eager")
def probe(x):
    total = 0
    for i in range(x.shape[0]):
        total = total + x[i]
    return total
"""),
    ("in-tensor", "`in` on a tensor", """
@torch.compile(backend="eager")
def probe(x):
    return 0.5 in x
"""),
    ("in-list-of-tensors", "`in` on a list of tensors", """
@torch.compile(backend="eager")
def probe(x):
    return x in [x, x + 1]
"""),
    ("dict-mutation", "mutating a dict of tensors", """
@torch.compile(backend="eager")
def probe(x):
    cache = {}
    cache["a"] = x + 1
    cache.update(b=x * 2)
    return cache["a"] + cache.pop("b")
"""),
    ("list-mutation", "mutating a list of tensors", """
@torch.compile(backend="eager")
def probe(x):
    parts = []
    parts.append(x)
    parts.extend([x + 1])
    parts.insert(0, x * 2)
    return torch.stack(parts)
"""),
    ("input-list-mutation", "appending to a list passed in", """
SEEN = []


@torch.compile(backend="eager")
def probe(x):
    SEEN.append(x.sum())
    return x + 1
"""),
    ("global-mutation", "assigning a module global", """
COUNT = 0


@torch.compile(backend="eager")
def probe(x):
    global COUNT
    COUNT += 1
    return x + COUNT
"""),
    ("attribute-mutation", "setting an attribute on a module", """
class Holder(torch.nn.Module):
    def forward(self, t):
        self.last = t.sum()
        return t + 1


HOLDER = Holder()


@torch.compile(backend="eager")
def probe(x):
    return HOLDER(x)
"""),
    ("tensor-if", "if on a tensor value", """
@torch.compile(backend="eager")
def probe(x):
    if x.sum() > 4:
        return x + 1
    return x - 1
"""),
    ("tensor-while", "while on a tensor value", """
@torch.compile(backend="eager")
def probe(x):
    while x.sum() < 100:
        x = x * 2
    return x
"""),
    ("optional-none-check", "if t is None", """
@torch.compile(backend="eager")
def probe(x, mask=None):
    if mask is None:
        return x + 1
    return x * mask
"""),
    ("recursion", "a recursive helper with a Python depth", """
def depth(t, n):
    return t if n == 0 else depth(t + 1, n - 1)


@torch.compile(backend="eager")
def probe(x):
    return depth(x, 3)
"""),
    ("property-access", "a property on a user object", """
class Box:
    def __init__(self, t):
        self._t = t

    @property
    def t(self):
        return self._t * 2


@torch.compile(backend="eager")
def probe(x):
    return Box(x).t
"""),
    ("staticmethod-classmethod", "static and class methods", """
class Ops:
    scale = 3.0

    @staticmethod
    def twice(t):
        return t * 2

    @classmethod
    def scaled(cls, t):
        return t * cls.scale


@torch.compile(backend="eager")
def probe(x):
    return Ops.twice(x) + Ops.scaled(x)
"""),
    ("lru-cache-helper", "calling a functools.lru_cache helper", """
@functools.lru_cache
def sizes(n):
    return (n, n * 2)


@torch.compile(backend="eager")
def probe(x):
    a, b = sizes(x.shape[0])
    return x.new_zeros(a, b)
"""),
    ("wraps-decorator", "a decorator written with functools.wraps", """
def logged(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner


@logged
def double(t):
    return t * 2


@torch.compile(backend="eager")
def probe(x):
    return double(x)
"""),
    ("kwargs-splat", "calling with *args and **kwargs", """
def combine(*parts, scale=1.0):
    return sum(parts) * scale


@torch.compile(backend="eager")
def probe(x):
    args = (x, x)
    options = {"scale": 2.0}
    return combine(*args, **options)
"""),
    ("isinstance-dispatch", "isinstance on the argument", """
@torch.compile(backend="eager")
def probe(x):
    if isinstance(x, (list, tuple)):
        return torch.stack(x)
    return x + 1
"""),
    ("string-ops", "string formatting and methods on config values", """
@torch.compile(backend="eager")
def probe(x):
    name = "layer_1".split("_")
    if name[0].startswith("lay"):
        return x + len(name)
    return x
"""),
    ("match-statement", "match on a Python value", """
@torch.compile(backend="eager")
def probe(x):
    match x.dim():
        case 2:
            return x + 1
        case _:
            return x
"""),
    ("enum-compare", "comparing Enum members", """
class Mode(enum.Enum):
    A = 1
    B = 2


MODE = Mode.A


@torch.compile(backend="eager")
def probe(x):
    return x + 1 if MODE is Mode.A else x
"""),
    ("hook-registration", "register_forward_hook inside compiled code", """
LAYER = torch.nn.Linear(4, 4)


@torch.compile(backend="eager")
def probe(x):
    LAYER.register_forward_hook(lambda *a: None)
    return LAYER(x)
"""),
    ("backward-call", "loss.backward() in compiled code", """
@torch.compile(backend="eager")
def probe(w):
    loss = (w * 2).sum()
    loss.backward()
    return w.grad
"""),
    ("register-hook", "tensor.register_hook in compiled code", """
@torch.compile(backend="eager")
def probe(w):
    t = w * 2
    t.register_hook(lambda g: g * 2)
    return t
"""),
    ("retain-grad", "tensor.retain_grad in compiled code", """
@torch.compile(backend="eager")
def probe(w):
    t = w * 2
    t.retain_grad()
    return t
"""),
    ("explicit-graph-break", "torch._dynamo.graph_break()", """
@torch.compile(backend="eager")
def probe(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2
"""),
    ("disabled-helper", "calling a @torch.compiler.disable helper", """
@torch.compiler.disable
def helper(t):
    return t + 1


@torch.compile(backend="eager")
def probe(x):
    return helper(x) * 2
"""),
    ("async-def-called", "calling an async function (coroutine)", """
async def later(t):
    return t + 1


@torch.compile(backend="eager")
def probe(x):
    coroutine = later(x)
    coroutine.close()
    return x
"""),
    ("del-statement", "del of a local", """
@torch.compile(backend="eager")
def probe(x):
    y = x + 1
    del y
    return x
"""),
    ("getattr-dynamic", "getattr with a computed string", """
@torch.compile(backend="eager")
def probe(x):
    name = "s" + "in"
    return getattr(torch, name)(x)
"""),
    ("slice-object", "indexing with a slice object", """
@torch.compile(backend="eager")
def probe(x):
    window = slice(1, 3)
    return x[window]
"""),
]
# Data-dependent probes, again under the settings that capture them.
VARIANTS = {
    "capture_scalar_outputs = True": [
        "s.item()", "x.tolist()", "int(s)", "float(s)", "bool(s)", "torch.zeros(k[0, 0])",
        "torch.arange(k[0, 0])", "x[: k[0, 0]]", "list(range(k[0, 0] + 1))",
        "torch.repeat_interleave(v, k[0])", "math.sqrt(s)", "format(s, '.2f')",
    ],
    "capture_dynamic_output_shape_ops = True": [
        "torch.nonzero(x)", "x.nonzero()", "torch.unique(k)", "x[m]", "torch.masked_select(x, m)",
        "torch.bincount(k.flatten())", "torch.repeat_interleave(k.flatten())", "torch.where(m)", "torch.argwhere(x)",
        "F.one_hot(k)", "x[x > 0.5]",
    ],
    "trace_numpy = False": [
        "x.numpy()", "np.sqrt(x.numpy())", "np.mean(x.numpy())", "np.asarray(x)", "np.sqrt(x.shape[0])",
        "torch.from_numpy(np.arange(4))", "np.array(x.shape)",
    ],
}


def construct_probes(catalogue: Catalogue) -> None:
    for name, summary, program in CONSTRUCTS:
        catalogue.probes.append(program_probe(f"construct:{name}", "construct", summary, program))
    by_call = {p.call: p for p in reversed(catalogue.probes)}  # the first probe of each call
    for config, codes in VARIANTS.items():
        for code in codes:
            same = by_call[code]  # every variant re-probes a default probe
            catalogue.probes.append(expression_probe(same.key, same.category, code, args=same.args, config=config))


def build() -> Catalogue:
    catalogue = Catalogue()
    for add in (tensor_probes, operator_probes, function_probes, python_probes, construct_probes):
        add(catalogue)
    return catalogue


# --- the data file ------------------------------------------------------------------------------


def numpy_without_torch_equivalent() -> list[str]:
    """The public NumPy functions TorchDynamo wraps as NumPy calls (`_numpy_function_ids`) that
    `torch._numpy` has no function for: a call of one breaks whatever it is given (GB0294)."""
    from torch._dynamo.trace_rules import _numpy_function_ids
    from torch._dynamo.utils import NP_SUPPORTED_MODULES
    from torch._dynamo.variables.misc import get_np_to_tnp_map

    wrapped, traced = _numpy_function_ids(), get_np_to_tnp_map()
    return sorted(f"{module.__name__}.{name}" for module in NP_SUPPORTED_MODULES
                  for name, member in vars(module).items()
                  if not name.startswith("_") and id(member) in wrapped and member not in traced)


def _version_of(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def document(catalogue: Catalogue, entries: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    import numpy
    import torch

    return {
        "format": FORMAT,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": _version_of("scipy"),
        "generated_by": "python bench/catalogue.py --write",
        "probe_seconds": round(seconds),
        "numpy_without_torch_equivalent": numpy_without_torch_equivalent(),
        "entries": entries,
        "not_probed": [{"category": category, "key": key, "reason": reason}
                       for (category, key), reason in sorted(catalogue.not_probed.items())],
    }


def dump(data: dict[str, Any]) -> str:
    """JSON with one entry per line, so that a regeneration diffs line by line."""
    head = {k: v for k, v in data.items() if k not in ("entries", "not_probed")}
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    for name in ("entries", "not_probed"):
        rows = [f"    {json.dumps(row, sort_keys=True)}" for row in data[name]]
        lines.append(f'  "{name}": [\n' + ",\n".join(rows) + "\n  ]" + ("," if name == "entries" else ""))
    return "\n".join(lines) + "\n}\n"


def _identity(entry: dict[str, Any]) -> tuple[str, str, str]:
    return entry["key"], entry["call"], entry["config"]


OUTCOME = ("breaks", "gb_ids", "result", "items", "status")


def diff(stored: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    old = {_identity(e): e for e in stored["entries"]}
    new = {_identity(e): e for e in fresh["entries"]}
    changes = [f"only stored: {k[1]} [{k[2]}]" for k in old.keys() - new.keys()]
    changes += [f"only probed now: {k[1]} [{k[2]}]" for k in new.keys() - old.keys()]
    for identity in old.keys() & new.keys():
        before = {f: old[identity].get(f) for f in OUTCOME}
        after = {f: new[identity].get(f) for f in OUTCOME}
        if before != after:
            changed = {f: (before[f], after[f]) for f in OUTCOME if before[f] != after[f]}
            changes.append(f"{identity[1]} [{identity[2]}]: {changed}")
    if stored.get("torch") != fresh.get("torch"):
        changes.insert(0, f"torch {stored.get('torch')} -> {fresh.get('torch')}")
    return sorted(changes)


# --- which breaking probes no rule flags ----------------------------------------------------------


def lint_lines(entries: list[dict[str, Any]]) -> list[dict[int, set[str]]]:
    """For each entry, the lines of its source where breakscan's lint reports a break, with the rule ids."""
    from breakscan.config import Config
    from breakscan.lint.linter import lint_paths

    with tempfile.TemporaryDirectory(prefix="breakscan-catalogue-lint-") as folder:
        paths = []
        for index, entry in enumerate(entries):
            path = os.path.join(folder, f"probe_{index:05d}.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(entry["source"])
            paths.append(path)
        outcome = lint_paths(paths, Config(), jobs=1)
        by_file: dict[str, dict[int, set[str]]] = {}
        # A probe makes one call: a recompile rule's prediction is about the calls after it.
        for finding in (f for f in outcome.findings if not f.rule.startswith("BR")):
            lines = by_file.setdefault(os.path.basename(finding.path), {})
            lines.setdefault(finding.line, set()).add(finding.rule)
        return [by_file.get(os.path.basename(path), {}) for path in paths]


def coverage(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], set[str]]]]:
    """(breaking probes with no finding on a break line, probes flagged that do not break)."""
    uncovered, false_alarms = [], []
    for entry, findings in zip(entries, lint_lines(entries)):
        first, last = entry["lines"]
        own_findings = {rule for line, rules in findings.items() if first <= line <= last for rule in rules}
        break_lines = {line for line, _ in entry["break_sites"] if first <= line <= last}
        if entry["breaks"] and not any(line in findings for line in break_lines):
            uncovered.append(entry)
        elif not entry["breaks"] and entry["status"] == "ok" and own_findings:
            false_alarms.append((entry, own_findings))
    return uncovered, false_alarms


def print_coverage(entries: list[dict[str, Any]], examples: int) -> None:
    uncovered, false_alarms = coverage(entries)
    breaking = [e for e in entries if e["breaks"]]
    print(f"{len(breaking)} of {len(entries)} probes break; {len(uncovered)} of them are flagged by no rule.")
    _by_category("breaking, flagged by no rule", uncovered, examples, lambda e: "")
    print(f"\n{len(false_alarms)} probes do not break but a rule flags them (false alarms on the catalogue):")
    rules = {id(e): r for e, r in false_alarms}
    _by_category("flagged, not breaking", [e for e, _ in false_alarms], examples,
                 lambda e: " <- " + ", ".join(sorted(rules[id(e)])))


def _by_category(title: str, entries: list[dict[str, Any]], examples: int, extra: Callable[[dict], str]) -> None:
    categories: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        categories.setdefault(entry["category"], []).append(entry)
    for category, items in sorted(categories.items(), key=lambda kv: -len(kv[1])):
        print(f"\n  {category}: {len(items)} {title}")
        for entry in items[:examples]:
            config = "" if entry["config"] == DEFAULT else f"  [{entry['config']}]"
            gb = ",".join(entry["gb_ids"])
            print(f"    {entry['call'].splitlines()[0][:70]:72} {gb}{config}{extra(entry)}")
        if len(items) > examples:
            print(f"    ... and {len(items) - examples} more")


# --- command line -------------------------------------------------------------------------------


def probe_all(only: str | None = None) -> dict[str, Any]:
    """Build the probes, run them, and return the catalogue as the data file holds it."""
    started = time.monotonic()
    print("building probes (trying argument forms eagerly)...", file=sys.stderr)
    catalogue = build()
    if only:
        catalogue.probes = [p for p in catalogue.probes if p.key.startswith(only)]
    print(f"{len(catalogue.probes)} probes, {len(catalogue.not_probed)} not probed; running them under TorchDynamo...",
          file=sys.stderr)
    entries = run_probes(catalogue.probes, progress=lambda m: print(m, file=sys.stderr))
    seconds = time.monotonic() - started
    print(f"done in {seconds:.0f} s", file=sys.stderr)
    return document(catalogue, entries, seconds)


def summary(data: dict[str, Any]) -> str:
    entries = data["entries"]
    breaking = sum(e["breaks"] for e in entries)
    failed = sum(e["status"] != "ok" for e in entries)
    return (f"torch {data['torch']}: {len(entries)} probes, {breaking} break, {failed} failed to run, "
            f"{len(data['not_probed'])} not probed")


def load_stored() -> dict[str, Any]:
    with open(DATA_PATH, encoding="utf-8") as handle:
        return json.load(handle)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"probe and write {os.path.relpath(DATA_PATH, ROOT)}")
    action.add_argument("--check", action="store_true", help="probe and diff against the stored file")
    action.add_argument("--uncovered", action="store_true", help="breaking probes no rule flags (stored file)")
    parser.add_argument("--only", help="probe only the keys starting with this (with --check)")
    parser.add_argument("--examples", type=int, default=12, help="examples per category with --uncovered")
    options = parser.parse_args(list(argv) if argv is not None else None)
    if options.uncovered:
        print_coverage(load_stored()["entries"], options.examples)
        return 0
    fresh = probe_all(options.only)
    print(summary(fresh))
    failed = [e for e in fresh["entries"] if e["status"] != "ok"]
    if len(failed) > len(fresh["entries"]) // 2:  # the runner itself is broken: nothing here is evidence
        print(f"most probes failed to run; the first: {failed[0].get('error')}", file=sys.stderr)
        return 2
    if options.write:
        os.makedirs(os.path.dirname(DATA_PATH), exist_ok=True)
        with open(DATA_PATH, "w", encoding="utf-8") as handle:
            handle.write(dump(fresh))
        print(f"wrote {os.path.relpath(DATA_PATH, ROOT)}")
        return 0
    stored = load_stored()
    if options.only:
        stored = {**stored, "entries": [e for e in stored["entries"] if e["key"].startswith(options.only)]}
    changes = diff(stored, fresh)
    for change in changes:
        print(change)
    print(f"{len(changes)} differences from the stored catalogue")
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
