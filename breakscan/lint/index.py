"""What one parsed file defines: imports, classes, functions, and where it calls `torch.compile`.

Built by walking only module- and class-level statements; function bodies are left for the
region walker, which visits only the functions that run under `torch.compile`.
"""

from __future__ import annotations

import ast
import copy
import operator
import re
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

import libcst as cst

from breakscan.lint.declared import CONTAINER_GENERICS, parameter_kind
from breakscan.lint.dynamo_settings import CONFIG_PREFIX, NO_SETTINGS, DynamoSettings, SettingsBuilder
from breakscan.lint.names import (
    BUILTIN_NAMES,
    absolute_module,
    dotted_name,
    import_bindings,
    module_dotted,
    names_a_class,
)
from breakscan.lint.traverse import find_nodes, walk
from breakscan.lint.values import (
    BOOL,
    FLOAT,
    INT,
    METADATA_METHODS,
    NONE,
    OBJECT_FACTORIES,
    OTHER,
    SPARSE,
    SPARSE_FACTORIES,
    SPARSE_METHODS,
    STR,
    TENSOR,
    TENSORS,
    UNKNOWN,
    VARYING_BOOL,
    VARYING_FLOAT,
    VARYING_INT,
    VARYING_INTS,
    VARYING_LENGTH,
    VARYING_LITERAL,
    VARYING_OBJECT,
    VARYING_OPTIONAL,
    VARYING_STR,
    VECTOR,
    VECTOR_FACTORIES,
    ZERO_DIM_INPUT,
    Container,
    Kind,
    ModuleValue,
    container,
    declared_kind,
    is_plain,
    join,
    literal_kind,
)

COMPILE_NAMES = frozenset({"torch.compile", "torch._dynamo.optimize"})
CONFIG_PATCH = "torch._dynamo.config.patch"
DISABLE_NAMES = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo"})
MODULE_BASES = frozenset(
    {
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "pytorch_lightning.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)
# Parameter containers are modules too, but hold no `forward` of interest.
NOT_MODULE_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def is_torch_module_base(name: str) -> bool:
    """Whether the qualified name is torch's nn.Module, or a known subclass of it from torch or a
    framework (private ones too: `torch.nn.modules.loss._Loss`, `_BatchNorm`, `_ConvNd`)."""
    if name in MODULE_BASES:
        return True
    return (name.startswith("torch.nn.") and names_a_class(name)
            and name not in NOT_MODULE_CLASSES)


_Target = TypeVar("_Target")


class _WeakLink(Generic[_Target]):
    """A dataclass field holding its object weakly. A module's index holds its functions and
    classes, so their link back to the index, held strongly, would make every index a reference
    cycle that only a full garbage collection frees (of the whole heap, parse cache included);
    held weakly, an index and its tree go as soon as the last unit using them lets go."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_link"

    @overload
    def __get__(self, instance: None, owner: type) -> Any: ...
    @overload
    def __get__(self, instance: object, owner: type) -> _Target: ...
    def __get__(self, instance: object | None, owner: type) -> Any:
        if instance is None:
            raise AttributeError  # no default: the field stays a required argument
        return getattr(instance, self._slot)()

    def __set__(self, instance: object, value: _Target) -> None:
        setattr(instance, self._slot, weakref.ref(value))


@dataclass
class FunctionInfo:
    module: "_WeakLink[ModuleIndex]" = _WeakLink()
    qualname: str  # "Model.forward", "helper"
    node: cst.FunctionDef
    top_statement: cst.CSTNode  # the module-level statement holding it, for positions
    class_name: str | None = None
    decorators: tuple[str, ...] = ()
    # What its decorators say about how it is compiled: `@torch.compile(fullgraph=True)`,
    # `@torch._dynamo.config.patch(capture_scalar_outputs=True)`.
    compile_settings: DynamoSettings = NO_SETTINGS
    # For a method run on an instance of a subclass (an inherited `forward`): that class, whose
    # overrides `self.method()` calls reach, as TorchDynamo traces them for the real instance.
    bound_class: "ClassInfo | None" = None

    @property
    def key(self) -> str:
        bound = f"@{self.bound_class.module.name}.{self.bound_class.name}" if self.bound_class is not None else ""
        return f"{self.module.name}:{self.qualname}{bound}"

    @property
    def disabled(self) -> bool:
        return any(d in DISABLE_NAMES or self.module.disables(d) for d in self.decorators) or (
            self.dotted in self.module.disabled_names)

    @property
    def dotted(self) -> str:
        return f"{self.module.name}.{self.qualname}"

    @property
    def compiled(self) -> bool:
        return any(d in COMPILE_NAMES for d in self.decorators)

    @property
    def is_property(self) -> bool:
        return any(d in ("builtins.property", "functools.cached_property") or d.endswith(".getter")
                   for d in self.decorators)

    @property
    def is_staticmethod(self) -> bool:
        return any(d.endswith("staticmethod") for d in self.decorators)

    @property
    def positional_params(self) -> list[cst.Param]:
        """The parameters a call passes positionally, without a method's `self`."""
        params = [*self.node.params.posonly_params, *self.node.params.params]
        if self.class_name is not None and params and not self.is_staticmethod:
            params = params[1:]
        return params


@dataclass
class ClassInfo:
    module: "_WeakLink[ModuleIndex]" = _WeakLink()
    name: str
    node: cst.ClassDef
    bases: tuple[str, ...]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    # self.<attr> assignments in any method: the qualified names of the classes they construct.
    attr_classes: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> holding tensors: parameters and buffers.
    tensor_attrs: set[str] = field(default_factory=set)
    # self.<attr> holding Python values of a known kind (`self.patch = patch_size` with `patch_size=4`).
    attr_kinds: dict[str, Kind] = field(default_factory=dict)
    # self.<attr> set in `__init__` from one of its parameters (`*args` too): attr -> the parameter's name.
    attr_params: dict[str, str] = field(default_factory=dict)
    # self.<attr> built in `__init__` by constructing torch layers with its parameters as keyword
    # arguments (`self.net = nn.Sequential(nn.Conv1d(c, c, 3, padding=dilation))`): attr -> those parameters.
    attr_built_with: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> = self.<name> (a bound method, if the class has one by that name): attr -> names.
    attr_methods: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> = a name or dotted name, which may be a function of the module or an imported one
    # (`self.search_fn = radius_search`, one of several in an `if`): attr -> the names as written.
    attr_functions: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> = self.<name>(...): what that method returns, as the object's class has it
    # (`self.reducer = self.get_default_reducer()`, overridden per loss): attr -> method names.
    attr_factories: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> = <function>(...), a function of the scanned code: what it returns
    # (`self.a_fq = act_fake_quant(cfg)`): attr -> the functions' qualified names.
    attr_builders: dict[str, set[str]] = field(default_factory=dict)
    # self.<attr> = a literal or parameter of a known Python kind in `__init__` itself: what the
    # attribute is when the object is built (`attr_kinds` also joins later setup methods').
    built_kinds: dict[str, Kind] = field(default_factory=dict)
    # Forward hooks its setup registers on itself or a submodule (`self.conv.register_forward_pre_hook(
    # log_shape)`): (whether it runs before forward, the hook's name as written). They run inside the
    # compiled module's call.
    # The tensor attributes that hold a sparse tensor (`self.register_buffer("adj", a.to_sparse())`).
    sparse_attrs: set[str] = field(default_factory=set)
    # Of `tensor_attrs`, those that hold state the module keeps: registered buffers and parameters,
    # `nn.Parameter`s built in `__init__`.
    state_attrs: set[str] = field(default_factory=set)
    # Of those, the registered buffers (`self.register_buffer("mean", ...)`), which never require grad.
    buffer_attrs: set[str] = field(default_factory=set)
    # A hook made by a call (`self._make_hook(name)`) is named by the function called, and marked.
    hooks: list[tuple[bool, str, bool]] = field(default_factory=list)
    # Names annotated in the class body (`loss: Tensor`), in order: attributes every instance has
    # (None: a `collections.namedtuple` field, which no annotation types).
    annotated: dict[str, cst.BaseExpression | None] = field(default_factory=dict)
    # A dataclass or a NamedTuple: its constructor takes the annotated names, in order.
    record: bool = False


@dataclass
class CallSites:
    """How the scanned code uses what it compiles, outside the compiled code (what recompile
    rules read, merged over a project by `merged`)."""

    # qualified nn.Module class -> a `.train()`/`.eval()` call on a compiled instance, as written
    mode_flips: dict[str, str] = field(default_factory=dict)
    # qualified compiled function or module class -> (a call under `torch.no_grad()`,
    # `torch.inference_mode()` or `torch.autocast(...)`, a call outside them), as written
    state_switches: dict[str, tuple[str, str]] = field(default_factory=dict)
    # qualified compiled function or class -> a `torch.compile(...)` run on every call of the
    # code around it with a backend object made anew each time, as written
    fresh_backends: dict[str, str] = field(default_factory=dict)
    # qualified nn.Module class -> a `torch.compile` of its instances one by one (in a loop or a
    # comprehension: per-layer compilation), as written
    per_instance_compiles: dict[str, str] = field(default_factory=dict)
    # qualified class -> the constructor arguments (positions counted after `self`, or keywords)
    # given a loop's int (`Block(i)` in `for i in range(n)`): a value per instance
    varying_builds: dict[str, set[int | str]] = field(default_factory=dict)
    # qualified compiled function or class -> (a call in a loop given a tensor whose shape the loop
    # changes: `x[:, :t]`, or a name it grows with `torch.cat`, as written; the `dynamic=` of its
    # compile as written, or None)
    varying_shapes: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # qualified compiled function or class -> (the declared calls, as written, when they give a
    # tensor argument of other dtypes; the dtypes, in call order)
    varying_dtypes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # the same, when they give a tensor argument that requires grad on some calls only: the calls
    varying_grads: dict[str, str] = field(default_factory=dict)
    # the same, when they give a tensor argument in other memory formats (`channels_last` on some): the calls
    varying_layouts: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def merged(all_sites: Iterable[CallSites]) -> CallSites:
        merged = CallSites()
        for sites in all_sites:
            for key, flip in sites.mode_flips.items():
                merged.mode_flips.setdefault(key, flip)
            for key, calls in sites.state_switches.items():
                merged.state_switches.setdefault(key, calls)
            for key, call in sites.fresh_backends.items():
                merged.fresh_backends.setdefault(key, call)
            for key, call in sites.per_instance_compiles.items():
                merged.per_instance_compiles.setdefault(key, call)
            for key, arguments in sites.varying_builds.items():
                merged.varying_builds.setdefault(key, set()).update(arguments)
            for key, shaped in sites.varying_shapes.items():
                merged.varying_shapes.setdefault(key, shaped)
            for key, typed in sites.varying_dtypes.items():
                merged.varying_dtypes.setdefault(key, typed)
            for key, calls in sites.varying_grads.items():
                merged.varying_grads.setdefault(key, calls)
            for key, calls in sites.varying_layouts.items():
                merged.varying_layouts.setdefault(key, calls)
        return merged


@dataclass
class VaryingCall:
    """`step(x, i)` in `for i in range(n)`, or `step(p, lr)` in a loop that rebinds `lr = lr * 0.9`,
    where `step = torch.compile(fn, dynamic=...)` or `fn` is decorated with `@torch.compile(...)`:
    argument `position` (or `keyword`) of `fn` gets another Python number on each iteration."""

    call: str  # the call as written, for the message: `step(out, i)`
    position: int | None
    keyword: str | None
    dynamic: str | None  # the `dynamic=` given to torch.compile, as written ("False"); None: not given
    number: str = "int"  # "int" or "float": what the argument holds


@dataclass
class ModuleIndex:
    name: str  # dotted module name, e.g. "models.resnet"
    path: str
    package: str
    imports: dict[str, str] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    # Expressions passed to torch.compile(...) anywhere in the file, as qualified names of
    # functions/classes ("models.m.helper", "models.m.Model").
    compiled_refs: set[str] = field(default_factory=set)
    disabled_names: set[str] = field(default_factory=set)
    # Decorators of this module already asked about: whether each disables what it decorates.
    disabling: dict[str, bool] = field(default_factory=dict)
    declares_targets: bool = False
    # Whether the text may index with a negation (`d[~same]`, `x[:, ~m]`): the walker looks for one.
    negates_index: bool = False
    # Module-level `name = call(...)`: the qualified name of what was called ("logging.getLogger");
    # "" for any other module-level assignment, which still shadows builtins of that name.
    assignments: dict[str, str] = field(default_factory=dict)
    # Of those, the call itself (what a record class is built with: `EULER = Tableau(alpha=...)`).
    global_calls: dict[str, cst.Call] = field(default_factory=dict)
    # Module-level `name = <a call>`, method chains too (`_rays_t = torch.randn(3, 16).t()`), as
    # the declared inputs name them.
    global_made: dict[str, cst.Call] = field(default_factory=dict)
    # Module-level flags whose value the code writes out, assigned once: `DEBUG = True`, or an
    # environment switch at its default (`os.environ.get("DEBUG_SHAPES", "1") == "1"`: on).
    global_flags: dict[str, bool] = field(default_factory=dict)
    # `torch._dynamo.config` settings the module makes (assignments and set mutations, anywhere in it).
    dynamo: DynamoSettings = NO_SETTINGS
    # Qualified names passed to `torch.compile(..., fullgraph=True)`.
    fullgraph_refs: set[str] = field(default_factory=set)
    # Compiled functions called in a `for i in range(...)` loop with the loop's int as an argument,
    # by the function's qualified name (what recompile rules read about how code is called).
    varying_calls: dict[str, list["VaryingCall"]] = field(default_factory=dict)
    # function qualname here ("Model.forward", "scale") -> per parameter position (`self` counted),
    # what every call BREAKSCAN_TARGETS declares passes there, when it is written out (a number,
    # a string, None, a tensor a torch function makes); None where the calls do not say
    declared_arguments: dict[str, tuple[Kind | ModuleValue | None, ...]] = field(default_factory=dict)
    # The declared calls, as written, when each makes its tensors at random (`"[torch.randn(4, 16),
    # torch.randn(4, 16)]"`): their data differs from call to call (BR013); "" otherwise.
    varying_data: str = ""
    # class name here ("FadeIn") -> the methods the steps between its declared calls call on the
    # object or on an object it holds (`lambda m: m.pool.set_type("max")`): the attribute path
    # (`("pool",)`), the method, and the step as written
    declared_steps: dict[str, list[tuple[tuple[str, ...], str, str]]] = field(default_factory=dict)
    # class name here -> the attributes such steps set with `setattr` on the object or an object
    # it holds (`lambda m: setattr(m.config, "temperature", 0.05)`): the path to it, the attribute,
    # and the step as written
    declared_step_stores: dict[str, list[tuple[tuple[str, ...], str, str]]] = field(default_factory=dict)
    # qualified class (or "*": any) -> the attributes a step function sets on every module of that
    # class the object holds (`for m in model.modules(): if isinstance(m, Quantizer): m.calibrating
    # = False`), each with the step as written
    declared_class_stores: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # class names here whose declared calls have steps between them
    stepped_classes: set[str] = field(default_factory=set)
    # the module's functions such steps call (`lambda m: set_fast_gelu(False)`) -> the step as written
    declared_step_functions: dict[str, str] = field(default_factory=dict)
    # -> each such step, with the arguments of its call that are literals, by position and by keyword
    # (others left out): `set_flag("use_sdpa", False)` gives `({0: "use_sdpa", 1: False}, {})`
    declared_step_arguments: dict[str, list[tuple[str, dict[int, object], dict[str, object]]]] = field(
        default_factory=dict)
    call_sites: CallSites = field(default_factory=CallSites)
    # Module-level tables of classes or functions (`SOLVERS = {"dopri5": Dopri5Solver, ...}`, nested
    # dicts and `partial(f, ...)` of them): their qualified names.
    callable_tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Module-level type aliases: `DataType = Union[torch.Tensor, Boxes]`, `Pair: TypeAlias = ...`.
    type_aliases: dict[str, cst.BaseExpression] = field(default_factory=dict)
    # Module-level `name = 0` / `0.5` / `True` / `"sdpa"`: the kind of number or string it holds
    # (OTHER when its module-level assignments disagree).
    plain_globals: dict[str, Kind] = field(default_factory=dict)
    # Globals that only come to exist when a function assigns them (`global flag; flag = True`):
    # nothing at module level binds them (and no `import *` might).
    runtime_globals: frozenset[str] = frozenset()
    # Modules whose public names `from module import *` binds here (a package's `__init__`).
    star_imports: tuple[str, ...] = ()

    def disables(self, decorator: str) -> bool:
        """Whether `decorator` is a function of this module that hands the function it decorates to
        `torch.compiler.disable` (`wrapped = torch.compiler.disable(fn); return wraps(fn)(wrapped)`):
        what it decorates is disabled."""
        known = self.disabling.get(decorator)
        if known is not None:
            return known
        owner, _, name = decorator.rpartition(".")
        function = self.functions.get(name) if owner == self.name else None
        params = [*function.node.params.posonly_params, *function.node.params.params][:1] if function else []
        found = function is not None and bool(params) and any(
            self.qualify(dotted_name(call.func)) in DISABLE_NAMES and call.args and call.args[0].keyword is None
            and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == params[0].name.value
            for call in find_nodes(function.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)))
        self.disabling[decorator] = found
        return found

    def qualify(self, dotted: str | None, local_imports: dict[str, str] | None = None) -> str | None:
        """Qualified name of a dotted expression as seen at module level, or None if local."""
        if not dotted:
            return None
        head, _, rest = dotted.partition(".")
        if local_imports and head in local_imports:
            base = local_imports[head]
        elif head in self.imports:
            base = self.imports[head]
        elif head in self.functions or head in self.classes or head in self.assignments:
            base = f"{self.name}.{head}"
        elif head in BUILTIN_NAMES:
            base = f"builtins.{head}"
        else:
            return None
        return f"{base}.{rest}" if rest else base


def is_abstract(function: cst.FunctionDef) -> bool:
    """Whether a function only states an interface: its body, past a docstring, is `pass`, `...`
    or `raise NotImplementedError`."""
    if isinstance(function.body, cst.SimpleStatementSuite):  # `def step(self): ...`
        statements = list(function.body.body)
    else:
        lines = function.body.body
        if not all(isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 for line in lines):
            return False
        statements = [line.body[0] for line in lines if isinstance(line, cst.SimpleStatementLine)]
    if isinstance(statements[0], cst.Expr) and isinstance(statements[0].value, cst.BaseString):
        statements = statements[1:]
    return bool(statements) and all(
        isinstance(s, cst.Pass) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.Ellipsis))
        or (isinstance(s, cst.Raise) and s.exc is not None
            and dotted_name(s.exc.func if isinstance(s.exc, cst.Call) else s.exc) == "NotImplementedError")
        for s in statements)


