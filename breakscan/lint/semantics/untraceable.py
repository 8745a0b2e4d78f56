"""Calls TorchDynamo 2.13 cannot trace, each verified to break: standard-library functions and
modules with the GB id they report, and the context managers it cannot enter. Shared by the rules
that report them where they are called or entered, and by the rule that looks inside `__init__`."""

from __future__ import annotations

import ast
import collections
import functools

import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.resolve import dynamo_skipped_packages

# Standard-library callables that TorchDynamo 2.13 cannot trace, each verified to break, with the
# GB id it reports. Whole modules are listed where every function tried broke.
UNTRACEABLE_MODULES = {
    "gc": "GB0007", "zlib": "GB0007", "hashlib": "GB0007", "pickle": "GB0007", "base64": "GB0007",
    "secrets": "GB0008",
    # third party, on TorchDynamo's own skip list (trace_rules.THIRDPARTY_SKIPLIST): progress bars
    # in samplers and training loops (`for i in trange(n)`, `with tqdm(total=n) as bar`), GB0007
    # at the call, then GB0008 when the loop iterates the bar
    "tqdm": "GB0007",
}
# The NumPy modules whose functions TorchDynamo runs through `torch._numpy`
# (`torch._dynamo.utils.NP_SUPPORTED_MODULES`; a test holds this to the installed torch). A
# function of any other NumPy module (`np.polynomial.legendre.leggauss`,
# `np.lib.stride_tricks.sliding_window_view`) is skipped: the graph breaks at the call (GB0007,
# GB0008 for a class, GB0156 for a dispatcher it cannot call; probed).
NUMPY_TRACED_MODULES = frozenset({"numpy", "numpy.fft", "numpy.linalg", "numpy.random"})
# The public callables of those modules that TorchDynamo does not trace even so (defined in
# another module: `np.random.SeedSequence` comes from `numpy.random.bit_generator`), held to
# `torch._dynamo.trace_rules._numpy_function_ids` by the same test: the graph breaks at the call.
NUMPY_UNTRACED_NAMES = frozenset({
    "numpy.recarray", *(f"numpy.random.{name}" for name in (
        "BitGenerator", "Generator", "MT19937", "PCG64", "PCG64DXSM", "Philox", "RandomState", "SFC64",
        "SeedSequence")),
})


def on_skip_list(qualified: str) -> bool:
    """Whether the name is of a third-party package TorchDynamo never traces: tqdm (verified), and
    those on the installed torch's `THIRDPARTY_SKIPLIST` (pandas, sklearn, networkx...), except
    NumPy, which it traces through torch._numpy."""
    top = qualified.partition(".")[0]
    return top == "tqdm" or (top != "numpy" and top in dynamo_skipped_packages())
UNTRACEABLE_CALLS = {
    # clocks and identities (the `time` module has its own rule, time-call)
    "datetime.datetime.now": "GB0156", "datetime.datetime.utcnow": "GB0156", "datetime.datetime.today": "GB0156",
    "datetime.datetime.fromtimestamp": "GB0156", "datetime.date.today": "GB0156",
    "uuid.uuid1": "GB0007", "uuid.uuid4": "GB0007",
    "os.getpid": "GB0007", "os.urandom": "GB0007", "os.getcwd": "GB0007", "os.listdir": "GB0007",
    "os.cpu_count": "GB0007", "os.path.exists": "GB0007", "os.path.isfile": "GB0007", "os.path.isdir": "GB0007",
    "socket.gethostname": "GB0007",
    # serialisation
    "json.dumps": "GB0156", "json.loads": "GB0156",
    "io.StringIO": "GB0156", "io.BytesIO": "GB0156",
    # frames and introspection
    "inspect.stack": "GB0007", "inspect.currentframe": "GB0007", "inspect.getframeinfo": "GB0007",
    "inspect.getsource": "GB0007", "inspect.getsourcelines": "GB0007", "inspect.getfile": "GB0007",
    "sys._getframe": "GB0007", "sys.getsizeof": "GB0007", "sys.getrefcount": "GB0007",
    "traceback.format_stack": "GB0007", "traceback.print_stack": "GB0007", "traceback.extract_stack": "GB0007",
    "importlib.import_module": "GB0007", "builtins.__import__": "GB0007",
    # threads
    "threading.Lock": "GB0007", "threading.RLock": "GB0156", "threading.Condition": "GB0156",
    "threading.Event": "GB0007", "threading.Semaphore": "GB0007", "threading.current_thread": "GB0007",
    "threading.get_ident": "GB0007", "threading.get_native_id": "GB0007",
    # process-wide warning filters (`warnings.warn` itself is the io family's warnings-warn)
    "warnings.simplefilter": "GB0007", "warnings.filterwarnings": "GB0007",
}


