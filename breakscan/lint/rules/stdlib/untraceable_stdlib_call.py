import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.untraceable import (
    generator_break,
    object_method_break,
    on_skip_list,
    probed_break,
    untraceable_gb_id,
    untraceable_package,
)


class UntraceableStdlibCall(Rule):
    id = "BS505"
    name = "untraceable-stdlib-call"
    gb_ids = ("GB0007", "GB0156", "GB0008", "GB0147", "GB0059", "GB0033", "GB0294", "GB0055", "GB0134", "GB8335", "GB0158",
              "GB0142")
    message = "this call (standard library, NumPy, a builtin, or a library on TorchDynamo's skip list) cannot be traced: the graph breaks here"
    fix_hint = "move the call out of the compiled code (compute it once outside, pass the result in)"
    docs = """
    ## What it does
    Flags standard-library calls that TorchDynamo 2.13 cannot trace, and calls into third-party
    packages on its skip list, from a table verified against it:

    | calls | GB id |
    |---|---|
    | `gc.*`, `zlib.*`, `hashlib.*`, `pickle.*`, `base64.*` | GB0007 |
    | `uuid.uuid1/uuid4`, `os.getpid/urandom/getcwd/listdir/cpu_count`, `os.path.exists/isfile/isdir`, `socket.gethostname` | GB0007 |
    | `inspect.stack/currentframe/getframeinfo/getsource/getsourcelines/getfile`, `sys._getframe/getsizeof/getrefcount`, `traceback.*_stack` | GB0007 |
    | `importlib.import_module`, `__import__` | GB0007 |
    | `threading.Lock/Event/Semaphore/current_thread/get_ident/get_native_id` | GB0007 |
    | `threading.RLock/Condition` | GB0156 |
    | `warnings.simplefilter/filterwarnings` | GB0007 |
    | `datetime.datetime.now/utcnow/today/fromtimestamp`, `datetime.date.today` | GB0156 |
    | `json.dumps/loads`, `io.StringIO/BytesIO` | GB0156 |
    | `secrets.*` | GB0008 |
    | `tqdm.*` (`tqdm`, `trange`, `tqdm.auto.*`), and every package on the installed torch's third-party skip list (`THIRDPARTY_SKIPLIST`: `pandas`, `sklearn`, `networkx`...; NumPy aside) | GB0007 |
    | NumPy outside `numpy`, `numpy.fft`, `numpy.linalg`, `numpy.random` (`np.polynomial.*`, `np.lib.*`, `np.ma.*`) | GB0007 |
    | `np.random.SeedSequence/Generator/RandomState/PCG64...`, `np.recarray` (defined outside those modules) | GB0156 |
    | NumPy functions `torch._numpy` has no counterpart for (`np.interp`, `np.nanmean`, `np.isin`, `np.digitize`, `np.random.beta`...; the list is read from the installed torch into the catalogue) | GB0294 |
    | a NumPy call given `dtype=object`, `str`, `bytes` or `complex` (an array of Python objects: no tensor holds one) | GB0055 |
    | `math.prod`, `math.fsum`, `statistics.mean`... given a generator expression (C code consumes it; the catalogue's `generator` probes) | GB0055, GB0134, GB8335 |
    | a NumPy array's method that a tensor does not have and `torch._numpy` does not model (`a.tobytes()`; the catalogue's `numpy.ndarray.*` probes) | GB0158 |
    | a method of a NumPy random generator built outside the compiled code (`self.rng = np.random.default_rng(seed)` or `np.random.RandomState(seed)` in `__init__`, then `self.rng.choice(...)`; the catalogue's `numpy.random.Generator.*` and `numpy.random.RandomState.*` probes: every one breaks), or of a `queue.Queue`, a `threading.Lock`, a `csv.writer`, an `io.StringIO`/`BytesIO` or a file from `open` the model keeps (`self.pending.put_nowait(...)`, `self.log.writerow(...)`) | GB0156, GB0142 |

    A SciPy call, whatever it is given: TorchDynamo does not skip SciPy, traces into its Python
    code (array-API dispatch, wrappers of compiled ufuncs) and breaks there; every SciPy call the
    catalogue probes breaks (`scipy.special`, `ndimage`, `signal`, `stats`, `linalg`).

    And every standard-library, NumPy or builtin call that the catalogue of probes
    (`python bench/catalogue.py`, stored in `breakscan/lint/data/catalogue.json`) saw break when
    given literal arguments, e.g. `threading.local()` and `types.SimpleNamespace(...)` (GB0147),
    `np.random.randint/uniform/choice` and a sampler given no size, which returns one number
    (`np.random.rand()`: GB0033; `np.random.rand(2)` is traced), `np.random.permutation` (GB0294), `object()` and
    `bytes(n)` (GB0059), `bisect.bisect_right` and `heapq.*` (C functions on the skip list:
    GB0007), `statistics.mean` (GB0134). Calls other rules report (`time`, `random`, `copy`, `logging`,
    `warnings`, `print`, `open`, `exec`...) are left to them.

    ## Why is this bad?
    These functions are on TorchDynamo's skip list (GB0007 "Attempted to call function marked
    as skipped", GB0008 when reached through a Python helper) or are C methods it cannot model
    (GB0156 "Unsupported method call"): the graph ends at the call, the call runs eagerly and a
    new graph starts after it. Their results (a timestamp, a hash, a thread id) are not tensors
    anyway. A progress bar (`for i in trange(steps)` in a sampler) breaks at the call and again
    when the loop iterates it, so the whole loop body then runs eagerly. Not flagged because they
    are traced in 2.13: `os.environ`/`os.getenv` (guarded), `os.path.join`, `inspect.signature`, `re`, `struct`, `threading.main_thread`.

    ## Example
    ```python
    def forward(self, x):
        key = hashlib.md5(str(x.shape).encode()).hexdigest()
        ...
    ```

    ## Use instead
    Compute such values outside the compiled function (once, at construction time) and pass them
    in, or key on `x.shape` directly (a tuple is hashable and traced). Drive a progress bar from
    outside: compile the per-step function and loop over `trange(steps)` around it.
    """
    invalid = (
        Example("""
            import csv
            import io

            import torch
            from torch import nn

            class Agent(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.q = nn.Linear(4, 2)
                    self.steps = 0
                    self.log = csv.writer(io.StringIO())

                def forward(self, obs):
                    self.log.writerow(["step", obs.shape[0]])  # break
                    return self.q(obs).argmax(-1)
        """, entry="Agent()", inputs="torch.randn(3, 4)"),
        Example("""
            import json
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                meta = json.dumps({"n": 8})  # break
                return y + len(meta)
        """),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                parts = np.empty(x.shape[0], dtype=object)  # break
                return y + 1
        """),
        Example("""
            import inspect
            import torch

            class Model(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.proj = torch.nn.Linear(8, 8)

                def forward(self, x):
                    y = self.proj(x)
                    caller = inspect.stack()[1]  # break
                    return y * 2
        """, entry="Model()"),
        Example("""
            import gc
            import threading
            import torch

            @torch.compile
            def fn(x):
                y = x.sin()
                gc.collect()  # break
                owner = threading.get_ident()  # break
                return y + 1
        """),
        Example("""
            import threading
            import types

            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                state = threading.local()  # break
                y = x.cos()
                options = types.SimpleNamespace(scale=2)  # break
                z = y * options.scale
                order = np.random.permutation(8)  # break
                lam = np.random.rand()  # break
                return z * lam + len(order) + np.random.rand(8)
        """),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                nodes, weights = np.polynomial.legendre.leggauss(4)  # break
                return x * torch.as_tensor(weights).sum()
        """),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                seeds = np.random.SeedSequence(entropy=1234)  # break
                return y + 1
        """),
        Example("""
            import networkx as nx
            import torch

            @torch.compile
            def fn(x):
                y = x.relu()
                ring = nx.cycle_graph(x.shape[0])  # break
                return y * 2, ring
        """),
        Example("""
            import math
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                n = math.prod(x.shape[i] for i in range(x.dim()))  # break
                return y / n
        """),
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                values = x.detach().numpy()
                counts, edges = np.histogram(values, bins=4)  # traced: torch._numpy has it
                cdf = np.cumsum(counts) / values.size
                levels = np.interp(values, edges[1:], cdf)  # break
                return torch.from_numpy(levels) * x
        """),
        Example("""
            import torch
            from scipy import ndimage, special

            @torch.compile
            def fn(x):
                smooth = torch.as_tensor(ndimage.gaussian_filter(x.numpy(), 1.0))  # break
                return smooth * float(special.gammaln(3.0))  # break
        """),
        Example("""
            import torch

            def byte_length(ids):
                rows = ids.clamp(0, 255).numpy().astype("uint8")
                return [len(row.tobytes()) for row in rows]  # break

            @torch.compile(backend="eager")
            def fn(x):
                return x * len(byte_length((x * 100).long()))
        """),
        Example("""
            import unicodedata
            import torch

            def normalize(text):
                # no tensor, no torch: after its first break TorchDynamo leaves this frame untraced
                text = unicodedata.normalize("NFKD", text)  # break
                return "".join(c for c in text if not unicodedata.combining(c))

            @torch.compile
            def fn(x):
                return x * len(normalize("Cafe au lait"))
        """),
        Example("""
            import unicodedata
            import torch

            @torch.compile
            def fn(x):
                def helper(text):
                    # closes over a tensor: TorchDynamo traces this frame after its first break
                    text = unicodedata.normalize("NFKD", text)  # break
                    return x * len(unicodedata.normalize("NFC", text))  # break
                return helper("Cafe au lait")
        """),
        Example("""
            import numpy as np
            import torch

            class Explorer(torch.nn.Module):
                def __init__(self, seed=0):
                    super().__init__()
                    self.head = torch.nn.Linear(8, 4)
                    self.rng = np.random.default_rng(seed)

                def forward(self, x):
                    probs = self.head(x).softmax(-1).detach().numpy()
                    picks = [self.rng.choice(4, p=row) for row in probs]  # break
                    return torch.as_tensor(picks)
        """, entry="Explorer()", inputs="torch.randn(3, 8)"),
        Example("""
            import dataclasses
            import hashlib
            import json

            import torch
            from torch import nn

            @dataclasses.dataclass
            class Schema:
                names: tuple = ("age", "income")

                def fingerprint(self):
                    payload = json.dumps(dataclasses.asdict(self)).encode("utf-8")  # break
                    return hashlib.sha1(payload).hexdigest()  # resumed in a frame that holds no tensor: never traced

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.schema = Schema()
                    self.fc = nn.Linear(2, 1)

                def forward(self, x):
                    if self.schema.fingerprint() == "":
                        x = x * 0
                    return self.fc(x)
        """, entry="Net()", inputs="torch.randn(3, 2)"),
    )
    valid = (
        Example("""
            import numpy as np
            import torch

            @torch.compile
            def fn(x):
                counts = np.zeros(x.shape[0], dtype=int)
                flags = np.ones(3, dtype=bool)
                return x + len(counts) + len(flags)
        """),
        Example("""
            import inspect
            import os
            import torch

            def helper(a, b):
                return a + b

            @torch.compile
            def fn(x):
                n = len(inspect.signature(helper).parameters)
                path = os.path.join("runs", "x")
                if os.environ.get("BREAKSCAN_EXAMPLE_FLAG") == "1":
                    n = n + 1
                return x * n + len(path)
        """),
        Example("""
            import hashlib
            import torch

            KEY = hashlib.md5(b"weights").hexdigest()

            @torch.compile
            def fn(x):
                return x * len(KEY)
        """),
        Example("""
            import math
            import torch

            @torch.compile
            def fn(x):
                n = math.prod([x.shape[i] for i in range(x.dim())])
                total = sum(s for s in x.shape)
                return x / n + total
        """),
        Example("""
            import numpy as np
            import torch

            class Denoiser(torch.nn.Module):
                def __init__(self, seed=0):
                    super().__init__()
                    self.rng = np.random.default_rng(seed)
                    self.proj = torch.nn.Linear(8, 8)

                def draw(self, n):
                    return torch.as_tensor(self.rng.normal(size=(n, 8)), dtype=torch.float32)

                def forward(self, x, noise):
                    return self.proj(x + noise)
        """, entry="Denoiser()", inputs="torch.randn(2, 8), torch.randn(2, 8)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and ctx.dynamo.enabled("trace_numpy") and ctx.is_known_tensor(func.value) and (
                object_method_break("numpy.ndarray", func.attr.value)):
            ctx.report(self, node, f"`.{func.attr.value}()` of a NumPy array (a tensor has no such method) cannot be "
                                   "traced by TorchDynamo: the graph breaks here")
            return
        receiver = ctx.value(func.value) if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Attribute) and isinstance(receiver, v.ModuleValue) and len(receiver.classes) == 1 and (
                not (cls := next(iter(receiver.classes))).startswith("random.")  # python-random-call's
                and object_method_break(cls, func.attr.value)):
            ctx.report(self, node, f"TorchDynamo cannot trace `.{func.attr.value}()` of a `{cls}` built outside the "
                                   "compiled code: the graph breaks here")
            return
        qualified = ctx.qualname(node.func)
        if qualified is not None and qualified.startswith("numpy.") and ctx.dynamo.enabled("trace_numpy"):
            dtype = ctx.numpy_object_dtype(node)
            if dtype is not None:
                ctx.report(self, node, f"a NumPy array of `{ctx.code(dtype)}` holds Python objects, which TorchDynamo "
                                       "cannot trace as a tensor: the graph breaks here")
                return
        if qualified is not None and any(isinstance(a.value, cst.GeneratorExp) and not a.star for a in node.args) and (
                generator_break(qualified)):
            ctx.report(self, node, f"`{qualified}` consumes the generator it is given in C code, where TorchDynamo "
                                   "cannot follow it: the graph breaks here")
            return
        keywords = frozenset(a.keyword.value for a in node.args if a.keyword is not None)
        if untraceable_gb_id(qualified, given_arguments=bool(node.args), keywords=keywords) is None:
            return
        if untraceable_package(qualified.partition(".")[0]) and not probed_break(qualified, bool(node.args)):
            if ctx.find_function(qualified) is not None or ctx.find_class(qualified) is not None:
                return  # a module of the scanned code that shares the package's name
            if ctx.compiled_extension(qualified) is not None:
                return  # defined by compiled code: the extension-call rule says so
            ctx.report(self, node, f"TorchDynamo traces into `{qualified.partition('.')[0]}`'s Python code and "
                                   "breaks there (every call of it the catalogue probed broke): the graph breaks here")
        elif on_skip_list(qualified):
            if ctx.find_function(qualified) is not None or ctx.find_class(qualified) is not None:
                return  # a module of the scanned code that shares the package's name
            ctx.report(self, node, f"`{qualified}` is in a package on TorchDynamo's third-party skip list "
                                   f"(`{qualified.partition('.')[0]}`), which it never traces: the graph breaks here "
                                   "(and again where a loop iterates what it gives)")
        else:
            if qualified in catalogue.load().numpy_without_torch_equivalent:
                ctx.report(self, node, f"`{qualified}` has no counterpart in torch._numpy, through which TorchDynamo "
                                       "traces NumPy: the graph breaks here")
                return
            where = {"builtins": "builtin", "numpy": "NumPy call", "scipy": "SciPy call"}.get(
                qualified.split(".", 1)[0], "standard-library call")
            ctx.report(self, node, f"this {where} cannot be traced by TorchDynamo: the graph breaks here")