def build_index(module: cst.Module, name: str, path: str, package: str, text: str) -> ModuleIndex:
    index = ModuleIndex(name=name, path=path, package=package)
    for statement in module.body:
        _index_statement(index, statement, statement)
    if "compile" in text or "disable" in text or "config" in text:
        _CompileCallFinder(index).run(module)  # (it records the classes loops build, too)
    elif "range(" in text or "enumerate(" in text:
        for loop in find_nodes(module, (cst.For, *_COMPREHENSIONS)):
            _record_varying_builds(index, loop)
    index.declares_targets = "BREAKSCAN_TARGETS" in text
    index.negates_index = _NEGATED_INDEX.search(text) is not None
    if index.declares_targets:
        index.compiled_refs.update(_declared_targets(index, module))
    if "global " in text:
        index.runtime_globals = _runtime_globals(module)
        for name in _declared_globals(module):  # a function may switch it: not what is written out
            index.global_flags.pop(name, None)
    return index


_NEGATED_INDEX = re.compile(r"[\[,]\s*~")


def _declared_targets(index: ModuleIndex, module: cst.Module) -> set[str]:
    """The functions `BREAKSCAN_TARGETS` tells confirmation to compile, as qualified names
    (`"postprocess"`): the lint analyses what the run compiles. An entry that calls something
    (`"Detector()"`, `"build()"`) compiles what the call returns, a module whose `forward` is
    analysed anyway, not the function called."""
    targets: set[str] = set()
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not (isinstance(small, (cst.Assign, cst.AnnAssign)) and isinstance(small.value, cst.Dict) and any(
                    dotted_name(target) == "BREAKSCAN_TARGETS"
                    for target in ([t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]))):
                continue
            for element in small.value.elements:
                key = element.key if isinstance(element, cst.DictElement) else None
                entry = key.evaluated_value if isinstance(key, (cst.SimpleString, cst.ConcatenatedString)) else None
                try:
                    expression = ast.parse(entry.strip(), mode="eval").body if isinstance(entry, str) else None
                except SyntaxError:
                    continue
                name = index.qualify(ast.unparse(expression)) if isinstance(expression, (ast.Name, ast.Attribute)) else None
                if name is not None:
                    targets.add(name)
                inputs = element.value.evaluated_value if isinstance(element.value, (cst.SimpleString, cst.ConcatenatedString)) else None
                if isinstance(expression, ast.expr) and isinstance(inputs, str):
                    _declared_calls(index, expression, name, inputs)
    return targets


_TENSOR_FACTORIES = frozenset(f"torch.{name}" for name in ("randn", "rand", "zeros", "ones", "empty"))
# Factories whose sizes a declared call writes out: as the arguments, or as one tuple argument.
_SIZED_FACTORIES = _TENSOR_FACTORIES | {"torch.randint", "torch.full"}


def _declared_calls(index: ModuleIndex, entry: ast.expr, function: str | None, inputs: str) -> None:
    """The calls a target's declared inputs make (`"[(x, 4), (x, 6)]"`, read, not run): an int or
    float argument that differs from call to call is a varying number (BR002, BR007), and a tensor
    made by a torch factory with other sizes a varying shape (BR008)."""
    offset = 0
    evaluating = None  # the mode a chained `.eval()` / `.train(...)` leaves the object in
    if isinstance(entry, ast.Call) and isinstance(entry.func, ast.Name) and entry.func.id in index.functions:
        entry = _HelpersInlined(index).visit(entry)  # `eval_model()` that returns `Net().eval()`
    while isinstance(entry, ast.Call) and isinstance(entry.func, ast.Attribute) and isinstance(entry.func.value, ast.Call):
        if evaluating is None and entry.func.attr in ("eval", "train"):
            evaluating = entry.func.attr == "eval" or _turns_training_off(entry)
        entry = entry.func.value  # `Model().eval()`, `Net().freeze(True)`: methods that hand the object back
    if isinstance(entry, ast.Call) and isinstance(entry.func, (ast.Name, ast.Attribute)):
        built = index.qualify(ast.unparse(entry.func))
        if built is None or built.removeprefix(f"{index.name}.") not in index.classes:
            return
        function, key, offset = f"{built}.forward", built, 1  # `self` comes first
    else:
        key = function
    try:
        # Comprehensions again once helpers are inlined (`molecule(3)` returning `[... for _ in range(n)]`).
        value = _NumbersFolded().visit(_ComprehensionsExpanded().visit(_HelpersInlined(index).visit(
            _ComprehensionsExpanded().visit(ast.parse(inputs.strip(), mode="eval").body))))
    except SyntaxError:
        return
    written = value.elts if isinstance(value, ast.List) else [value]
    steps = {id(item): step for item in written if (step := _as_step(item, index)) is not None}
    items = [item for item in written if id(item) not in steps]
    evaluating = bool(evaluating)  # a module starts in training mode
    for item in (item for item in written if id(item) in steps) if len(items) > 1 else ():
        step, shown = steps[id(item)], ast.unparse(item)
        if offset:
            index.stepped_classes.add(key.removeprefix(f"{index.name}."))
        for path, attribute in _step_stores(step) if offset else ():
            index.declared_step_stores.setdefault(key.removeprefix(f"{index.name}."), []).append(
                (path, attribute, shown))
        for held, attribute in _stores_on_modules(item, index) if offset else ():
            index.declared_class_stores.setdefault(held, []).append((attribute, shown))
        for path, called in _step_calls(step):
            if path == () and offset and called in ("eval", "train"):
                # `lambda m: m.eval()` between calls: the module runs in both modes (BR003)
                off = called == "eval" or _turns_training_off(step.body)
                if off != evaluating:
                    index.call_sites.mode_flips.setdefault(key, shown)
                evaluating = off
            elif path is not None and offset:
                index.declared_steps.setdefault(key.removeprefix(f"{index.name}."), []).append(
                    (path, called, shown))
            elif path is None and (qualified := index.qualify(called)) is not None:
                index.declared_step_functions.setdefault(qualified, shown)
                for call in _calls_named(step, called):
                    index.declared_step_arguments.setdefault(qualified, []).append(
                        (shown, *_literal_arguments(call)))
    if len(items) > 1 and all(_makes_random_tensor(item, index) for item in items):
        index.varying_data = f"{ast.unparse(entry)} called with {', '.join(ast.unparse(item) for item in items)}"
    if function is None or key is None or not items:
        return
    # Each call's arguments by position (`self` not counted): a tuple's, or a dict's by the names
    # of the parameters (`dict(x=x, iters=4)`, `{"x": x}`); a step between calls is a lambda.
    parameters = _parameter_names(index, function.removeprefix(f"{index.name}."), offset)
    calls = [_call_arguments(item, parameters) for item in items]
    # A parameter some calls give and others leave to its default: those get the default (unless a
    # call's arguments are what a function of the module returns, which may be a tuple of them all).
    defaults = {} if any(isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id in index.functions
                         for item in items) else _parameter_defaults(index, function.removeprefix(f"{index.name}."), offset)
    given = set().union(*calls)
    calls = [{**{p: d for p, d in defaults.items() if p in given}, **call} for call in calls]
    every = sorted(set.intersection(*(set(call) for call in calls)))  # positions every call gives
    index.declared_arguments[function.removeprefix(f"{index.name}.")] = (None,) * offset + tuple(
        (VARYING_OBJECT if _names_other_objects([call[position] for call in calls], index) else
         _declared_object([call[position] for call in calls], index) or
         _declared_instance([call[position] for call in calls], index) or
         _joined_kinds([_declared_kind(call[position], index) for call in calls], [call[position] for call in calls]))
        if position in every else None for position in range(max(every, default=-1) + 1))
    if len(calls) < 2:
        return
    source = f"{ast.unparse(entry)} called with {', '.join(ast.unparse(item) for item in items)}"
    for position in every:
        dtypes = [_declared_dtype(call[position], index) for call in calls]
        if None not in dtypes and len(set(dtypes)) > 1:
            index.call_sites.varying_dtypes.setdefault(key, (source, tuple(d for d in dtypes if d is not None)))
        grads = {_declared_requires_grad(call[position], index) for call in calls}
        if grads == {True, False}:
            index.call_sites.varying_grads.setdefault(key, source)
        layouts = {_declared_memory_format(call[position], index) for call in calls}
        if None not in layouts and len(layouts) > 1:
            index.call_sites.varying_layouts.setdefault(key, source)
        signatures = [_literal_signature(call[position], index) for call in calls]
        if any(s is None for s in signatures) or len({s[0] for s in signatures}) != 1 or len(set(signatures)) < 2:
            continue
        if signatures[0][0] == "shape":  # varying numbers are kinds of their own (`_joined_kinds`)
            index.call_sites.varying_shapes.setdefault(key, (source, None))


_RANDOM_FACTORIES = frozenset(f"torch.{name}" for name in (
    "randn", "rand", "randint", "randperm", "randn_like", "rand_like", "randint_like", "normal", "bernoulli"))


def _makes_random_tensor(call: ast.expr, index: ModuleIndex) -> bool:
    """Whether a declared call's arguments make a tensor at random (each call its own)."""
    return any(isinstance(node, ast.Call) and index.qualify(ast.unparse(node.func)) in _RANDOM_FACTORIES
               for node in ast.walk(call))


def _parameter_names(index: ModuleIndex, function: str, offset: int) -> list[str]:
    """The positional parameters of a function or method defined in the module, `self` left out."""
    owner, _, name = function.rpartition(".")
    defined = index.classes[owner].methods.get(name) if owner in index.classes else index.functions.get(function)
    if defined is None:
        return []
    params = defined.node.params
    return [p.name.value for p in (*params.posonly_params, *params.params)][offset:]


def _parameter_defaults(index: ModuleIndex, function: str, offset: int) -> dict[int, ast.expr]:
    """The defaults of those parameters, by position (`self` not counted), as written."""
    owner, _, name = function.rpartition(".")
    defined = index.classes[owner].methods.get(name) if owner in index.classes else index.functions.get(function)
    if defined is None:
        return {}
    params = defined.node.params
    found = {}
    for position, param in enumerate([*params.posonly_params, *params.params][offset:]):
        if param.default is not None and (default := _as_ast(param.default)) is not None:
            found[position] = default
    return found


def _call_arguments(call: ast.expr, parameters: list[str]) -> dict[int, ast.expr]:
    """A declared call's arguments by position: a tuple's items, a dict's values at the positions
    of the parameters its keys name (`dict(x=x, iters=4)` too), or the one argument."""
    if isinstance(call, ast.Tuple):
        return dict(enumerate(call.elts))
    if isinstance(call, ast.Dict):
        named = [(k.value, v) for k, v in zip(call.keys, call.values) if isinstance(k, ast.Constant)]
    elif isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "dict" and not call.args:
        named = [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None]
    else:
        return {0: call}
    return {parameters.index(name): value for name, value in named if name in parameters}