def untraceable_gb_id(qualified: str | None, given_arguments: bool | None = None,
                      keywords: frozenset[str] = frozenset()) -> str | None:
    """The GB id a standard-library, NumPy, builtin or skipped call breaks with; None if it is
    traced. `given_arguments`: whether the call passes any, and `keywords` the names it passes, to
    tell the forms the catalogue probed apart (`np.random.rand()` returns a number and breaks,
    `np.random.rand(2)` does not; `np.random.randint(0, n, size=b)` an array, traced)."""
    if qualified is None:
        return None
    if qualified in UNTRACEABLE_CALLS:
        return UNTRACEABLE_CALLS[qualified]
    if "." in qualified and qualified.split(".", 1)[0] in UNTRACEABLE_MODULES:
        return UNTRACEABLE_MODULES[qualified.split(".", 1)[0]]
    if on_skip_list(qualified):
        return "GB0007"
    if qualified.startswith("numpy.") and qualified.rpartition(".")[0] not in NUMPY_TRACED_MODULES:
        return "GB0007"
    if qualified in NUMPY_UNTRACED_NAMES:
        return "GB0156"
    if qualified in catalogue.load().numpy_without_torch_equivalent:
        return "GB0294"
    probed = probed_break(qualified, given_arguments, keywords)
    if probed:
        return probed[0]
    package = untraceable_package(qualified.partition(".")[0])
    return package[0] if package else None


@functools.cache
def untraceable_package(top: str) -> tuple[str, ...]:
    """The GB ids, most frequent first, of a third-party package whose every call the catalogue
    probed broke (SciPy: TorchDynamo does not skip it, traces into its Python code and breaks
    there, on arrays and Python numbers alike); () for any other package."""
    probes = [entry for entry in catalogue.load().entries
              if entry.category == "thirdparty" and entry.key.partition(".")[0] == top and entry.status == "ok"]
    if len(probes) < _FEWEST_PACKAGE_PROBES or not all(entry.breaks and entry.gb_ids for entry in probes):
        return ()
    counts = collections.Counter(gb for entry in probes for gb in entry.gb_ids)
    return tuple(gb for gb, _ in counts.most_common())


# A package is judged by its probes only when they reach across it.
_FEWEST_PACKAGE_PROBES = 3


# Calls other rules report, each with its own advice (and exceptions, such as a print in a debug
# branch or a random draw TorchDynamo traces): the catalogue does not add them here.
_OWNED_ELSEWHERE = ("random.", "time.", "copy.", "warnings.", "logging.", "sys.stdout.", "sys.stderr.",
                    "builtins.print", "builtins.open", "builtins.exec", "builtins.eval", "builtins.compile",
                    "builtins.breakpoint", "builtins.globals")
_PROBED_CATEGORIES = frozenset({"stdlib", "numpy", "builtin", "thirdparty"})


