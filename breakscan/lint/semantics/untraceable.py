"""Calls TorchDynamo 2.13 cannot trace, each verified to break: standard-library functions and
modules with the GB id they report, and the context managers it cannot enter. Shared by the rules
that report them where they are called or entered, and by the rule that looks inside `__init__`."""

from __future__ import annotations

import ast
import functools

from breakscan.lint import catalogue

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
# The third-party entries above: the message must not call them standard library.
THIRD_PARTY_MODULES = frozenset({"tqdm"})
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


def untraceable_gb_id(qualified: str | None) -> str | None:
    if qualified is None:
        return None
    if qualified in UNTRACEABLE_CALLS:
        return UNTRACEABLE_CALLS[qualified]
    if "." in qualified and qualified.split(".", 1)[0] in UNTRACEABLE_MODULES:
        return UNTRACEABLE_MODULES[qualified.split(".", 1)[0]]
    probed = probed_break(qualified)
    return probed[0] if probed else None


# Calls other rules report, each with its own advice (and exceptions, such as a print in a debug
# branch or a random draw TorchDynamo traces): the catalogue does not add them here.
_OWNED_ELSEWHERE = ("random.", "time.", "copy.", "warnings.", "logging.", "sys.stdout.", "sys.stderr.",
                    "builtins.print", "builtins.open", "builtins.exec", "builtins.eval", "builtins.compile",
                    "builtins.breakpoint", "builtins.globals")
_PROBED_CATEGORIES = frozenset({"stdlib", "numpy", "builtin"})


@functools.lru_cache(maxsize=2048)
def probed_break(qualified: str) -> tuple[str, ...]:
    """The GB ids TorchDynamo broke with on a standard-library, NumPy or builtin call, by the
    catalogue (breakscan/lint/data/catalogue.json); () when it did not break there, was not probed,
    or another rule owns the call. Only probes given literals count: there the break is the
    function's, not its argument's (`inspect.signature` breaks on a lambda, not on a function)."""
    if qualified.startswith(_OWNED_ELSEWHERE):
        return ()
    for entry in catalogue.entries(qualified):
        if (entry.category in _PROBED_CATEGORIES and entry.status == "ok" and entry.breaks and entry.gb_ids
                and _literal_arguments(entry.call)):
            return entry.gb_ids
    return ()


def _is_dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


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