def _turns_training_off(call: ast.expr) -> bool:
    """`m.train(False)`."""
    return isinstance(call, ast.Call) and bool(call.args) and (
        isinstance(call.args[0], ast.Constant) and call.args[0].value is False)


class _HelpersInlined(ast.NodeTransformer):
    """Declared inputs as the module's own helpers make them: a call of a function of the module
    whose body returns one expression (`images_for_saliency()`, `annealed(1)`), after assigning
    names only, is that expression, its locals replaced by what they hold and its parameters by
    what the call gives them (or their defaults)."""

    _DEPTH = 3  # helpers calling helpers

    def __init__(self, index: ModuleIndex, depth: int = 0) -> None:
        self.index = index
        self.depth = depth

    def visit_Name(self, node: ast.Name) -> ast.expr:
        """A module-level tensor the declaration names (`_mask` for `_mask = torch.ones(2, 10,
        dtype=torch.bool)`): the call that made it."""
        made = self.index.global_made.get(node.id) if isinstance(node.ctx, ast.Load) else None
        if made is None or node.id in self.index.functions or node.id in self.index.classes:
            return node
        expression = _as_ast(made)
        return node if expression is None else ast.copy_location(expression, node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        returned = self._returned(node) if self.depth < self._DEPTH else None
        if returned is None:
            return node
        expression, parameters, spread = returned
        given = dict(zip(parameters, node.args)) | {k.arg: k.value for k in node.keywords if k.arg is not None}
        extra = [ast.keyword(arg=name, value=value) for name, value in given.items() if name not in parameters]
        if (extra and spread is None) or any(k.arg is None for k in node.keywords) or any(
                parameters[name] is None for name in parameters if name not in given):
            return node  # a parameter given nothing: not a call of this signature
        substituted = _Substituted({name: given.get(name) or parameters[name] for name in parameters}).visit(expression)
        if spread is not None:  # `RoutingConfig(top_k=top_k, **kw)`: what the call gave beyond the parameters
            substituted = _KeywordsSpread(spread, extra).visit(substituted)
        return ast.copy_location(_HelpersInlined(self.index, self.depth + 1).visit(substituted), node)

    def _returned(self, call: ast.Call) -> tuple[ast.expr, dict[str, ast.expr | None], str | None] | None:
        """The expression the called function returns, its parameters with their defaults, and the
        name of its `**kwargs`, which the expression only spreads into calls (`f(**kw)`)."""
        defined = _function_ast(call.func.id if isinstance(call.func, ast.Name) else None, self.index)
        if defined is None or defined.decorator_list or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        body = defined.body[1:] if ast.get_docstring(defined) is not None else defined.body
        arguments = defined.args
        if (not body or not isinstance(body[-1], ast.Return) or body[-1].value is None
                or arguments.vararg or arguments.posonlyargs or len(call.args) > len(arguments.args)):
            return None
        spread = arguments.kwarg.arg if arguments.kwarg is not None else None
        if spread is not None and (body[:-1] or _reads_other_than_spread(body[-1].value, spread)):
            return None
        held = self._locals(body[:-1])
        named = {a.arg for a in (*arguments.args, *arguments.kwonlyargs)} | set(held or ())
        if held is None or any(_binds_any(statement, named) for statement in body):
            return None  # names the substitution could not tell apart
        positional = [a.arg for a in arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        parameters = dict(zip(positional, defaults)) | {
            a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)}
        return _Substituted(dict(held)).visit(body[-1].value), parameters, spread

    def _locals(self, statements: list[ast.stmt]) -> dict[str, ast.expr] | None:
        """What each local of a helper holds before its `return`, as an expression of its parameters
        (`images, labels = clean_batch()`, then `x = images * 2`); None when the helper does
        anything but assign names."""
        held: dict[str, ast.expr] = {}
        for statement in statements:
            if _writes_into_made(statement, held):
                continue  # `ids[:, n:] *= keep`: the tensor a call made, changed in place, is still one
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                return None
            target, value = statement.targets[0], _Substituted(dict(held)).visit(statement.value)
            if isinstance(target, ast.Name):
                held[target.id] = value
            elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                made = _HelpersInlined(self.index, self.depth + 1).visit(value)
                if not (isinstance(made, ast.Tuple) and len(made.elts) == len(target.elts)):
                    return None
                held.update((e.id, item) for e, item in zip(target.elts, made.elts) if isinstance(e, ast.Name))
            else:
                return None
        return held


def _writes_into_made(statement: ast.stmt, held: dict[str, ast.expr]) -> bool:
    """An assignment into part of a local that a call made (`ids[1, 0] = n - 1`)."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target] if isinstance(
        statement, ast.AugAssign) else []
    return bool(targets) and all(
        isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
        and isinstance(held.get(target.value.id), ast.Call) for target in targets)


def _binds_any(node: ast.AST, names: set[str]) -> bool:
    """Whether a lambda, comprehension or `:=` in the node binds one of the names."""
    for inner in ast.walk(node):
        bound = [a.arg for a in (*inner.args.args, *inner.args.kwonlyargs)] if isinstance(inner, ast.Lambda) else [
            n.id for n in ast.walk(inner.target) if isinstance(n, ast.Name)] if isinstance(
            inner, (ast.comprehension, ast.NamedExpr)) else []
        if names.intersection(bound):
            return True
    return False


def _reads_other_than_spread(expression: ast.expr, name: str) -> bool:
    """Whether the expression reads `name` but as a call's `**name`."""
    spread = {id(k.value) for call in ast.walk(expression) if isinstance(call, ast.Call)
              for k in call.keywords if k.arg is None}
    return any(isinstance(n, ast.Name) and n.id == name and id(n) not in spread for n in ast.walk(expression))


class _KeywordsSpread(ast.NodeTransformer):
    """`f(a, **kw)` with the keywords `kw` holds written out."""

    def __init__(self, name: str, keywords: list[ast.keyword]) -> None:
        self.name = name
        self.keywords = keywords

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        node.keywords = [written for k in node.keywords for written in (
            self.keywords if k.arg is None and isinstance(k.value, ast.Name) and k.value.id == self.name else [k])]
        return node


class _Substituted(ast.NodeTransformer):
    def __init__(self, given: dict[str, ast.expr | None]) -> None:
        self.given = given

    def visit_Name(self, node: ast.Name) -> ast.expr:
        replacement = self.given.get(node.id)
        return replacement if replacement is not None and isinstance(node.ctx, ast.Load) else node


class _ComprehensionsExpanded(ast.NodeTransformer):
    """A list comprehension over a `range` of written-out bounds as the list it makes
    (`[make_graph() for _ in range(4)]`, `[(x, schedule(e)) for e in range(3)]`), each element
    given its loop number; a long one is left as it is."""

    _LONGEST = 32

    def visit_ListComp(self, node: ast.ListComp) -> ast.expr:
        self.generic_visit(node)
        if len(node.generators) != 1:
            return node
        loop = node.generators[0]
        iterated = _NumbersFolded().visit(loop.iter)
        bounds = [_number(a) for a in iterated.args] if isinstance(iterated, ast.Call) and isinstance(
            iterated.func, ast.Name) and iterated.func.id == "range" and not iterated.keywords else [None]
        if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name) or not 1 <= len(bounds) <= 2 or any(
                not isinstance(b, int) for b in bounds):
            return node
        numbers = range(*[int(b) for b in bounds if b is not None])
        if len(numbers) > self._LONGEST:
            return node
        name = loop.target.id
        return ast.copy_location(ast.List(elts=[_Substituted({name: ast.Constant(i)}).visit(copy.deepcopy(node.elt))
                                                for i in numbers], ctx=ast.Load()), node)


class _NumbersFolded(ast.NodeTransformer):
    """Arithmetic on number literals as the number it gives (`-2.0`, `4.0 - 3.0 * 1 / 3`), a
    conditional on a written-out bool as the branch it takes (a helper's `x if channels_last
    else y`, given `channels_last=True`), and lists written out and added as the one list."""

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant) and isinstance(node.test.value, bool):
            return node.body if node.test.value else node.orelse
        return node

    _OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
                  ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Add) and isinstance(node.left, ast.List) and isinstance(node.right, ast.List):
            return ast.copy_location(ast.List(elts=[*node.left.elts, *node.right.elts], ctx=ast.Load()), node)  # calls, then more
        left, right = _number(node.left), _number(node.right)
        compute = self._OPERATORS.get(type(node.op))
        if left is None or right is None or compute is None or (isinstance(node.op, ast.Pow) and abs(right) > 64):
            return node
        try:
            return ast.copy_location(ast.Constant(compute(left, right)), node)
        except (ArithmeticError, ValueError):
            return node

    _BUILTINS = {"min": min, "max": max, "abs": abs, "round": round, "int": int, "float": float}

    def visit_Call(self, node: ast.Call) -> ast.expr:
        """`min(epoch, warmup)` of numbers."""
        self.generic_visit(node)
        numbers = [_number(a) for a in node.args]
        compute = self._BUILTINS.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if compute is None or node.keywords or not numbers or any(n is None for n in numbers):
            return node
        try:
            return ast.copy_location(ast.Constant(compute(*numbers)), node)
        except (ArithmeticError, ValueError, TypeError):
            return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        number = _number(node.operand)
        if number is None or not isinstance(node.op, (ast.USub, ast.UAdd)):
            return node
        return ast.copy_location(ast.Constant(-number if isinstance(node.op, ast.USub) else number), node)


def _number(node: ast.expr) -> int | float | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _as_step(item: ast.expr, index: ModuleIndex) -> ast.Lambda | None:
    """A declared item that is a step between calls, as a lambda: itself, or a function of the
    module named there (`_toggle`, defined `def _toggle(m): m.cfg.normalize = False`), its simple
    statements rewritten as the expressions a lambda holds (a store as `setattr(...)`)."""
    if isinstance(item, ast.Lambda):
        return item
    defined = _function_ast(item.id if isinstance(item, ast.Name) else None, index)
    if defined is None or not defined.args.args or (
            len(defined.args.args) - len(defined.args.defaults) > 1):
        return None  # a step is given the object alone (`def prune_round(model, amount=0.3)`)
    done: list[ast.expr] = []
    for statement in defined.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            done.append(statement.value)
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Attribute):
            target = statement.targets[0]
            assert isinstance(target, ast.Attribute)
            done.append(ast.Call(ast.Name("setattr", ast.Load()), [target.value, ast.Constant(target.attr),
                                                                   statement.value], []))
    # ... and the call of the function itself, for what it changes beyond the object (module-level state)
    done.append(ast.Call(ast.Name(item.id, ast.Load()), [ast.Name(defined.args.args[0].arg, ast.Load())], []))
    given = ast.arguments(posonlyargs=[], args=defined.args.args[:1], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(given, ast.Tuple(done, ast.Load()))


def _function_ast(name: str | None, index: ModuleIndex) -> ast.FunctionDef | None:
    """A function of the module, by name, as Python's `ast` reads it (declared calls are read so)."""
    function = index.functions.get(name) if name is not None else None
    try:
        defined = ast.parse(_source(function.node)).body[0] if function is not None else None
    except SyntaxError:
        return None
    return defined if isinstance(defined, ast.FunctionDef) else None


def _stores_on_modules(item: ast.expr, index: ModuleIndex) -> list[tuple[str, str]]:
    """What a step function of the module sets on each module the object holds, in a loop over
    them (`for m in model.modules(): if isinstance(m, Quantizer): m.calibrating = False`): the
    qualified class it tests for ("*" for every module), with the attribute."""
    defined = _function_ast(item.id if isinstance(item, ast.Name) else None, index)
    if defined is None or not defined.args.args:
        return []
    given = defined.args.args[0].arg
    found = []
    for loop in (s for s in defined.body if isinstance(s, ast.For) and isinstance(s.target, ast.Name)):
        iterated = loop.iter
        if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)
                and iterated.func.attr in ("modules", "children") and isinstance(iterated.func.value, ast.Name)
                and iterated.func.value.id == given):
            continue
        name = loop.target.id
        for statement, held in _guarded_statements(loop.body, name, index):
            if isinstance(statement, ast.Assign) and all(
                    isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name
                    for t in statement.targets):
                found += [(held, t.attr) for t in statement.targets if isinstance(t, ast.Attribute)]
    return found


def _guarded_statements(body: list[ast.stmt], name: str, index: ModuleIndex) -> Iterator[tuple[ast.stmt, str]]:
    """The statements of a loop's body, each with the class an `if isinstance(name, Cls):` around
    it tests for ("*" outside one)."""
    for statement in body:
        test = statement.test if isinstance(statement, ast.If) else None
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == name
                and (tested := index.qualify(ast.unparse(test.args[1]))) is not None):
            yield from ((inner, tested) for inner in statement.body)
        else:
            yield statement, "*"


def _step_stores(step: ast.Lambda) -> list[tuple[tuple[str, ...], str]]:
    """`lambda m: setattr(m.config, "temperature", 0.05)`: the attributes a step sets, each with the
    path from the object it is given to the object that holds it (`(("config",), "temperature")`)."""
    if len(step.args.args) != 1:
        return []
    given = step.args.args[0].arg
    found = []
    for call in step.body.elts if isinstance(step.body, (ast.Tuple, ast.List)) else [step.body]:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr"
                and len(call.args) == 3 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)):
            continue
        path: list[str] = []
        holder = call.args[0]
        while isinstance(holder, ast.Attribute):
            path.insert(0, holder.attr)
            holder = holder.value
        if isinstance(holder, ast.Name) and holder.id == given:
            found.append((tuple(path), call.args[1].value))
    return found


def _step_calls(step: ast.Lambda) -> list[tuple[tuple[str, ...] | None, str]]:
    """What a step calls: a method of the object it is given, or of an object that one holds, with
    the attributes leading to it (`lambda m: m.grow()`: `((), "grow")`; `m.pool.set_type("max")`:
    `(("pool",), "set_type")`); or a function, by its dotted name (`lambda m: set_flag(False)`:
    `(None, "set_flag")`). Several calls: `lambda m: (m.a(), m.b(2))`."""
    if len(step.args.args) != 1:
        return []
    given = step.args.args[0].arg
    body = step.body
    found: list[tuple[tuple[str, ...] | None, str]] = []
    for call in body.elts if isinstance(body, (ast.Tuple, ast.List)) else [body]:
        if not isinstance(call, ast.Call):
            continue
        path: list[str] = []
        func = call.func
        while isinstance(func, ast.Attribute):
            path.insert(0, func.attr)
            func = func.value
        if isinstance(func, ast.Name) and func.id == given and path:
            found.append((tuple(path[:-1]), path[-1]))
        elif isinstance(func, ast.Name) and func.id != given:
            found.append((None, ".".join([func.id, *path])))
    return found