@functools.lru_cache(maxsize=2048)
def probed_break(qualified: str, given_arguments: bool | None = None,
                 keywords: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The GB ids TorchDynamo broke with on a standard-library, NumPy or builtin call, by the
    catalogue (breakscan/lint/data/catalogue.json); () when it did not break there, was not probed,
    or another rule owns the call. Only probes given literals count: there the break is the
    function's, not its argument's (`inspect.signature` breaks on a lambda, not on a function).
    With `given_arguments` known, the probes of that form (with arguments or without), if any; of
    those, the probes passing the same `keywords` (`size=`), if any."""
    if qualified.startswith(_OWNED_ELSEWHERE):
        return ()
    probes = [entry for entry in catalogue.entries(qualified)
              if entry.category in _PROBED_CATEGORIES and entry.status == "ok" and _literal_arguments(entry.call)]
    same_form = [entry for entry in probes if _passes_arguments(entry.call) == given_arguments] or probes
    same_keywords = [entry for entry in same_form if _keyword_names(entry.call) == keywords]
    for entry in same_keywords or same_form:
        if entry.breaks and entry.gb_ids:
            return entry.gb_ids
    return ()


# The class of what calling a generator function gives.
GENERATOR_CLASS = "builtins.generator"


@functools.lru_cache(maxsize=512)
def object_method_break(cls: str, name: str) -> tuple[str, ...]:
    """The GB ids TorchDynamo broke with on a method of an object of class `cls` built outside the
    compiled code: a NumPy array's method that a tensor does not have (`a.tobytes()`), a random
    generator's draw (`rng.choice(4)`), an iterator's `__next__` (`next(it)`) or `__iter__` (a `for`
    loop over it), by the catalogue; () when it traced it or it was not probed."""
    for entry in catalogue.entries(f"{cls}.{name}"):
        if entry.category in _PROBED_CATEGORIES and entry.status == "ok" and entry.breaks and entry.gb_ids:
            return entry.gb_ids
    return ()


@functools.lru_cache(maxsize=256)
def generator_break(qualified: str) -> tuple[str, ...]:
    """The GB ids TorchDynamo broke with on a standard-library or builtin call given a generator
    expression (`math.prod(s for s in shape)`: C code consumes it where TorchDynamo cannot follow),
    by the catalogue; () when it traced the call, or it was not probed so."""
    for entry in catalogue.entries(qualified):
        if entry.args == "generator" and entry.category in _PROBED_CATEGORIES and entry.status == "ok":
            return entry.gb_ids if entry.breaks else ()
    return ()


def _is_dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _keyword_names(call: str) -> frozenset[str]:
    expression = ast.parse(call, mode="eval").body
    return frozenset(k.arg for k in expression.keywords if k.arg) if isinstance(expression, ast.Call) else frozenset()


def _passes_arguments(call: str) -> bool:
    expression = ast.parse(call, mode="eval").body
    return isinstance(expression, ast.Call) and bool(expression.args or expression.keywords)


def _literal_arguments(call: str) -> bool:
    """Whether every argument of the probed call (`threading.local()`, `np.random.randint(0, 5)`) is a literal."""
    try:
        expression = ast.parse(call, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(expression, ast.Call) or not _is_dotted(expression.func):
        return False  # a method of what another call returned: the break may be that call's
    arguments = [*expression.args, *(keyword.value for keyword in expression.keywords)]
    try:
        for argument in arguments:
            ast.literal_eval(argument)
    except ValueError:
        return False
    return True


# Context managers TorchDynamo 2.13 cannot enter (each verified): it gives up on the whole frame.
# `open(...)` is the io family's open-file rule. Supported, not listed: torch.no_grad,
# enable_grad, set_grad_enabled, inference_mode, autocast (all spellings), record_function,
# profiler.profile, nn.attention.sdpa_kernel, contextlib.nullcontext/suppress/ExitStack,
# warnings.catch_warnings, @contextmanager generators and user classes with __enter__/__exit__.
UNSUPPORTED_FACTORIES = frozenset(
    {
        "torch.device",
        "torch.random.fork_rng",
        "torch.backends.cuda.sdp_kernel",
        "torch.backends.cudnn.flags",
        "torch.backends.mkldnn.flags",
        "torch.autograd.set_detect_anomaly",
        "torch.autograd.detect_anomaly",
        "torch.autograd.anomaly_mode.set_detect_anomaly",
        "torch.autograd.anomaly_mode.detect_anomaly",
        "torch.autograd.graph.saved_tensors_hooks",
        "torch.autograd.graph.save_on_cpu",
        "torch.autograd.graph.allow_mutation_on_saved_tensors",
        "torch.cuda.device_of",
        "torch._dynamo.config.patch",
        "contextlib.redirect_stdout",
        "contextlib.redirect_stderr",
        "tempfile.TemporaryDirectory",
        "tempfile.NamedTemporaryFile",
        "unittest.mock.patch",
        "threading.Lock",
        "threading.RLock",
    }
)
LOCK_CLASSES = frozenset({"threading.Lock", "threading.RLock"})


# torch functions and tensor methods other rules report, each with its own advice and exceptions
# (`.item()` under capture_scalar_outputs, `nonzero` in torchvision-style keep logic...), by name.
_TORCH_OWNED_ELSEWHERE = frozenset({
    "item", "tolist", "numpy", "nonzero", "argwhere", "masked_select", "where", "unique", "unique_consecutive",
    "bincount", "repeat_interleave", "one_hot", "grad", "backward", "requires_grad_", "retain_grad",
    "graph_break", "disable", "Parameter", "grad_fn",
})
_PROBED_TORCH_CATEGORIES = frozenset({"tensor-method", "torch", "functional"})


def torch_probed_break(node: cst.Call, ctx) -> tuple[catalogue.Entry, cst.BaseExpression | None] | None:
    """The catalogue's probe of a torch function or tensor method call that broke when given the
    same kind of arguments (`x.allclose(y)`, `torch.manual_seed(0)`, `x.unsqueeze_(0)`), under the
    settings this code is compiled with; None if it did not break there, was not probed, breaks
    only on a data-dependent argument (`torch.zeros(k[0, 0])`), or another rule owns the call.
    With it, the argument the analysis cannot tell, when the call is one whose every probe broke,
    whatever it was given (`torch.equal(a, b)` over a list it cannot see into)."""
    func = node.func
    qualified = ctx.qualname(func)
    method = False
    if not (qualified or "").startswith("torch."):  # a method of a torch object: `self.engine.draw(n)`, a
        # module-level `ENGINE.draw(n)`; or the object called (`self.a_fq(x)`: a torch module)
        owned = _object_method(ctx.value(func.value), func.attr.value) if isinstance(func, cst.Attribute) else None
        if owned is None and isinstance(func, (cst.Name, cst.Attribute)):
            owned = _object_method(ctx.value(func), "__call__")
        if owned is not None:
            qualified, method = owned, True
    if qualified is None or not qualified.startswith("torch.") or any(a.star for a in node.args):
        return None
    if _owned_elsewhere(qualified):
        return None
    arguments = [a.value for a in node.args]
    kinds = [ctx.value(a) for a in arguments]
    given: str | None = "any"
    if not method and not qualified.startswith("torch.Tensor."):
        if any(kind == v.TENSOR or kind == v.TENSORS for kind in kinds):
            given = "tensor"
        elif kinds and all(kind == v.OTHER for kind in kinds):
            given = "objects"  # a distribution, a dtype: a probe given objects or dotted constants is the call's
        elif all(v.is_plain(kind) for kind in kinds):
            given = "python" if kinds else "none"
        else:
            given = None  # an argument the analysis cannot tell
    probes = [entry for entry in catalogue.entries(qualified, config=None)
              if entry.category in _PROBED_TORCH_CATEGORIES and entry.status == "ok" and _own_break(entry)
              and (entry.config == catalogue.DEFAULT or _setting_holds(entry.config, ctx))]
    if given is None:
        # Those that broke on a 0-d tensor given for a number say nothing about other arguments.
        probes = [entry for entry in probes if _number_slots(entry) is None]
        if probes and all(entry.breaks and entry.gb_ids for entry in probes) and not _captured_under(qualified, ctx):
            if all(set(entry.gb_ids) <= _SKIPPED for entry in probes):
                return probes[0], None  # a function or class TorchDynamo skips: whatever it is given
            return probes[0], next(a for a, kind in zip(arguments, kinds) if not v.is_plain(kind))
        return None
    for entry in probes:
        given_flags = [(_keyword_given(node, name), value) for name, value in _flag_keywords(entry)]
        if any(given is not None and not isinstance(given, cst.BaseExpression) and given != value
               or given is None for given, value in given_flags):
            continue  # probed with a flag (`validate_args=True`) this call does not pass so
        unknown_flag = next((given for given, _ in given_flags if isinstance(given, cst.BaseExpression)), None)
        slots = _number_slots(entry)
        if slots is not None:  # it broke on a 0-d tensor put where a number goes: is one put there here?
            if not _tensor_at(node, slots, ctx):
                continue
        elif (given != "any" and _probe_arguments(entry) not in _MATCHING_PROBES.get(given, {given})
              and not set(entry.gb_ids) <= _WHATEVER_GIVEN):
            continue
        if entry.breaks and entry.gb_ids and not _captured_under(qualified, ctx):
            return entry, unknown_flag  # a flag passed as a value the analysis cannot read: a warning
    return None


# The catalogue's input that is a 0-d tensor put where the op takes a Python number (`F.dropout(x, p)`).
_NUMBER_INPUT = "p"


@functools.cache  # asked for every call of every probed function
def _number_slots(entry: catalogue.Entry) -> tuple[frozenset[int], frozenset[str]] | None:
    """Where a probe gave the call a 0-d tensor for a number: the positions and keywords of `p`
    (`F.dropout(x, p)`, `F.layer_norm(x, (4,), eps=p)`); None for a probe that gave none."""
    expression = ast.parse(entry.call, mode="eval").body
    if not isinstance(expression, ast.Call):
        return None
    positions = frozenset(i for i, a in enumerate(expression.args) if isinstance(a, ast.Name) and a.id == _NUMBER_INPUT)
    keywords = frozenset(k.arg for k in expression.keywords
                         if k.arg and isinstance(k.value, ast.Name) and k.value.id == _NUMBER_INPUT)
    return (positions, keywords) if positions or keywords else None


def _tensor_at(node: cst.Call, slots: tuple[frozenset[int], frozenset[str]], ctx) -> bool:
    """Whether the call is given a tensor (not a root's parameter only taken for one) at one of those places."""
    positions, keywords = slots
    positional = [a.value for a in node.args if a.keyword is None]
    given = [positional[i] for i in positions if i < len(positional)]
    given += [a.value for a in node.args if a.keyword is not None and a.keyword.value in keywords]
    return any(ctx.value(a) == v.TENSOR and not v.is_assumed_tensor(ctx.value(a)) for a in given)


# A call given objects only (no tensor, no number) is what a probe given objects built by torch
# classes (`kl_divergence(Normal(x, 1.0), Normal(y, 1.0))`) or dotted constants (`torch.float64`) was.
_MATCHING_PROBES = {"objects": frozenset({"objects", "python"})}

# "Attempted to call / inline function marked as skipped": the call breaks before its arguments matter.
_SKIPPED = frozenset({"GB0007", "GB0008"})
# Breaks that are the call's whatever it is given: a skipped function, an opaque object built
# (`torch.Generator(device="cpu")` as `torch.Generator()`).
_WHATEVER_GIVEN = _SKIPPED | {"GB0363"}


def _object_method(owner: v.Value, name: str) -> str | None:
    """`x.allclose` -> "torch.Tensor.allclose"; `engine.draw` on a `torch.quasirandom.SobolEngine`
    -> "torch.quasirandom.SobolEngine.draw" (an object of one torch class whose method was probed)."""
    if owner == v.TENSOR:
        return f"torch.Tensor.{name}"
    if isinstance(owner, v.ModuleValue) and len(owner.classes) == 1:
        key = f"{next(iter(owner.classes))}.{name}"
        if key.startswith("torch.") and catalogue.entries(key, config=None):
            return key
    return None


# Breaks that come from what the probe was given rather than from the call: GB0148 is an in-place
# view change of the compiled function's input (`x.t_()`, `x.unsqueeze_(0)`, `x.detach_()`); on a
# tensor made in the compiled code the same calls are traced (each verified).
_INPUT_DEPENDENT = frozenset({"GB0148"})


@functools.cache  # asked for every call of every probed function
def _own_break(entry: catalogue.Entry) -> bool:
    """The probe's break is the call's own: nothing in it reads tensor data (`k[0, 0]`) first,
    and the break is not about the input it was given."""
    try:
        expression = ast.parse(entry.call, mode="eval").body
    except SyntaxError:
        return False
    if _number_slots(entry) is not None:  # the 0-d tensor given for a number is what breaks (`x[None]` reads nothing)
        return not set(entry.gb_ids) <= _INPUT_DEPENDENT
    return (isinstance(expression, ast.Call) and not any(isinstance(n, ast.Subscript) for n in ast.walk(expression))
            and not set(entry.gb_ids) <= _INPUT_DEPENDENT)


@functools.cache  # asked for every call of every probed function
@functools.cache  # asked for every call of every probed function
def _flag_keywords(entry: catalogue.Entry) -> tuple[tuple[str, bool], ...]:
    """The bool keywords a probe passes (`validate_args=True`): what it broke on may be their
    doing, so only a call passing the same matches it."""
    expression = ast.parse(entry.call, mode="eval").body
    if not isinstance(expression, ast.Call):
        return ()
    return tuple((k.arg, k.value.value) for k in expression.keywords
                 if k.arg is not None and isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool))


def _keyword_given(call: cst.Call, name: str) -> bool | cst.BaseExpression | None:
    """The literal `True`/`False` a call passes as keyword `name`, or the expression it passes
    instead (`validate_args=validate`); None when it passes none."""
    given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    return given.value == "True" if isinstance(given, cst.Name) and given.value in ("True", "False") else given


def _probe_arguments(entry: catalogue.Entry) -> str:
    """What the probe gave the call: "none", "python" when every argument is a literal (`[]` too) or
    a dotted constant (`torch.float32`), "objects" when each is an object a torch class builds
    (`torch.distributions.Normal(x, 1.0)`), else "tensor"."""
    expression = ast.parse(entry.call, mode="eval").body
    if not isinstance(expression, ast.Call):
        return "tensor"
    arguments = [*expression.args, *(keyword.value for keyword in expression.keywords)]
    if not arguments:
        return "none"
    if all(_is_literal(a) or (isinstance(a, ast.Attribute) and _is_dotted(a)) for a in arguments):
        return "python"
    if all(isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and _is_dotted(a.func)
           and a.func.attr[:1].isupper() for a in arguments):
        return "objects"
    return "tensor"


def _is_literal(node: ast.expr) -> bool:
    """`4`, `"x"`, `[]`, `(1, 2)`: a constant, or a container written out of constants."""
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def _setting_holds(config: str, ctx) -> bool:
    name, _, value = (part.strip() for part in config.partition("="))
    return ctx.dynamo.enabled(name) == (value == "True")


def _captured_under(qualified: str, ctx) -> bool:
    """A probe of the call under a setting this code is compiled with, which did not break."""
    return any(entry.config != catalogue.DEFAULT and _setting_holds(entry.config, ctx) and entry.status == "ok"
               and not entry.breaks for entry in catalogue.entries(qualified, config=None))


def torch_attribute_break(node: cst.Attribute, ctx) -> catalogue.Entry | None:
    """The catalogue's probe of a tensor attribute that broke when read (`x.grad_dtype`), under
    the settings this code is compiled with; None for any other read."""
    if ctx.value(node.value) != v.TENSOR:
        return None
    qualified = f"torch.Tensor.{node.attr.value}"
    return next((entry for entry in catalogue.entries(qualified, config=None)
                 if entry.category == "tensor-attribute" and entry.status == "ok" and entry.breaks and entry.gb_ids
                 and (entry.config == catalogue.DEFAULT or _setting_holds(entry.config, ctx))
                 and not _owned_elsewhere(qualified)), None)


@functools.cache
def torch_probed_gb_ids() -> tuple[str, ...]:
    """Every GB id a probed torch call or tensor attribute broke with on its own."""
    return tuple(sorted({gb for entry in catalogue.load().entries
                         if entry.category in (*_PROBED_TORCH_CATEGORIES, "tensor-attribute") and entry.breaks
                         and _own_break(entry) and not _owned_elsewhere(entry.key) for gb in entry.gb_ids}))


def _owned_elsewhere(qualified: str) -> bool:
    name = qualified.rpartition(".")[2]
    # Modules built in compiled code are module-construction's.
    return name in _TORCH_OWNED_ELSEWHERE or (qualified.startswith("torch.nn.") and name[:1].isupper())