def _calls_named(step: ast.Lambda, dotted: str) -> list[ast.Call]:
    """The calls a step makes of the function written `dotted`."""
    return [node for node in ast.walk(step.body) if isinstance(node, ast.Call) and ast.unparse(node.func) == dotted]


def _literal_arguments(call: ast.Call) -> tuple[dict[int, object], dict[str, object]]:
    """The arguments of a call that are literals, by position and by keyword."""
    def literal(node: ast.expr) -> tuple[bool, object]:
        try:
            return True, ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False, None
    spread = next((i for i, node in enumerate(call.args) if isinstance(node, ast.Starred)), len(call.args))
    positional = {i: value for i, node in enumerate(call.args[:spread]) for known, value in [literal(node)] if known}
    keywords = {k.arg: value for k in call.keywords if k.arg is not None for known, value in [literal(k.value)] if known}
    return positional, keywords


# torch functions that make a tensor, as declared inputs are written (`torch.tensor(3.0)`).
_MAKES_TENSOR = _TENSOR_FACTORIES | frozenset(f"torch.{name}" for name in (
    "tensor", "randint", "arange", "linspace", "full", "randn_like", "rand_like", "zeros_like", "ones_like", "eye",
    "randperm", "as_tensor", "from_numpy", "stack", "cat"))
_LITERAL_KINDS: dict[type, Kind] = {bool: BOOL, int: INT, float: FLOAT, str: STR, type(None): NONE}


def _declared_kind(argument: ast.expr, index: ModuleIndex) -> Kind | None:
    """What a declared argument is, when written out: a literal's kind, a list or tuple of known
    ones, or a tensor a torch function makes (a method of one: `torch.randn(4).long()`); None when
    it is not known."""
    if isinstance(argument, ast.Constant):
        return _LITERAL_KINDS.get(type(argument.value))
    if isinstance(argument, (ast.List, ast.Tuple)):  # `["a query", "another"]`: a list of strings
        elements = [_declared_kind(element, index) for element in argument.elts]
        if not elements or any(kind is None for kind in elements) or any(
                isinstance(element, ast.Starred) for element in argument.elts):
            return None
        known = [kind for kind in elements if kind is not None]
        if isinstance(argument, ast.Tuple):
            return container(items=tuple(known), sort="tuple")
        held = known[0]
        for kind in known[1:]:
            held = join(held, kind)
        return container(sort="list", elements=held)
    if isinstance(argument, ast.Dict) and argument.keys and all(
            isinstance(key, ast.Constant) and isinstance(key.value, str) for key in argument.keys):
        values = [_declared_kind(value, index) for value in argument.values]  # `{"a": torch.ones(2)}`
        if all(kind is not None for kind in values):
            return container(keys=tuple((key.value, kind) for key, kind in zip(argument.keys, values)
                                        if kind is not None), sort="dict")
        return None
    operands = [argument.left, argument.right] if isinstance(argument, ast.BinOp) else [
        argument.left, *argument.comparators] if isinstance(argument, ast.Compare) else [
        argument.operand] if isinstance(argument, ast.UnaryOp) else []
    if any(_declared_kind(operand, index) in (TENSOR, SPARSE) for operand in operands):
        return TENSOR  # `torch.rand(8, 6) > 0.2`, `torch.arange(16) % 4`
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) and not isinstance(
            argument.func.value, ast.Call) and argument.func.attr not in METADATA_METHODS and (
            _declared_kind(argument.func.value, index) in (TENSOR, SPARSE)):
        return TENSOR  # `(a > 0).float()`: a method of a tensor computed
    if (isinstance(argument, ast.Call) and argument.args and _declared_kind(argument.args[0], index) in (TENSOR, SPARSE)
            and (qualified := index.qualify(ast.unparse(argument.func))) is not None
            and declared_kind(qualified) == TENSOR):
        return TENSOR  # `F.normalize(torch.randn(2, 3), dim=-1)`: what torch declares a function of one gives
    call = argument
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        call = call.func.value  # `torch.randn(4).long()`: a method of the tensor made
    if isinstance(call, ast.Call) and index.qualify(ast.unparse(call.func)) in _MAKES_TENSOR:
        if _sparse_made(argument):
            return SPARSE
        if (argument is call and index.qualify(ast.unparse(call.func)) == "torch.tensor" and call.args
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, (int, float))):
            return ZERO_DIM_INPUT  # `torch.tensor(50)`: one number
        sizes = _literal_signature(argument, index) if argument is call else None
        if (sizes is not None and sizes[0] == "shape" and isinstance(sizes[1], tuple) and len(sizes[1]) == 1) or (
                argument is call and index.qualify(ast.unparse(call.func)) in VECTOR_FACTORIES):
            return VECTOR  # `torch.full((4,), 500)`: one dimension
        return TENSOR
    return None


def _declared_instance(arguments: list[ast.expr], index: ModuleIndex) -> ModuleValue | None:
    """Objects every declared call builds of one class: the module's own (`DCN()`), or torch's
    (`torch.optim.Adagrad(params, lr=0.01)`), whose methods are then known."""
    built = {index.qualify(ast.unparse(a.func)) if isinstance(a, ast.Call) and isinstance(a.func, (ast.Name, ast.Attribute))
             else None for a in arguments}
    qualified = built.pop() if len(built) == 1 else None
    if qualified is None or not names_a_class(qualified):
        return None
    own = qualified.removeprefix(f"{index.name}.")
    if own in index.classes:
        return ModuleValue(frozenset({qualified}))
    # torch's tensor types build tensors (`torch.FloatTensor(2, 3)`, `nn.Parameter(...)`), and a
    # `torch.Size` is a shape: none of them is an object whose methods the catalogue probes.
    tensor_like = qualified.endswith(("Tensor", "Parameter", "Buffer")) or qualified == "torch.Size"
    return ModuleValue(frozenset({qualified})) if qualified.startswith("torch.") and not tensor_like else None


def _declared_object(arguments: list[ast.expr], index: ModuleIndex) -> ModuleValue | None:
    """Objects of one class of the module that the declared calls build with other constants
    (`RoutingConfig()`, then `RoutingConfig(top_k=1)`): an object whose differing attributes are
    varying values, which TorchDynamo guards where the compiled code first reads them."""
    if len(arguments) < 2 or not all(isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and not any(
            isinstance(given, ast.Starred) for given in a.args) and all(k.arg for k in a.keywords) for a in arguments):
        return None
    names = {a.func.id for a in arguments if isinstance(a, ast.Call) and isinstance(a.func, ast.Name)}
    info = index.classes.get(names.pop()) if len(names) == 1 else None
    if info is None:
        return None
    varying = []
    for position, (parameter, attribute, default) in enumerate(_constructor_fields(info)):
        given = [a.args[position] if position < len(a.args) else next(
            (k.value for k in a.keywords if k.arg == parameter), default) for a in arguments if isinstance(a, ast.Call)]
        constants = [value.value for value in given if isinstance(value, ast.Constant)]
        if attribute is None or len(constants) < len(given) or len(set(map(repr, constants))) < 2:
            continue
        kinds = {type(constant) for constant in constants}
        ints = VARYING_INTS if len(set(constants)) > 2 else VARYING_INT
        kind = (VARYING_BOOL if kinds == {bool} else VARYING_STR if kinds == {str} else ints if kinds == {int}
                else VARYING_FLOAT if kinds <= {int, float} else None)
        if kind is not None:
            varying.append((attribute, kind))
    return ModuleValue(frozenset({f"{index.name}.{info.name}"}), fields=tuple(varying)) if varying else None


def _constructor_fields(info: ClassInfo) -> list[tuple[str, str | None, ast.expr | None]]:
    """What a class's constructor takes, in order: each parameter, the attribute it sets (a
    record's field is its own; `__init__` stores `self.top_k = top_k`), and its default."""
    if info.record:
        defaults = {statement.target.value: statement.value for line in info.node.body.body
                    if isinstance(line, cst.SimpleStatementLine) for statement in line.body
                    if isinstance(statement, cst.AnnAssign) and isinstance(statement.target, cst.Name)
                    and statement.value is not None}
        return [(name, name, _as_ast(defaults[name]) if name in defaults else None) for name in info.annotated]
    init = info.methods.get("__init__")
    if init is None:
        return []
    stored = {parameter: attribute for attribute, parameter in info.attr_params.items()}
    return [(param.name.value, stored.get(param.name.value), _as_ast(param.default) if param.default else None)
            for param in [*init.node.params.posonly_params, *init.node.params.params][1:]]


def _as_ast(node: cst.BaseExpression) -> ast.expr | None:
    try:
        return ast.parse(_source(node).strip(), mode="eval").body
    except SyntaxError:
        return None


def _sparse_made(argument: ast.expr) -> bool:
    """`torch.eye(4).to_sparse()`: a method in the chain makes it sparse."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SPARSE_METHODS
               for node in ast.walk(argument))


def _names_other_objects(arguments: list[ast.expr], index: ModuleIndex) -> bool:
    """Whether the declared calls name different objects here, each a function or class of the
    module, or something of torch's that is no tensor maker's result (`F.silu`, `torch.float16`,
    `nn.GELU`): TorchDynamo guards on which one it is."""
    named = set()
    for argument in arguments:
        if not isinstance(argument, (ast.Name, ast.Attribute)):
            return False
        qualified = index.qualify(ast.unparse(argument))
        own = (qualified or "").removeprefix(f"{index.name}.")
        if qualified is None or not (own in index.functions or own in index.classes or qualified.startswith("torch.")):
            return False
        named.add(qualified)
    return len(named) > 1


def _joined_kinds(kinds: list[Kind | None], arguments: list[ast.expr]) -> Kind | None:
    """One kind for what every call passes: the same kind (strings that differ: a varying one), or
    a tensor or None (an optional tensor)."""
    literals = [_literal_container(argument) for argument in arguments]
    if None not in literals and len(set(map(repr, literals))) > 1:
        return VARYING_LITERAL  # `["a"]`, then `["a", "b"]`
    if all(isinstance(argument, (ast.List, ast.Tuple)) and kind == TENSORS for argument, kind in zip(arguments, kinds)) \
            and len({len(argument.elts) for argument in arguments if isinstance(argument, (ast.List, ast.Tuple))}) > 1:
        return VARYING_LENGTH  # `[bag(), bag()]`, then `[bag(), bag(), bag()]`
    known = set(kinds)
    if None in known:
        return None
    if len(known) == 1:
        kind = known.pop()
        texts = {argument.value for argument in arguments if isinstance(argument, ast.Constant)}
        if len(texts) > 1 and kind in (STR, INT, FLOAT, BOOL):
            ints = VARYING_INTS if len(texts) > 2 else VARYING_INT
            return {STR.name: VARYING_STR, INT.name: ints, FLOAT.name: VARYING_FLOAT, BOOL.name: VARYING_BOOL}[kind.name]
        return kind if len({k.name for k in kinds if k is not None}) == 1 else TENSOR  # sparse on some calls only
    return VARYING_OPTIONAL if known == {TENSOR, NONE} else None  # a tensor on some calls, None on others


# The dtype torch's factories make when not told (`torch.get_default_dtype()` left as it is).
_FACTORY_DTYPES = {**{f"torch.{name}": "float32" for name in ("randn", "rand", "zeros", "ones", "empty", "full",
                                                               "linspace", "randn_like", "rand_like")},
                   "torch.randint": "int64", "torch.randperm": "int64"}
# Tensor methods that cast to a dtype, and the dtype.
_CAST_METHODS = {"half": "float16", "bfloat16": "bfloat16", "double": "float64", "float": "float32", "long": "int64",
                 "int": "int32", "bool": "bool"}


def _literal_container(argument: ast.expr) -> object | None:
    """A list, tuple, dict or set written out of constants (`["sentiment", "topic"]`)."""
    if not isinstance(argument, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return None
    try:
        return ast.literal_eval(argument)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _declared_dtype(argument: ast.expr, index: ModuleIndex) -> str | None:
    """The dtype of a tensor a declared argument makes, where it is written out
    (`torch.randn(2, 8, dtype=torch.float64)`, `torch.randn(4).half()`, `.to(torch.bfloat16)`)."""
    if not isinstance(argument, ast.Call):
        return None
    if isinstance(argument.func, ast.Attribute) and isinstance(argument.func.value, ast.Call):
        method = argument.func.attr
        if method in _CAST_METHODS and not argument.args:
            return _CAST_METHODS[method]
        if method == "to":
            written = [_dtype_named(a, index) for a in argument.args] + [
                _dtype_named(k.value, index) for k in argument.keywords if k.arg == "dtype"]
            return next((d for d in written if d is not None), None) or _declared_dtype(argument.func.value, index)
        return None
    function = index.qualify(ast.unparse(argument.func)) or ""
    if function in ("torch.from_numpy", "torch.as_tensor", "torch.tensor") and len(argument.args) == 1 and not (
            argument.keywords):
        return _numpy_dtype(argument.args[0], index)  # a NumPy array keeps its dtype
    made = _FACTORY_DTYPES.get(function)
    if made is None:
        return None
    given = next((k.value for k in argument.keywords if k.arg == "dtype"), None)
    return made if given is None else _dtype_named(given, index)


def _numpy_dtype(array: ast.expr, index: ModuleIndex) -> str | None:
    """The dtype of an array a NumPy call makes, where it is written out (`np.random.randn(4, 8)`:
    float64; `.astype(np.float32)`)."""
    if not isinstance(array, ast.Call):
        return None
    if isinstance(array.func, ast.Attribute) and array.func.attr == "astype" and len(array.args) == 1:
        named = index.qualify(ast.unparse(array.args[0])) or ""
        return named.removeprefix("numpy.") if named.startswith("numpy.") and named.count(".") == 1 else None
    function = index.qualify(ast.unparse(array.func)) or ""
    given = next((k.value for k in array.keywords if k.arg == "dtype"), None)
    if given is not None:
        named = index.qualify(ast.unparse(given)) or ""
        return named.removeprefix("numpy.") if named.startswith("numpy.") and named.count(".") == 1 else None
    return _NUMPY_DTYPES.get(function)


# NumPy functions and the dtype they make when not told: NumPy's default float is float64.
_NUMPY_DTYPES = {**{f"numpy.{name}": "float64" for name in (
    "random.randn", "random.rand", "random.random", "random.normal", "random.uniform", "random.standard_normal",
    "zeros", "ones", "empty", "linspace")}, "numpy.random.randint": "int64"}


def _declared_requires_grad(argument: ast.expr, index: ModuleIndex) -> bool | None:
    """Whether a tensor a declared argument makes requires grad, where it is written out
    (`torch.randn(4, 8).requires_grad_()`, `torch.zeros(3, requires_grad=True)`); None when the
    argument is no tensor made there."""
    while isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) and isinstance(
            argument.func.value, ast.Call):
        method = argument.func.attr
        if method == "requires_grad_":  # the last one applied comes first
            given = argument.args[0] if argument.args else next(
                (k.value for k in argument.keywords if k.arg == "requires_grad"), None)
            return True if given is None else (given.value if isinstance(given, ast.Constant) and isinstance(
                given.value, bool) else None)
        if method == "detach":
            return False
        argument = argument.func.value  # a cast or a view keeps what the tensor it is made from has
    if not (isinstance(argument, ast.Call) and index.qualify(ast.unparse(argument.func)) in _MAKES_TENSOR):
        return None
    given = next((k.value for k in argument.keywords if k.arg == "requires_grad"), None)
    if given is None:
        return False
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, bool) else None


def _declared_memory_format(argument: ast.expr, index: ModuleIndex) -> str | None:
    """The memory format of a tensor a declared argument makes, where it is written out
    (`torch.randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)`: "torch.channels_last";
    a factory's own tensor: "torch.contiguous_format"; `.permute(0, 2, 1, 3)` of one: that
    permutation of it); None when the argument is no tensor made there, or a step on it may change
    its layout in a way not read here."""
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) and isinstance(
            argument.func.value, ast.Call):
        method = argument.func.attr
        given = next((k.value for k in argument.keywords if k.arg == "memory_format"), None)
        if method in ("contiguous", "to") and given is not None:  # the last one applied comes first
            return index.qualify(ast.unparse(given))
        if method == "contiguous":
            return "torch.contiguous_format"
        inner = _declared_memory_format(argument.func.value, index)
        if method in _LAYOUT_KEEPING or inner is None:
            return inner
        order = _permutation(argument)
        return None if order is None else inner if not order else f"{inner} {method}{order}"
    if not (isinstance(argument, ast.Call) and index.qualify(ast.unparse(argument.func)) in _MAKES_TENSOR):
        return None
    given = next((k.value for k in argument.keywords if k.arg == "memory_format"), None)
    return index.qualify(ast.unparse(given)) if given is not None else "torch.contiguous_format"


# Methods whose result has the strides of the tensor they are called on.
_LAYOUT_KEEPING = frozenset({"requires_grad_", "detach", "float", "double", "half", "bfloat16", "to", "cpu",
                             "clone", "abs", "neg", "mul", "add", "sub", "div"})


def _permutation(call: ast.Call) -> tuple[int, ...] | None:
    """The dimensions a `permute`/`transpose` call reorders, as written; () when it moves none, None
    when it is another method or its dimensions are not written out."""
    if call.func.attr == "t" and not call.args and not call.keywords:
        return (1, 0)  # a matrix's transpose
    try:
        dims = tuple(ast.literal_eval(argument) for argument in call.args)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])  # `permute((0, 2, 1))`
    if not dims or call.keywords or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return None
    if call.func.attr in ("transpose", "swapaxes", "swapdims") and len(dims) == 2:
        return () if dims[0] == dims[1] else dims
    if call.func.attr == "permute":
        return () if dims == tuple(range(len(dims))) else dims
    return None


def _dtype_named(node: ast.expr, index: ModuleIndex) -> str | None:
    """`torch.float64` -> "float64"."""
    name = index.qualify(ast.unparse(node)) if isinstance(node, (ast.Attribute, ast.Name)) else None
    if name is None or not name.startswith("torch.") or name.count(".") != 1:
        return None
    return _CAST_METHODS.get(name[6:], name[6:])  # `torch.half` is float16


def _literal_signature(argument: ast.expr, index: ModuleIndex) -> tuple[str, object] | None:
    """What a declared argument is, when it is written out: an int, a float, or the sizes of a
    tensor a torch factory makes (`torch.randn(2, 8)`); None for anything else."""
    try:
        number = ast.literal_eval(argument)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        number = None
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        return type(number).__name__, number
    made = index.qualify(ast.unparse(argument.func)) if isinstance(argument, ast.Call) else None
    if made == "torch.tensor" and isinstance(argument, ast.Call) and argument.args:
        return _nested_shape(argument.args[0])  # `torch.tensor([[3]])`
    if not isinstance(argument, ast.Call) or made not in _SIZED_FACTORIES:
        return None
    written = next((k.value for k in argument.keywords if k.arg == "size"), None)
    if made in _TENSOR_FACTORIES and written is None:
        sizes = [a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a] for a in argument.args]
    else:  # `torch.randint(0, 100, (2, 7))`, `torch.full((2, 3), 0.5)`: the size is one argument
        written = written or (argument.args[0] if made == "torch.full" else argument.args[-1] if argument.args else None)
        sizes = [written.elts] if isinstance(written, (ast.Tuple, ast.List)) else []
    try:
        return ("shape", tuple(ast.literal_eval(size) for group in sizes for size in group)) if sizes else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _nested_shape(data: ast.expr) -> tuple[str, object] | None:
    """The shape of a tensor made from nested lists of numbers as written (`[[3, 4]]`: (1, 2)); None
    when a level is ragged or holds anything else. A lone number is no shape: its value counts."""
    try:
        value = ast.literal_eval(data)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (list, tuple)):
        return None
    shape: list[int] = []
    level: list[object] = [value]
    while all(isinstance(item, (list, tuple)) for item in level):
        sizes = {len(item) for item in level}
        if len(sizes) != 1:
            return None
        shape.append(sizes.pop())
        level = [inner for item in level for inner in item]
    if not all(isinstance(item, (int, float)) for item in level):
        return None
    return "shape", tuple(shape)


def _runtime_globals(module: cst.Module) -> frozenset[str]:
    """Names functions declare `global`, which no module-level statement binds, nor a function the
    module calls at import."""
    declared = _declared_globals(module)
    if not declared:
        return frozenset()
    bound: set[str] = set()
    functions = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    for statement in module.body:  # `set_flags()` at module level: it has run by the time anything is compiled
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            for call in find_nodes(statement, (cst.Call,), prune=(cst.FunctionDef, cst.ClassDef)):
                if isinstance(call.func, cst.Name) and call.func.value in functions:
                    bound.update(_declared_globals(functions[call.func.value]))
    pending: list[cst.CSTNode] = list(module.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            bound.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                    return frozenset()  # it may bind any name
                bound.update(_bound_names(small))
        else:  # a compound statement at module level: its targets, and the blocks inside it
            bound.update(_bound_names(statement, within=(cst.BaseSuite,)))
            pending.extend(inner for suite in find_nodes(statement, (cst.BaseSuite,), prune=(cst.BaseSuite,))
                           if suite is not statement for inner in suite.body)
    return frozenset(declared - bound)


def _declared_globals(root: cst.CSTNode) -> set[str]:
    return {item.name.value for statement in find_nodes(root, (cst.Global,)) for item in statement.names}


def _bound_names(node: cst.CSTNode, within: tuple[type, ...] = ()) -> set[str]:
    """The names a statement binds: assignment, `for`, `with ... as`, `except ... as` and walrus
    targets, imports (not looking inside `within`: the blocks of a compound statement)."""
    names: set[str] = set()
    for found in find_nodes(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName,
                                   cst.NamedExpr, cst.ImportAlias, cst.CompFor), prune=within):
        if isinstance(found, cst.ImportAlias):
            alias = found.asname.name if found.asname is not None else None
            names.add(alias.value if isinstance(alias, cst.Name) else (dotted_name(found.name) or "").partition(".")[0])
            continue
        target = found.name if isinstance(found, cst.AsName) else found.target
        names.update(name.value for name in find_nodes(target, (cst.Name,), prune=(cst.Attribute, cst.Subscript)))
    return names


def _index_statement(index: ModuleIndex, statement: cst.CSTNode, top: cst.CSTNode) -> None:
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                index.imports.update(import_bindings(small, index.package))
                if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                    index.star_imports += (absolute_module(module_dotted(small.module), len(small.relative),
                                                           index.package),)
            elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                _index_assignment(index, small)
                _index_record_factory(index, small)
    elif isinstance(statement, cst.FunctionDef):
        info = FunctionInfo(index, statement.name.value, statement, top, decorators=_decorators(index, statement),
                            compile_settings=_decorator_settings(index, statement))
        index.functions[info.qualname] = info
    elif isinstance(statement, cst.ClassDef):
        _index_class(index, statement, top)
    elif isinstance(statement, (cst.If, cst.Try, cst.With)):
        # Imports and definitions under `if TYPE_CHECKING:`, `try: import x`, etc.
        imported = dict(index.imports)
        for block in _blocks(statement):
            for inner in block.body:
                _index_statement(index, inner, top)
            if isinstance(statement, cst.Try) and block is statement.body:
                imported = {name: bound for name, bound in index.imports.items() if imported.get(name) != bound}
        if isinstance(statement, cst.Try) and any(_catches_import_error(h) for h in statement.handlers):
            # `try: from scipy.spatial import cKDTree / except ImportError: cKDTree = None`: where the
            # package is installed (as the code expects), the import is what the name is.
            for name, bound in imported.items():
                index.imports[name] = bound
                index.assignments.pop(name, None)
                index.plain_globals.pop(name, None)


def _written_flag(index: ModuleIndex, value: cst.BaseExpression | None) -> bool | None:
    """`True`/`False`; `os.environ.get("X", "1") == "1"` (or `os.getenv`, `!=`) at the default it
    writes out; None for anything else."""
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return value.value == "True"
    if not (isinstance(value, cst.Comparison) and len(value.comparisons) == 1 and isinstance(value.left, cst.Call)
            and isinstance(value.comparisons[0].operator, (cst.Equal, cst.NotEqual))):
        return None
    call, compared = value.left, value.comparisons[0].comparator
    if index.qualify(dotted_name(call.func)) not in ("os.environ.get", "os.getenv") or len(call.args) != 2 or not (
            isinstance(call.args[1].value, cst.SimpleString) and isinstance(compared, cst.SimpleString)):
        return None
    same = call.args[1].value.evaluated_value == compared.evaluated_value
    return same if isinstance(value.comparisons[0].operator, cst.Equal) else not same


def _table_entries(index: ModuleIndex, table: cst.Dict) -> list[str | None]:
    """The qualified names a module-level dict maps its keys to, through nested dicts and
    `functools.partial(f, ...)` (which runs `f`); None for any other value."""
    named: list[str | None] = []
    for element in table.elements:
        value = element.value if isinstance(element, cst.DictElement) else None
        if isinstance(value, cst.Dict):
            named += _table_entries(index, value)
        elif isinstance(value, cst.Call) and index.qualify(dotted_name(value.func)) == "functools.partial" and (
                value.args and value.args[0].keyword is None and not value.args[0].star):
            named.append(index.qualify(dotted_name(value.args[0].value)))
        else:
            named.append(index.qualify(dotted_name(value)) if value is not None else None)
    return named


def _index_assignment(index: ModuleIndex, node: cst.Assign | cst.AnnAssign) -> None:
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    if node.value is not None and len(targets) == 1 and isinstance(targets[0], cst.Name) and (
            _is_type_expression(index, node.value) or (isinstance(node, cst.AnnAssign) and index.qualify(
                dotted_name(node.annotation.annotation)) in ("typing.TypeAlias", "typing_extensions.TypeAlias"))):
        index.type_aliases[targets[0].value] = node.value  # only read where an annotation names it
    if isinstance(node.value, cst.Dict) and len(targets) == 1 and isinstance(targets[0], cst.Name) and (
            node.value.elements):
        named = _table_entries(index, node.value)
        if all(named):
            index.callable_tables[targets[0].value] = tuple(name for name in named if name)
    called = ""
    aliased = _aliased(index, node.value) if node.value is not None else None
    built = node.value
    while (isinstance(built, cst.Call) and isinstance(built.func, cst.Attribute)
           and built.func.attr.value == "manual_seed" and isinstance(built.func.value, cst.Call)):
        built = built.func.value  # `torch.Generator().manual_seed(0)` is the generator it seeds
    if isinstance(built, cst.Call) and aliased is None:
        called = index.qualify(dotted_name(built.func)) or ""
    for target in targets:
        if not isinstance(target, cst.Name):
            continue
        if aliased is not None:  # another name for it: `no_trace = torch._dynamo.disable`
            index.imports[target.value] = aliased
            index.assignments.pop(target.value, None)
        else:
            index.imports.pop(target.value, None)  # rebound: no longer what was imported
            flag = _written_flag(index, node.value) if len(targets) == 1 and target.value not in index.assignments else None
            if flag is None:
                index.global_flags.pop(target.value, None)
            else:
                index.global_flags[target.value] = flag
            index.assignments[target.value] = called
            index.global_calls.pop(target.value, None)
            if called and isinstance(built, cst.Call) and len(targets) == 1:
                index.global_calls[target.value] = built
            index.global_made.pop(target.value, None)
            if isinstance(node.value, cst.Call) and len(targets) == 1:
                index.global_made[target.value] = node.value
            number = literal_kind(node.value) if node.value is not None else None
            known = index.plain_globals.get(target.value)
            if number in (INT, FLOAT, BOOL, STR) and known in (None, number):
                index.plain_globals[target.value] = number
            elif known is not None:
                index.plain_globals[target.value] = OTHER


# Generic types whose subscription makes a type alias (`Union[...]`, `list[...]`).
_GENERICS = CONTAINER_GENERICS | {"Union", "Optional", "Type", "type", "Callable", "Literal", "Annotated"}


def _is_type_expression(index: ModuleIndex, value: cst.BaseExpression) -> bool:
    """`Union[...]`, `Optional[...]`, `list[...]`, or a `|` of such types and names."""
    if isinstance(value, cst.Subscript):
        qualified = index.qualify(dotted_name(value.value)) or ""
        return qualified.rpartition(".")[2] in _GENERICS and qualified.partition(".")[0] in (
            "typing", "typing_extensions", "collections", "builtins")
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.BitOr):
        # `Tensor | None`; flags OR-ed together look the same, but only an annotation reads an alias.
        return all(_is_type_expression(index, side) or isinstance(side, (cst.Name, cst.Attribute))
                   for side in (value.left, value.right))
    return False


def _aliased(index: ModuleIndex, value: cst.BaseExpression) -> str | None:
    """The qualified name a module-level value is another name for: a dotted name the module
    imports or defines (`torch._dynamo.disable`), `getattr(<such a name>, "attr"[, default])`, or
    `functools.partial(<such a name>, ...)` (calling it calls that: `partial(warnings.warn,
    category=FutureWarning)` breaks where it is called, as `warnings.warn` does)."""
    if isinstance(value, cst.Call) and index.qualify(dotted_name(value.func)) == "functools.partial":
        first = value.args[0] if value.args else None
        return _aliased(index, first.value) if first is not None and not first.keyword and not first.star else None
    if isinstance(value, cst.Call) and index.qualify(dotted_name(value.func)) == "builtins.getattr":
        arguments = [a.value for a in value.args]
        if len(arguments) in (2, 3) and isinstance(arguments[1], cst.SimpleString):
            owner = index.qualify(dotted_name(arguments[0]))
            attribute = arguments[1].evaluated_value
            return f"{owner}.{attribute}" if owner and isinstance(attribute, str) and attribute.isidentifier() else None
        return None
    if isinstance(value, (cst.Name, cst.Attribute)) and not (isinstance(value, cst.Name) and value.value in (
            "None", "True", "False")):
        return index.qualify(dotted_name(value))
    return None


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    """`except ImportError:`, `except (ImportError, ModuleNotFoundError):`."""
    caught = handler.type
    names = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught] if caught else []
    return any(dotted_name(name) in ("ImportError", "ModuleNotFoundError") for name in names)


def _blocks(statement: cst.CSTNode):
    if isinstance(statement, cst.If):
        yield statement.body
        if statement.orelse is not None:
            yield from _blocks(statement.orelse) if isinstance(statement.orelse, cst.If) else [statement.orelse.body]
    elif isinstance(statement, cst.Try):
        yield statement.body
        for handler in statement.handlers:
            yield handler.body
        if statement.orelse is not None:
            yield statement.orelse.body
    elif isinstance(statement, cst.With):
        yield statement.body


def _decorators(index: ModuleIndex, node: cst.FunctionDef | cst.ClassDef) -> tuple[str, ...]:
    names = []
    for decorator in node.decorators:
        expression = decorator.decorator
        if isinstance(expression, cst.Call):
            expression = expression.func
        qualified = index.qualify(dotted_name(expression))
        if qualified:
            names.append(qualified)
    return tuple(names)


def _decorator_settings(index: ModuleIndex, node: cst.FunctionDef) -> DynamoSettings:
    builder = SettingsBuilder()
    fullgraph = False
    for decorator in node.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            continue
        called = index.qualify(dotted_name(call.func))
        if called in COMPILE_NAMES:
            fullgraph = fullgraph or _keyword_is_true(call, "fullgraph")
        elif called == CONFIG_PATCH:
            for argument in call.args:
                if argument.keyword is not None:
                    builder.assign(argument.keyword.value, _source(argument.value))
    return builder.build(fullgraph)


_MARK_DYNAMIC = frozenset({"torch._dynamo.mark_dynamic", "torch._dynamo.maybe_mark_dynamic",
                           "torch._dynamo.decorators.mark_dynamic"})
_CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.hstack", "torch.vstack"})
# Context managers that change the global state TorchDynamo guards (GLOBAL_STATE: grad mode, autocast).
_GLOBAL_STATE = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.grad_mode.no_grad",
                           "torch.autograd.grad_mode.inference_mode", "torch.autocast", "torch.amp.autocast",
                           "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})


class _CallSiteFinder:
    """Where the code outside the compiled code calls what it compiled: `.train()`/`.eval()` on a
    compiled module, calls inside and outside `torch.no_grad()`/`torch.autocast(...)`, and `torch.compile(...)` with
    a backend made anew on every run of the function or loop around it (`CallSites`)."""

    def __init__(self, finder: _CompileCallFinder, module: cst.Module):
        self.finder, self.index = finder, finder.index
        self.repeated = 0  # functions and loops around the visited node: code that runs many times
        self.changed_state = 0
        self.fresh_names: list[set[str]] = [set()]  # per function: names bound to a new object per run
        self.state_calls: dict[str, tuple[str | None, str | None]] = {}
        self.looping = 0  # loops and comprehensions around the visited node
        self.loop_ints: list[set[str]] = []  # per loop: its names bound to ints (`i` of range, enumerate)
        self.grown: list[set[str]] = []  # per loop: names it rebinds to a `torch.cat` of themselves
        self.iterated: dict[str, cst.BaseExpression] = {}  # loop target -> what it iterates
        self.classes: list[str] = []  # the class bodies around the visited node
        # names passed to `torch._dynamo.mark_dynamic`: their sizes are dynamic from the first compile
        self.marked_dynamic = {dotted_name(call.args[0].value) for call in find_nodes(module, (cst.Call,))
                               if call.args and self.index.qualify(dotted_name(call.func)) in _MARK_DYNAMIC}
        self.modes: dict[str, set[str]] = {}  # compiled module class -> "called", "train", "eval" as they come
        self.functions: list[str] = []  # the functions around the visited node, innermost last
        # torch.compile calls with a fresh backend in a function's body (not in a loop), by the
        # function's name: per call only if the function runs more than once (`finish`)
        self.fresh_in_function: dict[str, list[tuple[str, str]]] = {}
        self.called: Counter[str] = Counter()  # function and method names called, a loop's calls twice

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.repeated += 1
        self.fresh_names[-1].add(node.name.value)  # a nested def is a new function per run
        self.fresh_names.append(set())
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.repeated -= 1
        self.fresh_names.pop()
        self.functions.pop()

    def finish(self) -> None:
        """A function that compiles with a fresh backend recompiles only if it runs more than once:
        called in a loop, or from two places."""
        for function, compiles in self.fresh_in_function.items():
            if self.called[function] > 1:
                for qualified, source in compiles:
                    self.index.call_sites.fresh_backends.setdefault(qualified, source)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_For(self, node: cst.For) -> None:
        self.repeated += 1
        self._enter_loop([(node.target, node.iter)], self._grown_names(node.body))

    def leave_For(self, original_node: cst.For) -> None:
        self.repeated -= 1
        self._leave_loop()

    def _enter_comprehension(self, node: cst.BaseComp | cst.DictComp) -> None:
        # Its element comes before its `for` in the tree: the loop is entered first.
        loops, clause = [], node.for_in
        while clause is not None:
            loops.append((clause.target, clause.iter))
            clause = clause.inner_for_in
        self._enter_loop(loops)

    def _leave_comprehension(self, original_node: cst.BaseComp | cst.DictComp) -> None:
        self._leave_loop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave_comprehension

    def _grown_names(self, body: cst.BaseSuite) -> set[str]:
        """`tokens = torch.cat([tokens, next_token], dim=1)`: a tensor whose shape the loop changes."""
        grown = set()
        for node in find_nodes(body, (cst.Assign,)):
            value = node.value
            if not (isinstance(value, cst.Call) and value.args and len(node.targets) == 1
                    and isinstance(node.targets[0].target, cst.Name)
                    and self.index.qualify(dotted_name(value.func)) in _CONCATENATIONS):
                continue
            name = node.targets[0].target.value
            pieces = value.args[0].value
            if isinstance(pieces, (cst.List, cst.Tuple)) and any(
                    isinstance(e.value, cst.Name) and e.value.value == name for e in pieces.elements):
                grown.add(name)
        return grown

    def _enter_loop(self, loops: list[tuple[cst.BaseExpression, cst.BaseExpression]],
                    grown: set[str] | None = None) -> None:
        self.looping += 1
        self.grown.append(grown or set())
        ints: set[str] = set()
        for target, iterable in loops:
            called = self.index.qualify(dotted_name(iterable.func)) if isinstance(iterable, cst.Call) else None
            if called == "builtins.range" and isinstance(target, cst.Name):
                ints.add(target.value)
            elif (called == "builtins.enumerate" and isinstance(target, cst.Tuple) and len(target.elements) == 2
                  and isinstance(iterable, cst.Call) and iterable.args):
                index, item = (e.value for e in target.elements)
                if isinstance(index, cst.Name):
                    ints.add(index.value)
                if isinstance(item, cst.Name):
                    self.iterated[item.value] = iterable.args[0].value
            elif isinstance(target, cst.Name):
                self.iterated[target.value] = iterable
        self.loop_ints.append(ints)

    def _leave_loop(self) -> None:
        self.looping -= 1
        self.loop_ints.pop()
        self.grown.pop()

    def _shape_varies(self, argument: cst.BaseExpression) -> bool:
        """A tensor argument whose shape the enclosing loops change: a name they grow, or a slice
        bounded by a loop's int (`x[:, :t]`)."""
        if dotted_name(argument) in self.marked_dynamic or (
                isinstance(argument, cst.Subscript) and dotted_name(argument.value) in self.marked_dynamic):
            return False
        if isinstance(argument, cst.Name):
            return any(argument.value in names for names in self.grown)
        if isinstance(argument, cst.Subscript):
            ints = set().union(*self.loop_ints) if self.loop_ints else set()
            return any(isinstance(element.slice, cst.Slice) and any(
                isinstance(n, cst.Name) and n.value in ints for n in find_nodes(element.slice, (cst.Name,)))
                for element in argument.slice)
        return False

    def _classes_iterated(self, name: str | None) -> set[str]:
        """The classes built into what the loop variable `name` iterates: `self.layers` (in a class
        of this file) or `model.layers` (`model` an instance of one)."""
        iterable = self.iterated.get(name or "")
        if not (isinstance(iterable, cst.Attribute) and isinstance(iterable.value, cst.Name)):
            return set()
        owner = iterable.value.value
        if owner == "self" and self.classes:
            info = self.index.classes.get(self.classes[-1])
        else:
            qualified = self.finder.instances.get(owner, "")
            info = self.index.classes.get(qualified.removeprefix(f"{self.index.name}.")) if qualified else None
        return set(info.attr_classes.get(iterable.attr.value, ())) if info is not None else set()

    def _compiled_per_instance(self, compiled: cst.BaseExpression, call: cst.Call) -> None:
        if not self.looping:
            return
        if isinstance(compiled, cst.Call):
            qualified = self.index.qualify(dotted_name(compiled.func))
            classes = {qualified} if qualified and names_a_class(qualified) else set()
        else:
            classes = self._classes_iterated(dotted_name(compiled))
        for name in classes:
            self.index.call_sites.per_instance_compiles.setdefault(name, _source(call))

    def visit_While(self, node: cst.While) -> None:
        self.repeated += 1
        self._enter_loop([], self._grown_names(node.body))

    def leave_While(self, original_node: cst.While) -> None:
        self.repeated -= 1
        self._leave_loop()

    def visit_With(self, node: cst.With) -> None:
        self.changed_state += self._changes_global_state(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.changed_state -= self._changes_global_state(original_node)

    def _changes_global_state(self, node: cst.With) -> bool:
        for item in node.items:
            call = item.item
            func = call.func if isinstance(call, cst.Call) else call
            called = self.index.qualify(dotted_name(func))
            if called in _GLOBAL_STATE or (called == "torch.set_grad_enabled" and isinstance(call, cst.Call)
                                      and call.args and _source(call.args[0].value) == "False"):
                return True
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(self.fresh_names) > 1 and isinstance(node.value, (cst.Lambda, cst.Call)):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.fresh_names[-1].add(target.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if callee is not None:
            self.called[callee] += 2 if self.looping else 1
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner, method = func.value.value, func.attr.value
            if method in ("train", "eval") and owner in self.finder.modules_compiled:
                self._mode_set(self.finder.modules_compiled[owner], node, method)
            elif method == "compile" and owner in self.finder.instances:
                self.finder.module_handles[owner] = self.finder.modules_compiled[owner] = self.finder.instances[owner]
                self.finder.handle_dynamic[owner] = _keyword(node, "dynamic")
            elif method == "compile":
                self._compiled_per_instance(func.value, node)
        if self.index.qualify(dotted_name(func)) in COMPILE_NAMES:
            self._compile_call(node)
            if node.args:
                self._compiled_per_instance(node.args[0].value, node)
            return
        name = func.value if isinstance(func, cst.Name) else None
        compiled = (self.finder.module_handles.get(name) or (self.finder.compiled_handles.get(name) or (None,))[0]
                    if name else None)
        if compiled is not None:
            self.modes.setdefault(compiled, set()).add("called")
            if self.looping and any(self._shape_varies(a.value) for a in node.args if not a.star):
                dynamic = (self.finder.handle_dynamic.get(name) if name in self.finder.module_handles
                           else self.finder.compiled_handles[name][1])
                self.index.call_sites.varying_shapes.setdefault(compiled, (_source(node), dynamic))
            inside, outside = self.state_calls.get(compiled, (None, None))
            if self.changed_state:
                inside = inside or _source(node)
            else:
                outside = outside or _source(node)
            self.state_calls[compiled] = (inside, outside)
            if inside and outside:
                self.index.call_sites.state_switches.setdefault(compiled, (inside, outside))

    def _mode_set(self, module_class: str, call: cst.Call, method: str) -> None:
        """A compiled module that runs in both modes: `.train()` and `.eval()` both called on it,
        or `.eval()` (or `.train(False)`) after it was called in the training mode it starts in."""
        off = method == "eval" or (call.args and _source(call.args[0].value) == "False")
        seen = self.modes.setdefault(module_class, set())
        if (off and ("called" in seen or "train" in seen)) or (not off and "eval" in seen):
            self.index.call_sites.mode_flips.setdefault(module_class, _source(call))
        seen.add("eval" if off else "train")

    def _compile_call(self, node: cst.Call) -> None:
        backend = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "backend"), None)
        if not self.repeated or backend is None:
            return
        fresh = isinstance(backend, (cst.Lambda, cst.Call)) or (
            isinstance(backend, cst.Name) and any(backend.value in names for names in self.fresh_names[1:]))
        target = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "model"), None)
        if not fresh or target is None:
            return
        if isinstance(target, cst.Call):
            target = target.func
        name = dotted_name(target)
        qualified = self.finder.instances.get(name or "") or self.index.qualify(name)
        if qualified is None:
            return
        if self.looping or not self.functions:
            self.index.call_sites.fresh_backends.setdefault(qualified, _source(node))
        else:
            self.fresh_in_function.setdefault(self.functions[-1], []).append((qualified, _source(node)))


def _number_literal(node: cst.BaseExpression) -> str | None:
    """"int" or "float" for a number literal (signed too), else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    if isinstance(node, cst.Integer):
        return "int"
    if isinstance(node, cst.Float):
        return "float"
    return None


def _keyword(call: cst.Call, keyword: str) -> str | None:
    """The source of `keyword=...` in the call, if given."""
    return next((_source(a.value) for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)


def _keyword_is_true(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword and _source(a.value) == "True" for a in call.args)


def _source(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _index_class(index: ModuleIndex, node: cst.ClassDef, top: cst.CSTNode) -> None:
    bases = tuple(q for arg in node.bases if arg.keyword is None and (q := index.qualify(dotted_name(
        arg.value.value if isinstance(arg.value, cst.Subscript) else arg.value))))  # `Controller[State]`: Controller
    info = ClassInfo(index, node.name.value, node, bases)
    index.classes[info.name] = info
    if not isinstance(node.body, cst.IndentedBlock):
        return
    info.record = any(name in _RECORD_MAKERS for name in (*_decorators(index, node), *bases))
    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
                        and index.qualify(dotted_name(_unsubscripted(small.annotation.annotation))) not in _CLASS_VARIABLES):
                    info.annotated[small.target.value] = small.annotation.annotation
        if isinstance(statement, cst.FunctionDef):
            method = FunctionInfo(
                index, f"{info.name}.{statement.name.value}", statement, top, info.name, _decorators(index, statement),
                _decorator_settings(index, statement)
            )
            info.methods[statement.name.value] = method
            index.functions[method.qualname] = method
            if _is_setup_method(statement.name.value):
                _SelfAttributeCollector(index, info, statement).run(statement.body)
    _collect_called_from_init(index, info)


def _collect_called_from_init(index: ModuleIndex, info: ClassInfo) -> None:
    """A method `__init__` calls on `self` (`self._set_cos_sin_cache(max_len)`) sets up the object
    too, whatever its name: its stores are collected, its parameters of the kinds the call gives
    them where they declare none."""
    init = info.methods.get("__init__")
    if init is None:
        return
    init_parameters = {p.name.value: p for p in (*init.node.params.params, *init.node.params.kwonly_params)}
    done = {name for name in info.methods if _is_setup_method(name)}
    for call in find_nodes(init.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)):
        func = call.func
        if not (isinstance(func, cst.Attribute) and _is_self(func.value)) or func.attr.value in done:
            continue
        method = info.methods.get(func.attr.value)
        if method is None:
            continue
        done.add(func.attr.value)
        given: dict[str, Kind] = {}
        params = [p.name.value for p in (*method.node.params.posonly_params, *method.node.params.params)][1:]
        for position, argument in enumerate(call.args):
            if argument.star:
                break
            name = argument.keyword.value if argument.keyword is not None else (
                params[position] if position < len(params) else None)
            value = argument.value
            kind = literal_kind(value) or (parameter_kind(init_parameters[value.value])
                                           if isinstance(value, cst.Name) and value.value in init_parameters else None)
            if name is not None and isinstance(kind, Kind) and is_plain(kind):
                given[name] = kind
        _SelfAttributeCollector(index, info, method.node, given).run(method.node.body)


def _index_record_factory(index: ModuleIndex, node: cst.Assign | cst.AnnAssign) -> None:
    """`Point = collections.namedtuple("Point", "x y")` or `typing.NamedTuple("Point", [("x", Tensor)])`:
    a record class, as if written with a class statement, whose constructor takes the fields in
    order; a `collections.namedtuple` field holds what it is given (no annotation says more)."""
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    call = node.value
    if not (len(targets) == 1 and isinstance(targets[0], cst.Name) and isinstance(call, cst.Call)
            and len(call.args) >= 2 and all(a.keyword is None and not a.star for a in call.args[:2])):
        return
    maker = index.qualify(dotted_name(call.func))
    fields_given = call.args[1].value
    fields: dict[str, cst.BaseExpression | None] = {}
    if maker in _NAMEDTUPLE_FACTORIES:
        if isinstance(fields_given, cst.SimpleString) and isinstance(fields_given.evaluated_value, str):
            names = fields_given.evaluated_value.replace(",", " ").split()
        elif isinstance(fields_given, (cst.List, cst.Tuple)) and all(
                isinstance(e.value, cst.SimpleString) for e in fields_given.elements):
            names = [str(e.value.evaluated_value) for e in fields_given.elements]
        else:
            return
        fields = dict.fromkeys(name for name in names if name.isidentifier())
    elif maker in _TYPED_RECORD_FACTORIES and isinstance(fields_given, (cst.List, cst.Tuple)):
        for element in fields_given.elements:
            pair = element.value
            if not (isinstance(pair, cst.Tuple) and len(pair.elements) == 2
                    and isinstance(pair.elements[0].value, cst.SimpleString)):
                return
            fields[str(pair.elements[0].value.evaluated_value)] = pair.elements[1].value
    else:
        return
    name = targets[0].value
    info = ClassInfo(index, name, cst.ClassDef(name=cst.Name(name), body=cst.IndentedBlock(body=[])),
                     ("typing.NamedTuple",), record=True, annotated=fields)
    index.classes.setdefault(name, info)


_NAMEDTUPLE_FACTORIES = frozenset({"collections.namedtuple"})
_TYPED_RECORD_FACTORIES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})


# What makes a class's constructor take its annotated names: `@dataclass`, a NamedTuple base.
_RECORD_MAKERS = frozenset({"dataclasses.dataclass", "typing.NamedTuple", "typing_extensions.NamedTuple"})
_CLASS_VARIABLES = frozenset({"typing.ClassVar", "typing.Final", "typing_extensions.ClassVar", "typing_extensions.Final"})


def _unsubscripted(annotation: cst.BaseExpression) -> cst.BaseExpression:
    return annotation.value if isinstance(annotation, cst.Subscript) else annotation


# `list()`, `dict()`, `set()`: empty containers of that sort.
_EMPTY_CONTAINERS = {"builtins.list": "list", "builtins.dict": "dict", "builtins.set": "set",
                     "collections.deque": "list", "collections.OrderedDict": "dict"}


# Builtins that always give a value of one Python kind.
_CONVERSIONS = {"builtins.int": INT, "builtins.float": FLOAT, "builtins.bool": BOOL, "builtins.str": STR,
                "builtins.len": INT}


_FORWARD_HOOKS = frozenset({"register_forward_pre_hook", "register_forward_hook"})


def _registers_hook(call: cst.Call) -> bool:
    """`<module>.register_forward_hook(...)` (or a pre-hook), whatever the module is written as."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _FORWARD_HOOKS


def _hook_named(hook: cst.BaseExpression) -> tuple[str, bool] | None:
    """A hook as registered: its name (`self._log`, `log_shape`), or the name of the function
    that makes it (`self._make_hook(name)`), with whether it is made."""
    if isinstance(hook, cst.Call):
        made = dotted_name(hook.func)
        return (made, True) if made else None
    named = dotted_name(hook)
    return (named, False) if named else None


def _is_setup_method(name: str) -> bool:
    """Submodules and parameters are built in `__init__` or in the helpers it calls by these names."""
    return name == "__init__" or any(word in name for word in ("init", "build", "make", "setup", "reset"))


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Each target with the value it is given: `self.tau, self.decay = tau, decay` is two stores."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) and len(
            target.elements) == len(value.elements) and not any(
            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return [pair for t, v in zip(target.elements, value.elements) for pair in _pairs(t.value, v.value)]
    return [(target, value)]


class _SelfAttributeCollector:
    """Records `self.x = Cls(...)`, `self.register_buffer("x", ...)` and `self.x = nn.Parameter(...)`."""

    def __init__(self, index: ModuleIndex, info: ClassInfo, method: cst.FunctionDef,
                 given: dict[str, Kind] | None = None):
        self.index = index
        self.info = info
        self.in_init = method.name.value == "__init__"
        self.given = given or {}  # the kinds `__init__`'s call gives this method's parameters
        params = method.params
        self.parameters = {p.name.value: p for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        self.spread = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        self.method = method
        self._local_classes: dict[str, set[str]] | None = None

    def run(self, body: cst.BaseSuite) -> None:
        # Nested functions have their own `self`, if any.
        for node in find_nodes(body, (cst.Assign, cst.AnnAssign, cst.Call), prune=(cst.FunctionDef,)):
            if isinstance(node, cst.Assign):
                self.visit_Assign(node)
            elif isinstance(node, cst.AnnAssign):
                self.visit_AnnAssign(node)
            else:
                self.visit_Call(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for single, value in _pairs(target.target, node.value):
                self._record(single, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted_name(node.func)
        if name in ("self.register_buffer", "self.register_parameter") and node.args:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString):
                self.info.tensor_attrs.add(first.evaluated_value)
                self.info.state_attrs.add(first.evaluated_value)
                if name == "self.register_buffer":
                    self.info.buffer_attrs.add(first.evaluated_value)
                if len(node.args) > 1 and _builds_sparse(self.index, node.args[1].value):
                    self.info.sparse_attrs.add(first.evaluated_value)
        elif _registers_hook(node) and node.args and (
                node.args[0].keyword is None and (hook := _hook_named(node.args[0].value))
                and not any(a.keyword is not None and a.keyword.value == "with_kwargs" for a in node.args)):
            # On itself, a submodule, or one its loop goes through (`for layer in self.layers:`,
            # `getattr(self, name)`).
            assert isinstance(node.func, cst.Attribute)
            self.info.hooks.append((node.func.attr.value.endswith("_pre_hook"), *hook))
        elif name in ("self.add_module", "self.register_module") and len(node.args) > 1:
            first = node.args[0].value
            if isinstance(first, cst.SimpleString):
                self._record_classes(first.evaluated_value, node.args[1].value)

    def _record(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
            return
        attr = target.attr.value
        if self.in_init and isinstance(value, cst.Name) and (value.value in self.parameters or value.value == self.spread):
            self.info.attr_params[attr] = value.value
        if self.in_init and isinstance(value, cst.Call):
            # What torch's layers are built with by keyword (`padding=dilation`), which their
            # `forward` reads (a class of the scanned code may not: its own reads are its own). A
            # layer's positional arguments are its sizes, and one built with another size is given
            # an input of another size too, whose guard TorchDynamo checks (and reports) first.
            keyworded = [a.value for call in find_nodes(value, (cst.Call,)) if isinstance(call, cst.Call)
                         and (built := self.index.qualify(dotted_name(call.func))) is not None
                         and built.startswith("torch.nn.") and names_a_class(built)
                         for a in call.args if a.keyword is not None]
            if read := {n.value for argument in keyworded for n in find_nodes(argument, (cst.Name,), prune=(cst.Call,))
                        if isinstance(n, cst.Name) and n.value in self.parameters}:
                self.info.attr_built_with.setdefault(attr, set()).update(read)
        called = dotted_name(value.func) if isinstance(value, cst.Call) else None
        if called and not called.startswith("self.") and not names_a_class(called) and (
                qualified := self.index.qualify(called)) is not None:
            self.info.attr_builders.setdefault(attr, set()).add(qualified)
        kind = self._literal_container(value) or self._plain_kind(value) or self._converted_kind(value)
        if kind is not None:
            known = self.info.attr_kinds.get(attr)
            self.info.attr_kinds[attr] = kind if known is None else join(known, kind)
            if self.in_init:
                self.info.built_kinds[attr] = kind  # the last store in `__init__` is what it ends with
        if isinstance(value, cst.Call) and _builds_tensor(self.index, value):
            self.info.tensor_attrs.add(attr)
            if _builds_sparse(self.index, value):
                self.info.sparse_attrs.add(attr)
            if self.in_init and self.index.qualify(dotted_name(value.func)) in NOT_MODULE_CLASSES:
                self.info.state_attrs.add(attr)  # `self.gate = nn.Parameter(...)`
            return
        factory = self.index.qualify(dotted_name(value.func)) if isinstance(value, cst.Call) else None
        if factory not in OBJECT_FACTORIES:
            self._record_classes(attr, value)
        elif names_a_class(dotted_name(value.func) or ""):
            # `threading.Lock()`: its own class; not the classes its arguments build
            # (`csv.writer(io.StringIO())` is a writer, not a buffer)
            self.info.attr_classes.setdefault(attr, set()).add(factory)
        for source in _alternatives(value):
            table = source
            while isinstance(table, cst.Subscript):
                table = table.value
            if table is not source and isinstance(table, cst.Name) and table.value in self.index.callable_tables:
                # `self.attn_fn = BACKENDS[name]`: any function of the module-level table, qualified
                self.info.attr_functions.setdefault(attr, set()).update(self.index.callable_tables[table.value])
            elif isinstance(source, cst.Attribute) and _is_self(source.value):
                self.info.attr_methods.setdefault(attr, set()).add(source.attr.value)
            elif (dotted := dotted_name(source)) and dotted.split(".")[0] not in self.parameters and (
                    literal_kind(source) is None):
                self.info.attr_functions.setdefault(attr, set()).add(dotted)  # qualified where read: defined later
            elif isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and _is_self(source.func.value):
                self.info.attr_factories.setdefault(attr, set()).add(source.func.attr.value)

    def local_classes(self) -> dict[str, set[str]]:
        """The classes each local of the method is given objects of: assigned (`layers = [A()]`,
        `layers += [B(i)]`) or added (`layers.append(C())`, `extend`, `insert`)."""
        if self._local_classes is None:
            found: dict[str, set[str]] = {}
            for node in find_nodes(self.method.body, (cst.Assign, cst.AugAssign, cst.Call), prune=(cst.FunctionDef,)):
                if isinstance(node, cst.Call):
                    func = node.func
                    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                            func.attr.value in ("append", "extend", "insert")):
                        for argument in node.args:
                            found.setdefault(func.value.value, set()).update(
                                constructed_classes(self.index, argument.value))
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, cst.Name):
                        found.setdefault(target.value, set()).update(constructed_classes(self.index, node.value))
            self._local_classes = found
        return self._local_classes

    def _plain_kind(self, value: cst.BaseExpression) -> Kind | None:
        """The Python kind of a literal, or of a parameter of the method that declares one."""
        kind = literal_kind(value)
        if kind is None and isinstance(value, cst.Name) and value.value in self.parameters:
            param = self.parameters[value.value]
            kind = parameter_kind(param)
            if not (isinstance(kind, Kind) and is_plain(kind)):
                kind = self.given.get(value.value)
            if kind is None and self.in_init and param.annotation is None and param.default is not None and (
                    literal_kind(param.default) == NONE):
                kind = NONE  # `top_k=None` stored as it is: None as built with the defaults
        return kind if isinstance(kind, Kind) and is_plain(kind) else None

    def _converted_kind(self, value: cst.BaseExpression) -> Kind | None:
        """The Python value a builtin conversion (`int(n)`, `float(s)`) or a tensor's `.tolist()`
        gives: `self.alphas = torch.cumprod(1 - betas, 0).tolist()` holds Python numbers."""
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value == "tolist" and isinstance(func.value, cst.Call) and (
                _builds_tensor(self.index, func.value)):
            return container(sort="list")
        return _CONVERSIONS.get(self.index.qualify(func.value)) if isinstance(func, cst.Name) else None

    def _literal_container(self, value: cst.BaseExpression) -> Container | None:
        """A dict (constant string keys), list or tuple written out, with what each key or position
        holds: a literal, a tensor made by torch, a container written out, else unknown."""
        if isinstance(value, cst.Dict):
            keys = []
            for element in value.elements:
                if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                        and isinstance(element.key.evaluated_value, str)):
                    return None
                keys.append((element.key.evaluated_value, self._element_kind(element.value)))
            return container(keys=tuple(keys), sort="dict")
        if isinstance(value, (cst.List, cst.Tuple)) and all(isinstance(e, cst.Element) for e in value.elements):
            items = tuple(self._element_kind(element.value) for element in value.elements)
            return container(items=items, sort="list" if isinstance(value, cst.List) else "tuple")
        if isinstance(value, cst.Set):
            return container(sort="set")
        if isinstance(value, cst.Call) and self.index.qualify(dotted_name(value.func)) in _EMPTY_CONTAINERS:
            sort = _EMPTY_CONTAINERS[self.index.qualify(dotted_name(value.func)) or ""]
            if value.args:  # `dict(DEFAULTS, **overrides)`, `list(sizes)`: of that sort, holding what is not known
                return container(sort=sort, elements=UNKNOWN)
            return container(keys=(), sort=sort) if sort == "dict" else container(items=(), sort=sort)
        return None

    def _element_kind(self, value: cst.BaseExpression) -> Kind:
        if isinstance(value, cst.Call) and _builds_tensor(self.index, value):
            return TENSOR
        return self._literal_container(value) or self._plain_kind(value) or UNKNOWN

    def _record_classes(self, attr: str, value: cst.BaseExpression) -> None:
        classes = constructed_classes(self.index, value)
        for name in find_nodes(value, (cst.Name,)):  # `nn.ModuleList(layers)`: what the local list was given
            if isinstance(name, cst.Name) and name.value != "self":
                classes |= self.local_classes().get(name.value, set())
        if classes:
            self.info.attr_classes.setdefault(attr, set()).update(classes)


def _builds_tensor(index: ModuleIndex, value: cst.Call) -> bool:
    """`nn.Parameter(...)`, a torch function (`torch.zeros(n)`), a tensor class (`torch.Tensor(xs)`),
    or tensor methods called on one (`torch.from_numpy(t).to(device)`)."""
    while isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Call):
        if value.func.attr.value in METADATA_METHODS or value.func.attr.value == "numpy":
            return False  # `.tolist()`, `.size()`, `.numpy()`: Python or NumPy values
        value = value.func.value
    called = index.qualify(dotted_name(value.func))
    if not called or not called.startswith("torch."):
        return False
    last = called.rpartition(".")[2]
    return called in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") or last[:1].islower() or (
        last.endswith("Tensor") and called.count(".") == 1)


def _builds_sparse(index: ModuleIndex, value: cst.BaseExpression) -> bool:
    """`a.to_sparse()`, `torch.sparse_coo_tensor(i, v, size)`: a sparse tensor."""
    return isinstance(value, cst.Call) and (
        (isinstance(value.func, cst.Attribute) and value.func.attr.value in SPARSE_METHODS)
        or index.qualify(dotted_name(value.func)) in SPARSE_FACTORIES)


def _alternatives(value: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The expressions a value is one of: both sides of `a if c else b` and of `a or b`."""
    if isinstance(value, cst.IfExp):
        yield from _alternatives(value.body)
        yield from _alternatives(value.orelse)
    elif isinstance(value, cst.BooleanOperation):
        yield from _alternatives(value.left)
        yield from _alternatives(value.right)
    else:
        yield value


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)


def _record_varying_builds(index: ModuleIndex, loop: cst.CSTNode) -> None:
    """Classes a loop builds with arguments computed from its int (`Block(i) for i in
    range(depth)`, `Coupling(dim, flip=bool(i % 2))`): each instance holds another value
    (`CallSites.varying_builds`, by argument position or keyword)."""
    if isinstance(loop, cst.For):
        target, iterable, scope = loop.target, loop.iter, loop.body  # a loop builds in its body
    elif isinstance(loop, _COMPREHENSIONS):
        target, iterable = loop.for_in.target, loop.for_in.iter  # a comprehension in what it makes
        scope = cst.Tuple([cst.Element(loop.key), cst.Element(loop.value)]) if isinstance(loop, cst.DictComp) else loop.elt
    else:
        return
    called = index.qualify(dotted_name(iterable.func)) if isinstance(iterable, cst.Call) else None
    ints: set[str] = set()
    if called == "builtins.range" and isinstance(target, cst.Name):
        ints.add(target.value)
    elif called == "builtins.enumerate" and isinstance(target, cst.Tuple) and target.elements and isinstance(
            target.elements[0].value, cst.Name):
        ints.add(target.elements[0].value.value)
    if not ints:
        return
    for node in find_nodes(scope, (cst.Call,)):
        qualified = index.qualify(dotted_name(node.func)) if isinstance(node, cst.Call) else None
        if not qualified or not names_a_class(qualified):
            continue
        assert isinstance(node, cst.Call)
        for key, argument in [*enumerate(a for a in node.args if a.keyword is None and not a.star),
                              *((a.keyword.value, a) for a in node.args if a.keyword is not None)]:
            if any(isinstance(n, cst.Name) and n.value in ints for n in find_nodes(argument.value, (cst.Name,))):
                index.call_sites.varying_builds.setdefault(qualified, set()).add(key)


def constructed_classes(index: ModuleIndex, value: cst.BaseExpression) -> set[str]:
    """Qualified names of capitalised callables in an expression: `nn.ModuleList([Block() ...])`."""
    classes = set()
    for call in find_nodes(value, (cst.Call,)):
        name = dotted_name(call.func)
        if name and names_a_class(name):
            qualified = index.qualify(name)
            if qualified:
                classes.add(qualified)
    return classes


class _CompileCallFinder:
    """`torch.compile(fn)`, `torch.compile(Model())`, `f = torch.compiler.disable(g)` and
    `torch._dynamo.config` settings anywhere."""

    def __init__(self, index: ModuleIndex):
        self.index = index
        self.instances: dict[str, str] = {}  # variable -> qualified class it was built from
        self.settings = SettingsBuilder()
        # name a compiled function is called by -> (its qualified name, `dynamic=` as written)
        self.compiled_handles: dict[str, tuple[str, str | None]] = {}
        # name a compiled module instance is called by (`h = torch.compile(model)`, `model.compile()`)
        # -> its qualified class; `modules_compiled` also holds the instance `model` itself
        self.module_handles: dict[str, str] = {}
        self.modules_compiled: dict[str, str] = {}
        self.number_literals: dict[str, set[str]] = {}  # name -> "int"/"float" of the literals assigned to it
        self.compiles = False  # the module compiles something: its call sites are worth reading
        self.not_numbers: set[str] = set()  # names also assigned something else
        self.handle_dynamic: dict[str, str | None] = {}  # compiled module handle -> its `dynamic=` as written

    def run(self, module: cst.Module) -> None:
        for node in find_nodes(module, (cst.Assign, cst.AugAssign, cst.Call, cst.For, *_COMPREHENSIONS)):
            if isinstance(node, cst.Assign):
                self._number_assignment(node)
                self.visit_Assign(node)
            elif isinstance(node, cst.AugAssign):
                self.visit_AugAssign(node)
            elif isinstance(node, cst.Call):
                self.visit_Call(node)
            else:
                _record_varying_builds(self.index, node)
        self.index.dynamo = self.settings.build()
        self._decorated_handles()
        if self.compiled_handles:
            for loop in find_nodes(module, (cst.For,)):
                self._varying_calls(loop)
        if self.compiles or self.compiled_handles:
            self._handles_passed_on(module)
            sites = _CallSiteFinder(self, module)
            walk(module, sites)
            sites.finish()

    def _handles_passed_on(self, module: cst.Module) -> None:
        """`evaluate(model)` with `def evaluate(net): net.eval() ...`: the parameter a compiled
        handle is passed to, in a function of this file, names it inside that function."""
        if not (self.module_handles or self.compiled_handles):
            return
        for call in find_nodes(module, (cst.Call,)):
            function = self.index.functions.get(dotted_name(call.func) or "")
            if function is None or function.class_name is not None:
                continue
            params = function.node.params
            positional = [p.name.value for p in (*params.posonly_params, *params.params)]
            for position, argument in enumerate(call.args):
                if not isinstance(argument.value, cst.Name) or argument.star:
                    continue
                parameter = argument.keyword.value if argument.keyword is not None else (
                    positional[position] if position < len(positional) else None)
                handle = argument.value.value
                if parameter is None or parameter == handle:
                    continue
                if handle in self.module_handles:
                    self.module_handles[parameter] = self.modules_compiled[parameter] = self.module_handles[handle]
                    self.handle_dynamic[parameter] = self.handle_dynamic.get(handle)
                elif handle in self.compiled_handles:
                    self.compiled_handles[parameter] = self.compiled_handles[handle]

    def _number_assignment(self, node: cst.Assign) -> None:
        number = _number_literal(node.value)
        for target in node.targets:
            if not isinstance(target.target, cst.Name):
                continue
            name = target.target.value
            if number is not None:
                self.number_literals.setdefault(name, set()).add(number)
            elif not (isinstance(node.value, cst.BinaryOperation) and any(
                    isinstance(o, cst.Name) and o.value == name for o in (node.value.left, node.value.right))):
                self.not_numbers.add(name)  # `lr = torch.tensor(0.1)`: not (only) a Python number

    def _decorated_handles(self) -> None:
        for function in self.index.functions.values():
            for decorator in function.node.decorators:
                call = decorator.decorator
                called = self.index.qualify(dotted_name(call.func if isinstance(call, cst.Call) else call))
                if called in COMPILE_NAMES and function.class_name is None:
                    dynamic = _keyword(call, "dynamic") if isinstance(call, cst.Call) else None
                    self.compiled_handles[function.qualname] = (f"{self.index.name}.{function.qualname}", dynamic)

    def _varying_calls(self, loop: cst.For) -> None:
        """Calls of compiled functions in a loop given a number that changes on every iteration:
        the int of `for i in range(...)`, or a name the loop rebinds by arithmetic on itself
        (`lr *= 0.9`, `lr = lr * gamma`) whose number kind its literals tell."""
        iterator = loop.iter
        varying = self._rebound_numbers(loop.body)
        if (isinstance(loop.target, cst.Name) and isinstance(iterator, cst.Call)
                and self.index.qualify(dotted_name(iterator.func)) == "builtins.range"):
            varying[loop.target.value] = "int"
        for call in find_nodes(loop.body, (cst.Call,)) if varying else ():
            handle = self.compiled_handles.get(dotted_name(call.func) or "")
            if handle is None:
                continue
            for position, argument in enumerate(call.args):
                if isinstance(argument.value, cst.Name) and argument.value.value in varying and not argument.star:
                    keyword = argument.keyword.value if argument.keyword is not None else None
                    self.index.varying_calls.setdefault(handle[0], []).append(VaryingCall(
                        _source(call), None if keyword else position, keyword, handle[1],
                        varying[argument.value.value]))

    def _rebound_numbers(self, body: cst.BaseSuite) -> dict[str, str]:
        """Names the loop body updates from themselves with number literals, that are otherwise only
        assigned number literals, and whether they hold an int or a float (a float literal in the
        update or in an assignment of the name)."""
        found: dict[str, str] = {}
        for node in find_nodes(body, (cst.AugAssign, cst.Assign)):
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                name, operands = node.target.value, [node.value]
            elif (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                  and isinstance(node.value, cst.BinaryOperation)):
                name, operands = node.targets[0].target.value, [node.value.left, node.value.right]
                if not any(isinstance(o, cst.Name) and o.value == name for o in operands):
                    continue
                operands = [o for o in operands if not (isinstance(o, cst.Name) and o.value == name)]
            else:
                continue
            kinds = {_number_literal(o) for o in operands}
            initial = self.number_literals.get(name, set())
            if None in kinds or not initial or name in self.not_numbers:
                continue
            found[name] = "float" if "float" in kinds | initial else "int"
        return found

    def _module_handle(self, handle: str, compiled: cst.BaseExpression) -> None:
        """`handle = torch.compile(model)` or `torch.compile(Model(...))`: a compiled module."""
        if isinstance(compiled, cst.Name) and compiled.value in self.instances:
            self.module_handles[handle] = self.modules_compiled[compiled.value] = self.instances[compiled.value]
        elif isinstance(compiled, cst.Call):
            qualified = self.index.qualify(dotted_name(compiled.func))
            if qualified and names_a_class(qualified):
                self.module_handles[handle] = self.modules_compiled[handle] = qualified

    def _setting(self, target: cst.BaseExpression) -> str | None:
        """NAME of a `torch._dynamo.config.NAME` expression, however torch was imported."""
        qualified = self.index.qualify(dotted_name(target)) or ""
        name = qualified.removeprefix(CONFIG_PREFIX)
        return name if qualified.startswith(CONFIG_PREFIX) and "." not in name else None

    def _functions(self, node: cst.BaseExpression) -> list[str | None]:
        elements = node.elements if isinstance(node, (cst.Set, cst.List, cst.Tuple)) else [node]
        return [self.index.qualify(dotted_name(e.value if isinstance(e, cst.BaseElement) else e)) for e in elements]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        name = self._setting(node.target)
        if name is not None and isinstance(node.operator, cst.BitOrAssign):
            for function in self._functions(node.value):
                self.settings.add(name, function)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = self._setting(target.target)
            if name is not None:
                self.settings.assign(name, _source(node.value))
        if isinstance(node.value, cst.Call) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            called = self.index.qualify(dotted_name(node.value.func))
            if called in COMPILE_NAMES and node.value.args:
                self._module_handle(node.targets[0].target.value, node.value.args[0].value)
                self.handle_dynamic[node.targets[0].target.value] = _keyword(node.value, "dynamic")
            if called:
                self.instances[node.targets[0].target.value] = called
            compiled = node.value.args[0].value if called in COMPILE_NAMES and node.value.args else None
            if compiled is not None and (dotted_name(compiled) or "") in self.index.functions:
                self.compiled_handles[node.targets[0].target.value] = (
                    f"{self.index.name}.{dotted_name(compiled)}", _keyword(node.value, "dynamic"))
            if called in DISABLE_NAMES and node.value.args:
                # Only the new name is disabled: `g` itself stays traceable after `h = disable(g)`
                # (and `g = disable(g)` rebinds `g`, which this covers).
                self.index.disabled_names.add(f"{self.index.name}.{node.targets[0].target.value}")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "compile":
            self.compiles = True  # `model.compile()`, or a torch.compile under another name
        if isinstance(func, cst.Attribute) and func.attr.value in ("add", "update") and node.args:
            name = self._setting(func.value)
            if name is not None:
                for function in self._functions(node.args[0].value):
                    self.settings.add(name, function)
                return
        if self.index.qualify(dotted_name(func)) not in COMPILE_NAMES:
            return
        self.compiles = True
        argument = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "model"), None)
        if argument is None:
            return
        if isinstance(argument, cst.Call):
            argument = argument.func
        elif isinstance(argument, cst.Attribute) and argument.attr.value == "forward":
            argument = argument.value
        name = dotted_name(argument)
        qualified = self.instances.get(name or "") or self.index.qualify(name)
        if qualified is not None:
            self.index.compiled_refs.add(qualified)
            if _keyword_is_true(node, "fullgraph"):
                self.index.fullgraph_refs.add(qualified)

