"""Walks one compiled function body in source order, tracking tensor values, skipping code that
TorchDynamo does not trace, and handing every node to the rules that asked for its type."""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import functools
import itertools
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import libcst as cst

from breakscan.lint import catalogue
from breakscan.lint import values as v
from breakscan.lint.declared import Expand, annotation_kind
from breakscan.lint.dynamo_settings import NO_SETTINGS, DynamoSettings
from breakscan.lint.index import CallSites, ClassInfo, FunctionInfo, ModuleIndex, is_abstract, is_torch_module_base
from breakscan.lint.names import dotted_name, import_bindings, name_pattern, names_a_class
from breakscan.lint.resolve import compiled_extension
from breakscan.lint.semantics.randomness import INT_DRAWS, traced_draw
from breakscan.lint.semantics.reads import guarding_reads
from breakscan.lint.traverse import children, find_nodes, subtree_ids
from breakscan.model import Fix, Severity

if TYPE_CHECKING:
    from breakscan.lint.regions import Project
    from breakscan.lint.rule import Rule

T = TypeVar("T")
N = TypeVar("N", bound=cst.CSTNode)
# Silent passes over a loop's body before rules see it (values converge in one or two in practice).
MAX_SILENT_PASSES = 3
COMPILING_GUARDS = ("is_compiling", "is_dynamo_compiling", "is_torchdynamo_compiling")
# TorchScript, ONNX/jit-tracing and export checks are False under torch.compile: their branches are dead.
TRACING_GUARDS = ("is_scripting", "is_tracing", "_is_tracing", "_get_tracing_state", "is_in_onnx_export",
                  "is_exporting")


@dataclass
class RawFinding:
    """A finding before positions are known: the node is located only if the file has findings."""

    rule: "Rule"
    node: cst.CSTNode
    function: FunctionInfo
    message: str
    severity: Severity
    fix: Fix | None = None
    # In a loop, or a break after which TorchDynamo gives up on the whole frame it was tracing.
    in_loop: bool = False
    # TorchDynamo compiles the frame up to it, then runs the rest eagerly (Rule.skips_frame).
    ends_frame: bool = False
    in_try: bool = False  # in a `try` block's body: TorchDynamo cannot resume a frame there
    order: int = 0  # source order among the function's findings and calls
    own_frame: bool = False  # it breaks in a frame of its own (see RegionContext._compiled_as_own_frame)
    # It breaks only where the code runs eagerly, after a break TorchDynamo cannot resume from
    # (a comprehension then compiled as a frame of its own); kept or dropped by the region pass.
    only_if_eager: bool = False
    # With `only_if_eager`: only where a break on every path makes the code run eagerly (one in a
    # branch, or in a helper's branch, may not happen).
    surely_eager: bool = False
    # It breaks only when one of these functions (by key) breaks; kept or dropped by the region pass.
    if_callees_break: tuple[str, ...] = ()
    # With `if_callees_break`: only when one of them breaks on every path through it (one that
    # breaks in a branch may not, on the path the call takes).
    callees_surely: bool = False
    # It breaks only when none of these functions (by key) breaks first; dropped by the region pass
    # when one does (an object whose `__init__` breaks is built before the frame it is used in).
    unless_callees_break: tuple[str, ...] = ()
    # It breaks only when a construct under one of these nodes breaks (a finding of the function
    # there); kept or dropped by the region pass.
    if_breaks_within: tuple[cst.CSTNode, ...] = ()
    kinds: tuple[tuple[str, str], ...] = ()  # what the lint knew there (see RegionContext.kinds_at)
    arms: "Arms" = ()  # the branches it is in (see RegionWalker.arms)
    # Where the span starts when TorchDynamo reports the break at an earlier line than `node`'s:
    # the statement holding it (`node`'s end is still the span's end; on `node`'s own line, the
    # span stays `node`'s).
    start: cst.CSTNode | None = None
    # Where the span ends, when the construct goes on past `node` (the rest of an `and`/`or`
    # chain after its first data operand, whose later operands may break too).
    end: cst.CSTNode | None = None
    # A recompile of `function`, compiled as a frame of its own and given, from call to call,
    # inputs that differ in what TorchDynamo guards (these parameters): the frames it resumes in
    # after its breaks guard them again (see regions._resumed_frames_recompile).
    differing_inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Branch:
    """A conditional block: the `if`'s test and which way it went (`when`); no test for an `except`
    handler."""

    test: cst.BaseExpression | None
    when: bool


@dataclass
class CallSite:
    callee: FunctionInfo
    arguments: list[v.Value]
    keywords: dict[str, v.Value]
    node: cst.Call | cst.Attribute | cst.Decorator  # an attribute when it reads a property; a decorator runs its wrapper
    in_loop: bool = False
    in_try: bool = False
    order: int = 0
    spreads: bool = False  # passes `*args` or `**kwargs` on: what they hold is not known here
    arms: "Arms" = ()  # the branches it is in (see RegionWalker.arms)
    # A method called on the caller's own object (`self.normalize(x)`): the attributes the caller
    # has set on it so far (`self.scale = x.abs().max()`), by name: the method reads them so.
    receiver_state: tuple[tuple[str, v.Value], ...] = ()


# The `if` arms a construct is in: (id of the test, which way it went), outermost first.
Arms = tuple[tuple[int, bool], ...]


def exclusive(first: Arms, second: Arms) -> bool:
    """Whether no run reaches both: they are in opposite arms of one `if` (an `elif` is an arm
    of the `else`)."""
    taken = dict(first)
    return any(taken.get(test, when) != when for test, when in second)


@dataclass
class FunctionResult:
    findings: list[RawFinding] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    returns: v.Value = v.OTHER
    # Per-position kinds when every `return` gives a tuple display of the same length.
    return_items: tuple[v.Value, ...] | None = None
    # Parameter positions when every `return` hands back one of the parameters unchanged
    # (`def default(val, d): return val if exists(val) else d`): each call returns what it passed.
    passthrough: frozenset[int] | None = None
    # Where a break inside a loop makes TorchDynamo skip the rest of the frame, beyond the
    # findings and calls marked `in_loop` (the re-evaluated test of a `while`): (order, arms).
    frame_skips: list[tuple[int, Arms]] = field(default_factory=list)
    # The summaries of other functions this walk read: (function key, "returns" | "items" | "passthrough").
    summaries_read: set[tuple[str, str]] = field(default_factory=set)
    # A method's: the attributes of its object it has set on every way out, with their values.
    stores: dict[str, v.Value] | None = None
    # A function called from compiled code that TorchDynamo would not trace as a frame of its own
    # (see RegionWalker.untraced_alone): after a break in it, the rest of it runs untraced.
    untraced_alone: bool = False
    # The orders of its breaks after which the frame TorchDynamo resumes in holds no tensor (see
    # RegionWalker.untraced_resumes): what follows the first break there runs untraced.
    untraced_resumes: frozenset[int] = frozenset()
    _returns_seen: bool = False


# Packages whose calls run inside the caller's frame (torch ops, builtins) or are never traced
# (TorchDynamo's third-party skip list).
EAGER_PACKAGES = frozenset({"torch", "builtins", "numpy", "tqdm"})


_EMPTY_MODULE = cst.Module([])


class RegionContext:
    """What a rule may ask about the code it is looking at."""

    def __init__(self, walker: "RegionWalker"):
        self._walker = walker

    @property
    def module(self) -> ModuleIndex:
        return self._walker.function.module

    @property
    def function(self) -> FunctionInfo:
        return self._walker.function

    @property
    def is_root(self) -> bool:
        """The function is compiled itself (decorated, named in the config, given to
        `torch.compile`, or a module's `forward`): its parameters are what its callers pass."""
        return self._walker.function.key in self._walker.project.root_keys

    @property
    def is_called(self) -> bool:
        """The scanned code calls the function, and its parameters are what those calls pass
        (a module's `forward` run by another module's): none of them is a guess."""
        return self._walker.called

    @property
    def loop_depth(self) -> int:
        return self._walker.loop_depth

    @property
    def conditions(self) -> tuple["Branch", ...]:
        """The branches the visited node is in, outermost first; empty when it runs whenever the
        function does."""
        return tuple(self._walker.conditions)

    @property
    def dynamo(self) -> DynamoSettings:
        """The TorchDynamo settings this code is compiled under."""
        return self._walker.dynamo

    @property
    def function_start(self) -> cst.CSTNode:
        """Where the function's code object starts (its first decorator, else its `def`): the line
        TorchDynamo gives a recompile guarded on the function's inputs or global state."""
        node = self._walker.function.node
        return node.decorators[0] if node.decorators else node

    @property
    def call_sites(self) -> CallSites:
        """How the scanned code outside the compiled code calls what it compiled."""
        return self._walker.project.call_sites()

    def qualname(self, node: cst.BaseExpression) -> str | None:
        return self._walker.qualname(node)

    def value(self, node: cst.BaseExpression) -> v.Value:
        return self._walker.value(node)

    def numpy_object_dtype(self, call: cst.Call) -> cst.BaseExpression | None:
        """The `dtype=object` (or `str`, `bytes`, `complex`) a NumPy call is given, if it is."""
        return self._walker._numpy_object_dtype(call)

    @staticmethod
    def code(node: cst.CSTNode) -> str:
        """The node's source text, for messages."""
        return _EMPTY_MODULE.code_for_node(node)

    def local_value(self, name: str) -> v.Value | None:
        """What a name of this function (a parameter or a local) holds here; None for a global or
        a builtin. A module imported inside the function is a Python value."""
        walker = self._walker
        if name in walker.local_imports:
            return v.OTHER
        return walker.bindings.get(name)

    def live_values(self) -> dict[str, v.Value]:
        """What each name of this function bound so far holds here."""
        return dict(self._walker.bindings)

    def built_kind(self, attribute: str) -> v.Value | None:
        """What `self.<attribute>` is when the object is built: the Python kind `__init__` stores
        (a later setup method, `_init_step_index`, may store another)."""
        for info in self._walker.project.class_lineage(self._walker.cls) if self._walker.cls else []:
            if attribute in info.built_kinds:
                return info.built_kinds[attribute]
        return None

    @property
    def self_class(self) -> ClassInfo | None:
        """The class of `self` here (the subclass an inherited method is bound to), if a method."""
        return self._walker.cls

    def self_is_module(self) -> bool:
        """Whether `self` here is an nn.Module instance (its class is one, through scanned bases)."""
        cls = self._walker.cls
        return cls is not None and self._walker.project.is_module_class(cls)

    def is_module(self, value: v.Value) -> bool:
        """An nn.Module instance: every class the object may be built from is one (torch's own,
        or a scanned class deriving from one), not another object of a scanned class."""
        return self._walker.is_module(value)

    def is_passed_in(self, node: cst.BaseExpression) -> bool:
        """`node` names a parameter of this function not rebound before here: what the caller
        passed (a graph input when this is the compiled function)."""
        return isinstance(node, cst.Name) and node.value in self._walker._parameter_positions

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """Certainly or probably a tensor (an optional tensor counts)."""
        return self._walker.value(node) in (v.TENSOR, v.MAYBE_TENSOR, v.TENSORS)

    def is_known_tensor(self, node: cst.BaseExpression) -> bool:
        """Certainly a tensor, or a tensor or None: not merely a value the analysis lost track of."""
        return self._walker.value(node) in (v.TENSOR, v.MAYBE_TENSOR)

    def is_bool_tested_tensor(self, node: cst.BaseExpression) -> bool:
        """Whether `bool(node)` needs a tensor's data: a tensor, not an optional tensor's None check."""
        return self._walker.value(node) == v.TENSOR

    def sort_keys(self, items: cst.BaseExpression, key: cst.BaseExpression | None) -> v.Value:
        """What a sort of `items` compares: an item, or what the `key=` function gives for one."""
        return self._walker.sort_keys(items, key)

    def decided(self, test: cst.BaseExpression) -> bool | None:
        """What TorchDynamo knows a test to be while tracing (an `is_compiling()` guard, a None
        check on a name known to be None...); None when it depends on run-time values."""
        return self._walker.compile_time_truth(test)

    def callee(self, call: cst.Call) -> FunctionInfo | None:
        return self._walker.callee(call)

    def traced_hook(self, call: cst.Call) -> cst.BaseExpression | None:
        """The hook a `tensor.register_hook(hook)` call has TorchDynamo trace as it is registered
        (see RegionWalker.traced_hook)."""
        return self._walker.traced_hook(call)

    def functions_named(self, expression: cst.BaseExpression) -> list[FunctionInfo]:
        """The scanned functions a callable value may be (`self._record`, `make_mask`), as a call
        of it would run them; not a lambda or a function defined in the function being walked."""
        return self._walker.project.callable_functions(self._walker, expression)

    def callees(self, call: cst.Call, *, constructors: bool = False) -> list[FunctionInfo]:
        """Every scanned function the call may run (a method of each class the object may be);
        with `constructors`, also the `__init__` that building an object of a scanned class runs."""
        return self._walker.callees(call, constructors=constructors)

    def runs_disabled(self, operand: cst.BaseExpression, names: tuple[str, ...]) -> bool:
        """An operation on an object of a scanned class runs a `torch.compiler.disable`d method of
        it (`with Timer():` its `__enter__` or `__exit__`)."""
        return any(method.disabled for name in names for method in self._walker.implicit_methods(operand, (name,)))

    def calls_disabled(self, call: cst.Call) -> bool:
        """A call of a `torch.compiler.disable`d function, or of a `f = disable(g)` wrapper from
        any scanned module."""
        callee = self.callee(call)
        if callee is not None:
            return callee.disabled
        qualified = self.qualname(call.func)
        if not qualified:
            return False
        project = self._walker.project
        built = project.find_class(qualified)
        if built is not None:  # building an object runs its __init__
            init = project.method(project.class_lineage(built), "__init__")
            return init is not None and init.disabled
        module = project.find_module(qualified.rpartition(".")[0])
        return module is not None and qualified in module.disabled_names

    def report(self, rule: "Rule", node: cst.CSTNode, message: str | None = None, *, fix: Fix | None = None,
               severity: Severity | None = None, unknown: cst.BaseExpression | None = None,
               only_if_eager: bool = False, if_callees_break: tuple[FunctionInfo, ...] = (),
               callees_surely: bool = False,
               unless_callees_break: tuple[FunctionInfo, ...] = (), if_breaks_within: tuple[cst.CSTNode, ...] = (),
               start_at: cst.CSTNode | None = None, end_at: cst.CSTNode | None = None,
               guard: cst.BaseExpression | None = None, skips_frame: bool = False,
               abandons_frame: bool = False) -> None:
        """Report `node`. `unknown`: the value the finding rests on when the analysis cannot tell
        what it is (a call into code it cannot read, a loop over something untracked): the finding
        is then a warning that names it, not an error. `only_if_eager`: the construct breaks only
        where the function runs eagerly after a break TorchDynamo cannot resume from (the region
        pass keeps it there and drops it elsewhere). `if_callees_break`: the construct breaks only
        when one of these functions breaks (the region pass keeps it then, and drops it else);
        `callees_surely`: only when one breaks on every path through it; `unless_callees_break`:
        it breaks only when none of these does.
        `if_breaks_within`: the construct breaks only when something under these nodes breaks
        (the region pass keeps it then, a warning when what breaks there is one).
        `start_at`: the node whose start the finding's span starts at, when TorchDynamo reports the
        break at its line (the `if` of a test whose first line comes later); `end_at`: the node
        whose end it ends at (the whole test of which `node` is the first data operand). `guard`: a Python
        condition the construct runs only after, whose value breakscan cannot tell (`flag` in
        `flag and x.any()`): the finding is then a warning that names it. `skips_frame`: this form
        of the construct is one TorchDynamo cannot resume after (see `Rule.skips_frame`);
        `abandons_frame`: one after which it gives up on the whole frame it was tracing (an
        exception raised while tracing it), which then runs eagerly from where it last resumed."""
        walker = self._walker
        if self._captured(rule, node):
            return
        # Not inside a `try`, where TorchDynamo cannot compile the frame up to the break either.
        ends_frame = (rule.skips_frame or skips_frame) and walker.try_depth == 0
        partial = self._on_some_paths(node) if unknown is None and (severity or rule.severity) == "error" else None
        if unknown is not None:
            severity = "warning"
            what = _short_code(unknown)
            message = (f"{message or rule.message} (if `{what}` is a tensor: breakscan cannot tell what it is)")
        elif guard is not None and (severity or rule.severity) == "error":
            severity = "warning"
            message = (f"{message or rule.message} (only where `{_short_code(guard)}` lets it run: "
                       "breakscan cannot tell which way that goes)")
        elif partial is not None:
            severity = "warning"
            message = (f"{message or rule.message} (where `{_short_code(partial)}` is a tensor: "
                       "it is one after some branches only)")
        elif (severity or rule.severity) == "error" and (flag := self._off_default_flag()) is not None:
            severity = "warning"
            message = (f"{message or rule.message} (only when the caller passes `{flag[0]}={not flag[1]}`: "
                       f"left at its default, {flag[1]}, the code does not run here)")
        walker.result.findings.append(
            RawFinding(rule, node, walker.function, message or rule.message, severity or rule.severity, fix,
                       in_loop=walker.loop_depth > 0 and not ends_frame or abandons_frame, ends_frame=ends_frame,
                       in_try=walker.try_depth > 0,
                       order=next(walker.events),
                       own_frame=self._compiled_as_own_frame(node), kinds=self.kinds_at(node),
                       only_if_eager=only_if_eager, if_callees_break=tuple(f.key for f in if_callees_break),
                       callees_surely=callees_surely,
                       unless_callees_break=tuple(f.key for f in unless_callees_break),
                       if_breaks_within=if_breaks_within, arms=walker.arms,
                       start=start_at, end=end_at if end_at is not node else None)
        )

    def _off_default_flag(self) -> tuple[str, bool] | None:
        """A bool parameter of a root (`forward(self, x, set_rng=False)`) that the tests around
        here pin to the other value than its default: the code here runs only when the root's
        caller, whom breakscan cannot see, passes that value. (A helper's is known from its
        call sites, and the branch it does not take is not walked at all.)"""
        walker = self._walker
        if walker.called:
            return None
        params = walker.function.node.params
        for param in (*params.params, *params.kwonly_params):
            default = v.written_bool(param.default) if param.default is not None else None
            current = walker.bindings.get(param.name.value)
            if default is not None and current is not None:
                known = v.known_truth(current)
                if known is not None and known != v.known_truth(default):
                    return param.name.value, bool(v.known_truth(default))
        return None

    def _on_some_paths(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The expression under `node` whose value is a tensor after some branches only and that
        the others are computed from (`index` in `index.max().item()`)."""
        walker = self._walker
        # Not below a block: a finding on a statement rests on its header, not on its body.
        found = None
        for part in find_nodes(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript), prune=_BLOCKS):
            if v.on_some_paths(walker.value(part)):
                found = part  # the deepest one comes last
        return found

    def kinds_at(self, node: cst.CSTNode) -> tuple[tuple[str, str], ...]:
        """The value kinds known at `node`, as plain data for the fixes: each local name's, and the
        node's own under its code when it is an expression (a module instance is "module")."""
        walker = self._walker
        named = [(name, value) for name, value in walker.bindings.items()]
        if isinstance(node, cst.BaseExpression):
            named.append((cst.Module(body=[]).code_for_node(node), walker.value(node)))
        return tuple((name, (value.family or value.name) if isinstance(value, v.Kind) else "module")
                     for name, value in named)

    def report_in(self, rule: "Rule", function: FunctionInfo, node: cst.CSTNode, message: str | None = None, *,
                  only_if_eager: bool = False, surely_eager: bool = False,
                  differing_inputs: tuple[str, ...] = (), severity: Severity | None = None) -> None:
        """Report a construct inside another function that this code runs (a class's `__init__`
        when this code builds the object): the finding is placed there, with this chain. That
        function is a frame of its own to TorchDynamo when this one runs eagerly after a break it
        cannot resume from: the construct breaks there either way. `only_if_eager`: it breaks only
        then (see `report`); `surely_eager`: only when a break on every path makes it run eagerly.
        `differing_inputs`: for a recompile of `function` as a frame of its own, the parameters
        whose guards fail (the frames it resumes in after a break recompile too). `severity`: as in
        `report`."""
        walker = self._walker
        walker.result.findings.append(
            RawFinding(rule, node, function, message or rule.message, severity or rule.severity, None,
                       order=next(walker.events),
                       own_frame=True, only_if_eager=only_if_eager or surely_eager, surely_eager=surely_eager,
                       differing_inputs=differing_inputs))

    # -- project lookups -------------------------------------------------------------------
    def memoised(self, compute: Callable[[N], T], node: N) -> T:
        """`compute(node)` once per lint of a file (for an analysis of a whole function or
        statement that many nodes ask about), forgotten with the file's trees."""
        return self._walker.project.memoised(compute, node)

    def find_class(self, qualified: str) -> ClassInfo | None:
        return self._walker.project.find_class(qualified)

    def declared(self, annotation: cst.BaseExpression, info: ClassInfo | FunctionInfo) -> v.Value | None:
        """What an annotation written in `info`'s module declares (`torch.Tensor`: a tensor)."""
        return self._walker.project.declared_value(annotation, info.module)

    def find_function(self, qualified: str) -> FunctionInfo | None:
        return self._walker.project.find_function(qualified)

    def compiled_extension(self, qualified: str) -> str | None:
        """The compiled extension module (`.so`/`.pyd` file) that defines what `qualified` names,
        as this function's file imports it (see resolve.compiled_extension)."""
        return compiled_extension(qualified, self._walker.function.module.path)

    def is_module_class(self, info: ClassInfo) -> bool:
        """Whether the class is an nn.Module, through its scanned bases."""
        return self._walker.project.is_module_class(info)

    def entry_in(self, table: Mapping[str, T]) -> T | None:
        """What `table` (keyed by compiled functions' and module classes' qualified names, as in
        `CallSites`) holds for this function: itself, or, for a `forward`, a module class that
        runs it (the class or a subclass)."""
        function = self._walker.function
        own = f"{function.module.name}.{function.qualname}"
        if own in table:
            return table[own]
        if function.node.name.value != "forward" or function.class_name is None:
            return None
        owner = f"{function.module.name}.{function.class_name}"
        for key, entry in table.items():
            info = self.find_class(key)
            if info is not None and any(f"{c.module.name}.{c.name}" == owner for c in self.class_lineage(info)):
                return entry
        return None

    def class_lineage(self, info: ClassInfo) -> list[ClassInfo]:
        """The class and its scanned bases."""
        return self._walker.project.class_lineage(info)

    def held_class(self, info: ClassInfo) -> bool:
        """Whether every object of the class its module builds is one an `__init__` stores on
        `self` (see Project.held_class)."""
        return self._walker.project.held_class(info)

    def constructions(self, info: ClassInfo) -> list[tuple[FunctionInfo, cst.Call]]:
        """The calls building the class in its own module, each with the function making it."""
        return self._walker.project.constructions(info)

    def method_of(self, info: ClassInfo, name: str) -> FunctionInfo | None:
        """The method `name` the class has or inherits from a scanned base."""
        project = self._walker.project
        return project.method(project.class_lineage(info), name)

    def _captured(self, rule: "Rule", node: cst.CSTNode) -> bool:
        """Whether the settings the code is compiled under keep this construct in the graph: a
        capture flag the rule names, or the called function added to a function-set setting
        (`reorderable_logging_functions`, `ignore_logging_functions`)."""
        dynamo = self._walker.dynamo
        if any(dynamo.enabled(flag) for flag in rule.captured_by):
            return True
        if rule.captured_in_sets and isinstance(node, cst.Call):
            called = self.qualname(node.func)
            return any(dynamo.holds(setting, called) for setting in rule.captured_in_sets)
        return False

    def _compiled_as_own_frame(self, node: cst.CSTNode) -> bool:
        """A call into a third-party Python function (`torchvision.ops.batched_nms`): TorchDynamo
        compiles it as a frame of its own even when the caller's frame runs eagerly."""
        if not isinstance(node, cst.Call):
            return False
        package = (self.qualname(node.func) or "").partition(".")[0]
        own = self.function.module.name.partition(".")[0]  # its own package's objects (`logger.info`) are not
        return bool(package) and package != own and package not in sys.stdlib_module_names and (
            package not in EAGER_PACKAGES)


Handler = Callable[[cst.CSTNode, RegionContext], None]


class RegionWalker(cst.CSTVisitor):
    def __init__(self, project: "Project", function: FunctionInfo, handlers: dict[type, list[Handler]],
                 parameters: dict[str, v.Value], dynamo: DynamoSettings = NO_SETTINGS, *, called: bool = False):
        self.project = project
        self.function = function
        self.called = called  # its parameters are what the scanned code's calls of it pass
        self.dynamo = dynamo
        self.handlers = handlers
        self.result = FunctionResult()
        self.context = RegionContext(self)
        self.bindings: dict[str, v.Value] = dict(parameters)
        # A tensor parameter negated as an index (`d[~same]`) holds booleans: so `d[same]` selects too.
        for name in project.memoised(_negated_indices, function.node) if function.module.negates_index else ():
            if self.bindings.get(name) == v.TENSOR and not v.is_mask(self.bindings[name]):
                self.bindings[name] = v.MASK
        self._memo: dict[int, v.Value] = {}
        self._qualnames: dict[int, str | None] = {}  # cleared with the memo
        self._callees: dict[tuple[int, bool], list[FunctionInfo]] = {}  # likewise
        # Values of comprehensions, computed in their own scope (the memo forgets on every binding).
        self._scoped: dict[int, v.Value] = {}
        self._written: set[int] = set()  # `id` of the subscripts assignments store to
        self.local_imports: dict[str, str] = {}
        self.rebound: set[str] = set()  # names bound since the innermost `if` being walked began
        # `self.<attr>` this function sets (itself, or by the methods it calls): its stores, unlike
        # the attributes a caller's state gave it at the start.
        self.own_stores: set[str] = set()
        self._expand = project.expander(function.module)
        self.loop_depth = 0
        self.try_depth = 0
        self._yielded: v.Value | None = None  # what the function's `yield`s give, if it has any
        self._holds_data = False  # whether a value the data decides (values.DATA_SIZED) has been seen
        self._silent = False  # in a pass that only brings a loop's values to a fixed point
        # The branches around the node being visited, innermost last. Branches a compile-time guard
        # settles are not conditional.
        self.conditions: list[Branch] = []
        # `and`/`or` right operands around the node being visited, as arms: (id of the left operand,
        # the value it has where the right one runs)
        self.operand_arms: list[tuple[int, bool]] = []
        self.events = itertools.count()
        # The class that defines the function (for `super()`), and the class of `self`: a subclass
        # when an inherited method runs on one of its instances.
        self.defining_cls: ClassInfo | None = function.module.classes.get(function.class_name or "")
        self.cls: ClassInfo | None = function.bound_class or self.defining_cls
        positional = function.positional_params
        self._parameter_positions = {p.name.value: index for index, p in enumerate(positional)}
        star = function.node.params.star_arg
        # `for arg in args: return arg`: an element of `*args` stands for every argument from there on.
        self._variadic = (star.name.value, len(positional)) if isinstance(star, cst.Param) else None

    def run(self) -> FunctionResult:
        entry = list(self.bindings.values())
        self._call_wrappers()
        self.walk(self.function.node.body)
        self._record_exit()
        self.result.untraced_alone = self.called and self.untraced_alone(entry)
        self.result.untraced_resumes = self.untraced_resumes()
        if self._yielded is not None:  # a generator function: calling it gives a generator of what it yields
            self.result.returns = v.container(holds_tensors=self._yielded in (v.TENSOR, v.TENSORS))
            self.result.return_items = self.result.passthrough = None
        return self.result

    def untraced_alone(self, entry: list[v.Value]) -> bool:
        """Whether TorchDynamo, given this function as a frame of its own (after a break in it or in
        what it calls), would not trace it: its code names no torch or NumPy module, and none of
        its values (at entry and as bound) is or holds a tensor, a module or an array; a plain
        object holds none to it (`has_tensor_in_frame`). A tokenizer's string helper: its first
        break is traced in its caller, the rest of it runs untraced."""
        function = self.function
        if function.class_name is None and function.top_statement is not function.node:
            return False  # a nested function: the cells it closes over are its frame's too
        if self._names_a_traced_module():
            return False
        locals_ = [value for name, value in self.bindings.items() if "." not in name]
        return all(self._holds_nothing_traced(value) for value in (*entry, *locals_))

    def _names_a_traced_module(self) -> bool:
        """Whether the function's code names a torch or NumPy module (its frame is traced then)."""
        imports = self.function.module.imports
        return any((imports.get(name.value) or "").partition(".")[0] in ("torch", "numpy")
                   for name in self.project.memoised(_names_in, self.function.node))

    def untraced_resumes(self) -> frozenset[int]:
        """The orders of the function's breaks (ones it resumes after: not in a loop or a `try`)
        after which no value the rest of the function reads holds a tensor, a module or an array,
        in code that names no torch or NumPy module: TorchDynamo would not trace the frame it
        resumes in (`has_tensor_in_frame`), so nothing after such a break, on its path, breaks (a
        logging helper given tensors that it first formats into a message)."""
        breaks = [f for f in self.result.findings if f.rule.kind == "break" and f.severity == "error"
                  and not (f.only_if_eager or f.in_loop or f.in_try or f.ends_frame)]
        if not breaks or (self.function.top_statement is not self.function.node and self.function.class_name is None):
            return frozenset()  # none, or a nested function: the cells it closes over are its frame's too
        if self._names_a_traced_module():
            return frozenset()
        reads = self.project.memoised(_reads_after, self.function.node)
        positions = self.project.memoised(_node_positions, self.function.node)
        found = set()
        for finding in breaks:
            if id(finding.node) in positions:
                after = positions[id(finding.node)] + len(find_nodes(finding.node, (cst.CSTNode,), prune=(
                    cst.FunctionDef, cst.Lambda)))
                live = {name for position, name in reads if position >= after and name in self.bindings}
                if all(self._holds_nothing_traced(self.bindings[name]) for name in live):
                    found.add(finding.order)
        return frozenset(found)

    def _holds_nothing_traced(self, value: v.Value) -> bool:
        if isinstance(value, v.Container):
            held = v.held(value)
            return held is not None and self._holds_nothing_traced(held)
        if value == v.SELF:
            return self.cls is not None and not self.project.is_module_class(self.cls) and not _named_tuple(self.cls)
        if isinstance(value, v.ModuleValue):
            return all((info := self.project.find_class(name)) is not None and not _named_tuple(info)
                       and not self.project.is_module_class(info) for name in value.classes)
        return v.is_plain(value) or isinstance(value, (v.Callables, v.MethodValue))

    def _call_wrappers(self) -> None:
        """A decorator's wrapper runs on each call, given what the function is given: the object
        itself (as an instance of its class) and the parameters, passed on as keywords."""
        wrappers = self.project.wrappers(self.function)
        if not wrappers:
            return
        params = self.function.node.params
        named = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        arguments: list[v.Value] = []
        if named and self.bindings.get(named[0]) == v.SELF:
            arguments.append(v.ModuleValue(self._instance_classes(v.SELF)))
            named = named[1:]
        keywords = {name: self.bindings.get(name, v.UNKNOWN) for name in named}
        for decorator, wrapper in wrappers:
            self.result.calls.append(CallSite(wrapper, arguments, keywords, decorator, order=next(self.events)))

    def walk(self, node: cst.CSTNode) -> None:
        """What `node.visit(self)` does, without libcst rebuilding every node it passes (see traverse)."""
        if self.on_visit(node):
            for child in children(node):
                self.walk(child)
        self.on_leave(node)

    # -- names and values ------------------------------------------------------------------
    def is_module(self, value: v.Value) -> bool:
        """See `RegionContext.is_module`."""
        project = self.project
        return isinstance(value, v.ModuleValue) and bool(value.classes) and all(
            name.startswith("torch.nn.") or ((info := project.find_class(name)) is not None and project.is_module_class(info))
            for name in value.classes)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        # Every rule asks about the callee of every call: memoised as values are (and forgotten with them).
        key = id(node)
        if key in self._qualnames:
            return self._qualnames[key]
        dotted = dotted_name(node)
        if dotted is None:
            found = None
        elif dotted.startswith("self.") and dotted.count(".") > 1 and self.bindings.get("self") == v.SELF:
            # `self.stream.write` where `__init__` stores `sys.stderr` (or `stream or sys.stderr`)
            attribute, _, rest = dotted[len("self."):].partition(".")
            aliased = self._attribute_alias(attribute)
            found = f"{aliased}.{rest}" if aliased is not None else None
        elif (head := dotted.split(".", 1)[0]) in self.bindings and head not in self.local_imports:
            found = None  # a local variable shadows any global of that name
        else:
            found = self.function.module.qualify(dotted, self.local_imports)
            if found is None and self.function.module.star_imports:
                head, dot, rest = dotted.partition(".")
                source = self.project.star_imported(self.function.module, head)
                found = source + dot + rest if source is not None else None
        self._qualnames[key] = found
        return found

    def callees(self, call: cst.Call, *, constructors: bool = False) -> list[FunctionInfo]:
        """See `Project.resolve_calls`; memoised as values are (every rule asks about every call)."""
        key = (id(call), constructors)
        found = self._callees.get(key)
        if found is None:
            found = self._callees[key] = self.project.resolve_calls(self, call, constructors=constructors)
        return found

    def callee(self, call: cst.Call) -> FunctionInfo | None:
        """The function a call runs; the first of them when it may run several."""
        found = self.callees(call)
        return found[0] if found else None

    def value(self, node: cst.BaseExpression) -> v.Value:
        # Rules ask about every sub-expression; without the memo a long `a + b + ...` is quadratic.
        key = id(node)
        found = self._memo.get(key) or self._scoped.get(key)
        if found is None and isinstance(node, _COMPREHENSIONS):
            found = self._scoped[key] = self._comprehension_value(node)
        if found is None:
            found = self._compute_value(node)
            if found in (v.TENSOR, v.TENSORS) and not v.on_some_paths(found) and self._derived_on_some_paths(node):
                found = v.on_some_paths_only(found)
            found = self._data_refined(node, found)
            self._memo[key] = found
        return found

    def _data_refined(self, node: cst.BaseExpression, found: v.Value) -> v.Value:
        """`found`, as a value the data decides (values.DATA_SIZED) where the node reads one out of
        a tensor at a break, or computes from one."""
        made = self._made_from_data(node, found) if isinstance(node, (cst.Call, cst.Subscript)) else None
        if made is not None:
            self._holds_data = True
            return made
        if not self._holds_data:
            self._holds_data = v.data_held(found) is not None  # a parameter, or what a callee returned
            return self._state_refined(node, found)
        if not (isinstance(found, v.Kind) and not isinstance(found, v.Container) and found.name in _PLAIN_NAMES):
            return found  # a refinement is kept
        held = {v.data_held(self.value(operand)) for operand in _operands(node)}
        if held == {None}:
            return self._state_refined(node, found)
        if "size" in held and found in (v.TENSOR, v.TENSORS) and not self._reduces_fully(node) and not (
                self._selects_along_first(node)):
            return v.as_data(found)
        if "number" in held:
            if found in (v.INT, v.FLOAT):
                return v.as_data(found)
            if isinstance(node, cst.Call):
                name = _called_name(node)
                if name in _SIZED_BY_NUMBERS and found in (v.TENSOR, v.TENSORS):
                    return v.as_data(found)  # `torch.split(x, lengths.tolist())`, `x.new_zeros(n)`
                if name in _NUMBER_BUILTINS and self.qualname(node.func) == f"builtins.{name}":
                    return v.DATA_INT if found == v.INT else v.DATA_FLOAT  # `max(amax, 1e-8)`
        return found

    def _selects_along_first(self, node: cst.BaseExpression) -> bool:
        """`rows[inverse]`, `found[0]`: indexing the first dimension, the one the data sizes, with a
        number or an index tensor the data does not size: the result's size is the index's."""
        if not isinstance(node, cst.Subscript) or not isinstance(node.slice[0].slice, cst.Index):
            return False
        index = self.value(node.slice[0].slice.value)
        return v.data_held(index) is None and (index == v.INT or (index == v.TENSOR and not v.is_mask(index)))

    def _reduces_fully(self, node: cst.BaseExpression) -> bool:
        """`idx.sum()`, `torch.mean(x)`: a reduction given no dimension leaves a 0-d tensor."""
        if not isinstance(node, cst.Call) or _called_name(node) not in _FULL_REDUCTIONS:
            return False
        function = (self.qualname(node.func) or "").startswith("torch.")
        return len(node.args) == (1 if function else 0)

    def _state_refined(self, node: cst.BaseExpression, found: v.Value) -> v.Value:
        """A plain tensor computed from what the module holds and Python values only
        (`self.weight.abs()`, `self.sigmas[i]`) is module state too (values.STATE)."""
        if not (isinstance(found, v.Kind) and found.name == v.TENSOR.name) or isinstance(node, cst.Name) or (
                _called_name(node) in _RANDOM_OPERATIONS):
            return found
        operands = _operands(node) if not isinstance(node, cst.Attribute) else [node.value]
        kinds = [self.value(operand) for operand in operands]
        return v.STATE if any(map(v.is_state, kinds)) and all(map(_same_every_call, kinds)) else found

    def _made_from_data(self, node: cst.Call | cst.Subscript, found: v.Value) -> v.Value | None:
        """A number read out of a tensor, or a tensor sized by its data, where the graph breaks:
        `.item()`, `float(t)`, `.tolist()`; `nonzero`, `unique`, `torch.where(c)`, `x[mask]`. Not
        from what the module holds (`self.scale.item()`): that is the same on every call."""
        made = self._data_read(node, found)
        return None if made is None or self._reads_only_state(node) or any(
            map(self._numpy_of_numbers, _operands(node))) else made

    def _reads_only_state(self, node: cst.Call | cst.Subscript) -> bool:
        """Whether what the node reads is what the module holds (values.STATE) or Python values:
        nothing the call's inputs decide."""
        return all(_same_every_call(self.value(operand)) for operand in _operands(node))

    def _numpy_of_numbers(self, node: cst.BaseExpression) -> bool:
        """`np.prod(h.shape[2:])`: a NumPy result computed from Python numbers and sizes only, which
        the data does not decide (a draw from `np.random` differs on every call)."""
        if not isinstance(node, cst.Call):
            return False
        function = self.qualname(node.func) or ""
        return function.startswith("numpy.") and not function.startswith("numpy.random.") and all(
            v.is_plain(self.value(argument.value)) for argument in node.args)

    def _data_read(self, node: cst.Call | cst.Subscript, found: v.Value) -> v.Value | None:
        if isinstance(node, cst.Subscript):
            if id(node) in self._written:
                return None
            if (len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and found == v.TENSOR
                    and v.is_mask(self.value(node.slice[0].slice.value))
                    and not self.dynamo.enabled("capture_dynamic_output_shape_ops")):
                return v.DATA_SIZED
            return None
        func = node.func
        qualified = self.qualname(func)
        method = qualified is None and isinstance(func, cst.Attribute)
        if method:
            name = func.attr.value
            if name not in _DATA_SIZED_OPERATIONS and name not in ("item", "tolist"):
                return None
            receiver = self.value(func.value)
            if not (receiver == v.TENSOR and receiver.name in (v.TENSOR.name, v.MASK.name, v.DATA_SIZED.name)):
                return None
        else:
            if qualified in ("builtins.float", "builtins.int") and len(node.args) == 1:
                given = self.value(node.args[0].value)
                if given == v.TENSOR and given.name in (v.TENSOR.name, v.DATA_SIZED.name) and not (
                        self.dynamo.enabled("capture_scalar_outputs")):
                    return v.DATA_INT if qualified == "builtins.int" else v.DATA_FLOAT
                return None
            if qualified is None or not qualified.startswith("torch.") or qualified.count(".") != 1:
                return None
            name = qualified[6:]
            if name == "where" and (len(node.args) != 1 or node.args[0].keyword is not None):
                return None  # `torch.where(c, a, b)` is elementwise
        if name in ("item", "tolist") and method:
            if self.dynamo.enabled("capture_scalar_outputs"):
                return None
            return v.container(sort="list", elements=v.DATA_INT) if name == "tolist" else (
                v.DATA_INT if found == v.INT else v.DATA_FLOAT)
        if name in _DATA_SIZED_OPERATIONS and not self.dynamo.enabled("capture_dynamic_output_shape_ops"):
            if name in ("unique", "unique_consecutive") and _given_true(node, "return_inverse"):
                # the inverse indices have the input's size; the values and their counts, the data's
                counts = (v.DATA_SIZED,) if _given_true(node, "return_counts") else ()
                return v.container(sort="tuple", items=(v.DATA_SIZED, v.TENSOR, *counts))
            if isinstance(found, v.Container) and found.items is not None:
                return v.container(items=tuple(map(v.as_data, found.items)), sort=found.sort)
            return v.as_data(found)
        return None

    def _derived_on_some_paths(self, node: cst.BaseExpression) -> bool:
        """Whether a tensor computed from its operands (`i % j`, `d[0]`, `s.sum()`) is one only
        where an operand is a tensor on some paths, no operand being a tensor on every path."""
        if isinstance(node, cst.BinaryOperation):
            operands = [node.left, node.right]
        elif isinstance(node, cst.Comparison):
            operands = [node.left, *(c.comparator for c in node.comparisons)]
        elif isinstance(node, cst.UnaryOperation):
            operands = [node.expression]
        elif isinstance(node, (cst.Subscript, cst.Attribute)):
            operands = [node.value]
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            operands = [node.func.value]  # a method of it; `torch.tensor(d)` is a tensor on every path
        else:
            return False
        values = [self.value(operand) for operand in operands]
        return any(v.on_some_paths(value) for value in values) and not any(
            value in (v.TENSOR, v.TENSORS) and not v.on_some_paths(value) for value in values)

    def _compute_value(self, node: cst.BaseExpression) -> v.Value:
        if isinstance(node, cst.Name):
            if node.value in self.bindings:
                return self.bindings[node.value]
            return (v.written_bool(node) or v.literal_kind(node) or self._callable_named(node)
                    or self._global_value(node) or v.OTHER)
        if isinstance(node, cst.FormattedString) and any(
                isinstance(part, cst.FormattedStringExpression) and part.conversion is None
                and self.value(part.expression) == v.TENSOR for part in node.parts):
            return v.TENSOR_TEXT
        literal = v.literal_kind(node)
        if literal is not None:
            return literal
        if isinstance(node, cst.Attribute):
            return self._callable_named(node) or self._attribute_value(node)
        if isinstance(node, cst.Call):
            return self._call_value(node)
        if isinstance(node, cst.Subscript):
            looked_up = self._table_functions(node)
            if looked_up is not None:
                return looked_up
            base = self.value(node.value)
            index = _constant_index(node)
            held = v.item(base, index) if index is not None else None
            if held is not None:
                return held
            if isinstance(base, v.Container) and (base.elements is not None or base.keys) and not _slices(node):
                # `args[i]`, `kwargs[name]`: any element, or of the keys the name may be
                found = _held_at(base, node.slice[0].slice.value) if len(node.slice) == 1 else v.held(base)
                if found is not None:
                    return found
            if isinstance(base, v.Container) and base.sort in ("list", "tuple") and len(node.slice) == 1 and _slices(node):
                # `candidates[: self.beam_size]`: a list of what the list holds
                return v.container(sort=base.sort, holds_tensors=base == v.TENSORS, elements=v.held(base))
            if v.is_vector(base) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and (
                    self.value(node.slice[0].slice.value) == v.INT):
                return v.ZERO_DIM  # `t[0]` of a tensor of one dimension
            if base in (v.TENSOR, v.TENSORS, v.MAYBE_TENSOR):
                return v.MASK if v.is_mask(base) else v.TENSOR
            if base == v.SHAPE:
                return v.SHAPE if _slices(node) else v.INT
            if base == v.STR:
                return v.STR
            if isinstance(base, v.ModuleValue) and base.classes & v.PARAMETER_CONTAINERS:
                return v.TENSOR  # an element of a ParameterList / ParameterDict is a Parameter
            return base if isinstance(base, v.ModuleValue) or base == v.UNKNOWN else v.OTHER
        if isinstance(node, (cst.BinaryOperation, cst.Comparison)):
            left = node.left
            rights = [node.right] if isinstance(node, cst.BinaryOperation) else [c.comparator for c in node.comparisons]
            if isinstance(node, cst.Comparison) and all(
                isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in node.comparisons
            ):
                return v.BOOL
            kinds = [self.value(part) for part in (left, *rights)]
            if isinstance(node, cst.BinaryOperation):
                repeated = _sequence_arithmetic(node.operator, kinds)
                if repeated is not None:
                    return repeated
            if isinstance(node, cst.Comparison) and v.STR in kinds:
                return v.BOOL  # a tensor never equals a string: `layer_type == "a"` compares Python values
            if any(kind in (v.TENSOR, v.TENSORS) for kind in kinds):
                if isinstance(node, cst.Comparison):
                    compares = len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, _ORDERINGS)
                    return v.MASK if compares else v.TENSOR
                logical = isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor))
                if not logical and all(v.is_numpy_float(kind) or kind in (v.INT, v.FLOAT) for kind in kinds):
                    return v.NUMPY_FLOAT  # `2 * np.log(d)`: still a float NumPy value of Python numbers
                if not logical and all(v.is_assumed_tensor(kind) or kind in v.NUMBERS for kind in kinds):
                    return v.ASSUMED_TENSOR  # `p * reach ** p`: computed as from a Python number
                if isinstance(node, cst.BinaryOperation) and all(
                        v.is_zero_dim(kind) or v.is_zero_dim_input(kind) or kind in v.NUMBERS for kind in kinds):
                    return v.ZERO_DIM  # `t - 10` on a 0-d timestep: 0-d still
                return v.MASK if logical and any(v.is_mask(kind) for kind in kinds) else v.TENSOR
            if v.UNKNOWN in kinds:
                return v.UNKNOWN
            # `beam_size > 1` with `beam_size=None`: an optional value, most often not a tensor.
            if v.MAYBE_TENSOR in kinds:
                assumed = all(v.is_assumed_tensor(kind) or kind in v.NUMBERS for kind in kinds)
                return v.ASSUMED_OPTIONAL if assumed else v.MAYBE_TENSOR
            if isinstance(node, cst.Comparison):
                return v.BOOL
            return _arithmetic(node.operator, kinds)
        if isinstance(node, cst.UnaryOperation):
            inner = self.value(node.expression)
            if inner == v.UNKNOWN:
                return v.UNKNOWN
            if isinstance(node.operator, cst.Not):
                return v.TENSOR if inner == v.TENSOR else v.BOOL
            if inner in (v.TENSOR, v.MAYBE_TENSOR):
                # `~t` in model code negates a mask; bitwise tricks on index tensors are rare.
                if isinstance(node.operator, cst.BitInvert):
                    return v.MASK
                return v.ASSUMED_TENSOR if v.is_assumed_tensor(inner) else v.TENSOR
            return inner if inner in v.NUMBERS else v.OTHER
        if isinstance(node, cst.BooleanOperation):
            decided = self.compile_time_truth(node.left)
            if decided is not None and decided == isinstance(node.operator, cst.Or):
                return self.value(node.left)  # it short-circuits: the right side never runs
            return v.join(self.value(node.left), self._value_narrowed_by(node.left, node.right, node.operator))
        if isinstance(node, cst.IfExp):
            outcome = self.compile_time_truth(node.test)
            if outcome is not None:
                return self.value(node.body if outcome else node.orelse)
            return v.join_branches(self.value(node.body), self.value(node.orelse))
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            kinds = [self.value(e.value) for e in node.elements]
            holds_tensors = any(k in (v.TENSOR, v.TENSORS) for k in kinds)
            sort = "list" if isinstance(node, cst.List) else "tuple" if isinstance(node, cst.Tuple) else ""
            if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
                return v.container(items=tuple(kinds), sort=sort)
            return v.container(sort=sort, holds_tensors=True) if sort and holds_tensors else \
                v.container(sort=sort) if sort else v.TENSORS if holds_tensors else v.OTHER
        if isinstance(node, cst.Dict):
            kinds = [self.value(e.value) for e in node.elements if isinstance(e, cst.DictElement)]
            keys = [e.key.evaluated_value if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                    else None for e in node.elements]
            if all(isinstance(key, str) for key in keys):
                return v.container(keys=tuple(zip(keys, kinds)), sort="dict")
            return v.container(sort="dict", holds_tensors=any(k in (v.TENSOR, v.TENSORS) for k in kinds))
        if isinstance(node, cst.ListComp):
            return v.container(sort="list", elements=self.value(node.elt))
        if isinstance(node, cst.DictComp):
            return v.container(sort="dict", elements=self.value(node.value))
        if isinstance(node, cst.GeneratorExp):
            return v.container(sort="generator", elements=self.value(node.elt))
        if isinstance(node, cst.SetComp):
            return v.TENSORS if self.value(node.elt) in (v.TENSOR, v.TENSORS) else v.OTHER
        if isinstance(node, cst.NamedExpr):
            return self.value(node.value)
        return v.OTHER

    def _attribute_value(self, node: cst.Attribute) -> v.Value:
        own = self._own_attribute(node)
        if own is not None and own in self.bindings:
            return self.bindings[own]
        attr = node.attr.value
        base = self.value(node.value)
        if base == v.SELF or isinstance(base, v.ModuleValue):
            built_with = base.field(attr) if isinstance(base, v.ModuleValue) else None
            if built_with is not None:
                return built_with
            classes = self._classes_of(base)
            for info in classes:
                if attr in info.tensor_attrs:
                    return v.SPARSE if attr in info.sparse_attrs else v.STATE if attr in info.state_attrs else v.TENSOR
                if attr in info.attr_classes or attr in info.attr_factories or attr in info.attr_builders:
                    built = self._attribute_classes(info, attr, classes)
                    # A class the project has, or no function to call instead (`self.search_fn =
                    # Open3dSearch()` in one branch, `= radius_search` in the other).
                    if built and (not self._attribute_functions(info, attr) or any(map(self.project.find_class, built))):
                        return (self._stored_record(classes, attr, built) or self._built_in_init(info, attr, built)
                                or v.ModuleValue(built))
                if attr in info.attr_methods:
                    methods = {name for name in info.attr_methods[attr] if self.project.method(classes, name)}
                    if methods:
                        return v.MethodValue(self._instance_classes(base), frozenset(methods))
                functions = self._attribute_functions(info, attr)
                if functions:
                    return v.callables(functions)
                if attr in info.attr_params:
                    declared = self.project.attribute_parameter_value(info, attr)
                    if declared is not None:
                        return declared
                if attr in info.attr_kinds:
                    kind = info.attr_kinds[attr]
                    # None until a method stores something (`self.best = scores.max(-1).values`)
                    stored = self._stored_by_methods(classes, attr) if kind == v.NONE else None
                    if stored is not None:
                        return v.join(kind, stored)
                    return v.NONE_ATTRIBUTE if kind == v.NONE else kind
            for info in classes:
                if attr in info.annotated:  # `loss: Optional[Tensor] = None` in the class body
                    annotation = info.annotated[attr]
                    if annotation is None:
                        return v.UNKNOWN  # a namedtuple's field this object was not seen given
                    declared = self.project.declared_value(annotation, info.module)
                    if isinstance(declared, v.Container) and declared.sort:
                        # What it holds, not that the object keeps one list from call to call
                        # (torchmetrics' `preds: List[Tensor]`, which its base class resets).
                        return v.container(holds_tensors=declared == v.TENSORS, elements=v.held(declared))
                    if declared is not None:
                        return declared
            registered = self._registered_by_torch(base, classes, attr)
            if registered is not None:
                return registered
            if attr in ("weight", "bias") and isinstance(base, v.ModuleValue) and any(
                    self.project.is_module_class(info) for info in classes):
                return v.STATE
            if attr in ("weight", "bias") and isinstance(base, v.ModuleValue) and any(
                    name.startswith("torch.nn.") for name in base.classes):
                return v.MAYBE_TENSOR  # torch's layers: None when built without it (`bias=False`)
            if attr == "training":
                return v.MODE
            prop = self._property(node)
            if prop is not None:
                self.result.summaries_read.add((prop.key, "returns"))
                return self.project.return_value(prop)
            if self.project.method(classes, attr) is not None:
                return v.MethodValue(self._instance_classes(base), frozenset({attr}))  # `f = self.step`
            return v.OTHER
        if base == v.TENSORS and attr in catalogue.result_fields() and v.sort_of(base) != "dict":
            return v.TENSOR  # `x.max(dim=-1).values`: a field of torch's named tuple of tensors
        if base in (v.TENSOR, v.MAYBE_TENSOR, v.TENSORS):
            if attr in v.TENSOR_ATTRIBUTES:
                return base
            return v.TENSOR_METADATA_KINDS.get(attr, v.OTHER)
        if base == v.UNKNOWN:
            return v.UNKNOWN
        return v.OTHER

    def _stored_record(self, classes: list[ClassInfo], attr: str, built: frozenset[str]) -> v.ModuleValue | None:
        """`self.tableau = Tableau(alpha=...)` in a method: the record as stored there, with what
        its fields were given (a record's fields are what code reads off it)."""
        if not any((info := self.project.find_class(name)) is not None and info.record for name in built):
            return None
        stored = self._stored_by_methods(classes, attr)
        if isinstance(stored, v.ModuleValue) and stored.classes == built and stored.fields:
            return dataclasses.replace(stored, fresh=False)
        return None

    def _built_in_init(self, info: ClassInfo, attr: str, built: frozenset[str]) -> v.ModuleValue | None:
        """`self.prior = GaussianState(torch.zeros(1, d), self.P0)` in `__init__`: a plain object or
        a record of a scanned class, with what building it gave its attributes (tensors here: a deep
        copy of it breaks, a loop over its field iterates a tensor)."""
        init = info.methods.get("__init__")
        made = self.project.find_class(next(iter(built))) if init is not None and len(built) == 1 else None
        if made is None or self.project.is_module_class(made):
            return None
        call = self.project.memoised(_constructions_stored, init.node).get(attr)
        if call is None or info.module.qualify(dotted_name(call.func)) not in built:
            return None
        fields = self._built_fields(next(iter(built)), call, functools.partial(_init_kind, info))
        return v.ModuleValue(built, fields=fields) if fields else None

    def _stored_by_methods(self, classes: list[ClassInfo], attr: str) -> v.Value | None:
        """What the object's other walked methods leave in `self.attr` on every way out, joined;
        None when none of them stores it. This function's own stores are followed in its walk."""
        stored = []
        for info in classes:
            for method in info.methods.values():
                if method.node is self.function.node:
                    continue
                for walked in (method, self.project.bound(method, info)):
                    self.result.summaries_read.add((walked.key, "stores"))
                    value = self.project.stored_attributes(walked).get(attr)
                    if value is not None:
                        stored.append(value)
        return functools.reduce(v.join, stored) if stored else None

    @staticmethod
    def _registered_by_torch(base: v.Value, classes: list[ClassInfo], attr: str) -> v.Value | None:
        """A buffer or parameter a torch.nn class registers, on an instance of it or of a subclass
        (`self.num_batches_tracked` in a BatchNorm1d subclass): a tensor, or one that may be None."""
        names = [name for info in classes for name in info.bases] + (
            sorted(base.classes) if isinstance(base, v.ModuleValue) else [])
        kinds = {catalogue.module_tensor(name, attr) for name in names} - {None}
        if not kinds:
            return None
        return v.MAYBE_TENSOR if "optional" in kinds else v.STATE

    def _attribute_alias(self, attr: str) -> str | None:
        """The module-level object `self.attr` always is, by qualified name: the one dotted name the
        class stores there (`self.out = sys.stdout`; beside a parameter, `stream or sys.stderr`; a
        parameter's default, `stream=sys.stderr`, that no construction overrides), when it stores nothing else and it is no function or class of the scanned code."""
        infos = self.project.class_lineage(self.cls) if self.cls is not None else []
        names = {info.module.qualify(name) or name for info in infos for name in info.attr_functions.get(attr, ())}
        # A parameter stored there is its default (`stream=sys.stderr`) when no construction passes it.
        names |= {self.project.attribute_parameter_default(info, attr) for info in infos if attr in info.attr_params}
        stored_else = any(attr in stored for info in infos for stored in (
            info.attr_classes, info.attr_builders, info.attr_factories, info.attr_methods, info.tensor_attrs))
        if len(names) != 1 or None in names or stored_else or any(
                info.attr_kinds.get(attr, v.OTHER) != v.OTHER for info in infos):
            return None
        name = names.pop()
        return None if self.project.find_function(name) or self.project.find_class(name) else name

    def _attribute_functions(self, info: ClassInfo, attr: str) -> frozenset[str]:
        """The scanned functions `info` stores in `self.attr`, by qualified name (as written, or
        already qualified: the functions of a module-level table)."""
        qualified = (info.module.qualify(name) or name for name in info.attr_functions.get(attr, ()))
        return frozenset(name for name in qualified if name is not None and self.project.find_function(name))

    def _attribute_classes(self, info: ClassInfo, attr: str, classes: list[ClassInfo]) -> frozenset[str]:
        """The classes `self.attr` may be built from, as `info` sets it: constructed there, or
        returned by the methods that build it (the object's own overrides of them), or by the
        functions that do (`self.a_fq = act_fake_quant(cfg)`, `self.rng = np.random.default_rng(seed)`)."""
        built = set(info.attr_classes.get(attr, ()))
        for name in info.attr_factories.get(attr, ()):
            factory = self.project.method(classes, name)
            if factory is not None:
                built.update(self.project.built_by(factory))
        for qualified in info.attr_builders.get(attr, ()):
            builder = self.project.find_function(qualified)
            if builder is not None:
                built.update(self.project.built_by(builder))
            elif qualified in v.OBJECT_FACTORIES:
                built.add(v.OBJECT_FACTORIES[qualified])  # `self.rng = np.random.default_rng(seed)`
        return frozenset(built)

    def _instance_classes(self, value: v.Value) -> frozenset[str]:
        """What `self` (or another object) may be built from, by qualified name."""
        if isinstance(value, v.ModuleValue):
            return value.classes
        return frozenset({f"{self.cls.module.name}.{self.cls.name}"}) if self.cls is not None else frozenset()

    def _classes_of(self, value: v.Value) -> list[ClassInfo]:
        if value == v.SELF:
            return self.project.class_lineage(self.cls) if self.cls else []
        assert isinstance(value, v.ModuleValue)
        found: list[ClassInfo] = []
        for name in value.classes:
            info = self.project.find_class(name)
            if info:
                found.extend(self.project.class_lineage(info))
        return found

    def _call_value(self, node: cst.Call) -> v.Value:
        drawn = traced_draw(node, self)
        if drawn is not None:
            return v.DRAWN_INT if drawn in INT_DRAWS else v.DRAWN_FLOAT
        value = self._call_result(node)
        func = node.func
        if value == v.TENSOR and (self.qualname(func) in v.SPARSE_FACTORIES or (isinstance(func, cst.Attribute) and (
                func.attr.value in v.SPARSE_METHODS or (
                    func.attr.value in v.SPARSE_KEEPING_METHODS and v.is_sparse(self.value(func.value)))))):
            return v.SPARSE
        if value == v.TENSOR and self._makes_mask(node):  # (any refinement of a tensor: a buffer's `.bool()`)
            return v.MASK
        return v.VECTOR if v.identical(value, v.TENSOR) and self._one_dimensional(node) else value

    def _one_dimensional(self, node: cst.Call) -> bool:
        """A call whose tensor has one dimension: `torch.arange(n)`, `torch.tensor([1, 2])`,
        `x.flatten()`, `x.view(-1)`."""
        func = node.func
        qualified = self.qualname(func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qualified in v.VECTOR_FACTORIES:
            return True
        if qualified in ("torch.tensor", "torch.as_tensor") and positional:
            data = positional[0]
            return isinstance(data, (cst.List, cst.Tuple)) and bool(data.elements) and all(
                isinstance(e, cst.Element) and v.literal_kind(e.value) in (v.INT, v.FLOAT) for e in data.elements)
        if qualified == "torch.flatten":
            return len(node.args) == 1
        if not isinstance(func, cst.Attribute) or qualified is not None or self.value(func.value) != v.TENSOR:
            return False
        if func.attr.value in ("flatten", "ravel"):
            return not node.args
        return func.attr.value in ("view", "reshape") and len(node.args) == 1 and _minus_one(node.args[0].value)

    def _makes_mask(self, node: cst.Call) -> bool:
        """A torch function or tensor method whose result holds booleans: `isnan(x)`, `m.any()`,
        `x.to(torch.bool)`, `zeros(..., dtype=torch.bool)`, or one that keeps the dtype of a mask
        (`m.view(-1)`, `torch.cat([m1, m2])`)."""
        func = node.func
        qualified = self.qualname(func)
        if qualified is not None:
            if not qualified.startswith("torch."):
                return False
            name = qualified.rpartition(".")[2]
            first = node.args[0].value if node.args else None
        elif isinstance(func, cst.Attribute) and self.value(func.value) in (v.TENSOR, v.MAYBE_TENSOR):
            name, first = func.attr.value, func.value
        else:
            return False
        dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if dtype is not None:
            return self.qualname(dtype) in v.BOOL_DTYPES
        if name in v.BOOL_RESULT:
            return True
        if name in ("to", "type"):
            dtypes = [self.qualname(a.value) for a in node.args]
            if any(d in v.BOOL_DTYPES for d in dtypes):
                return True
            if any(d is not None and d.startswith("torch.") for d in dtypes):
                return False  # `.to(torch.float32)`
            return first is not None and v.is_mask(self.value(first))  # `.to(device)` keeps the dtype
        if name in ("tensor", "as_tensor") and first is not None:
            return _all_bool_literals(first)
        if name in v.DTYPE_PRESERVING and first is not None:
            if isinstance(first, (cst.List, cst.Tuple)):  # torch.cat([m1, m2])
                return bool(first.elements) and all(v.is_mask(self.value(e.value)) for e in first.elements)
            return v.is_mask(self.value(first))
        return False

    def _call_result(self, node: cst.Call) -> v.Value:
        func = node.func
        tensor_argument = any(self._carries_tensor(argument) for argument in node.args)
        if isinstance(func, cst.Attribute):
            base = self.value(func.value)
            method = func.attr.value
            if base == v.GENERATOR and method == "manual_seed":
                return base  # `torch.Generator().manual_seed(s)` hands the generator back
            if method in v.MODULE_HOOK_METHODS and base not in (v.TENSOR, v.TENSORS, v.MAYBE_TENSOR):
                return v.HOOK_HANDLE
            if base in (v.TENSOR, v.MAYBE_TENSOR):
                probed = v.probed_kind(f"torch.Tensor.{method}", *self._argument_kinds(node))
                if probed is not None:
                    return probed
                declared = v.declared_kind(f"torch.Tensor.{method}")
                if declared is not None:
                    return declared
                if method in v.METADATA_METHODS or method in v.CONTAINER_METHODS:
                    return v.TENSOR_METADATA_KINDS.get(method, v.OTHER)
                return v.TENSORS if method in v.SPLITTING_METHODS else v.TENSOR
            if base == v.TENSORS:
                return v.OTHER if method in ("keys", "items", "values", "__len__", "index", "count") else v.TENSORS
            if base == v.UNKNOWN:
                return v.UNKNOWN
            if base == v.STR and method == "format" and any(
                    self.value(argument.value) == v.TENSOR for argument in node.args if not argument.star):
                return v.TENSOR_TEXT
            if isinstance(base, v.Container) and method in _LOOKUP_METHODS and node.args:
                looked_up = self._looked_up(base, node)
                if looked_up is not None:
                    return looked_up
        if self.qualname(func) == "builtins.getattr" and len(node.args) >= 2:
            methods = self._methods_named(node.args[0].value, node.args[1].value)
            if methods is not None:
                return methods
        if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_METHODS_RETURNING_SELF:
            receiver = self.value(func.value)
            if self.is_module(receiver) and self.project.method(self._classes_of(receiver), func.attr.value) is None:
                return receiver  # `copy.deepcopy(model).eval()`: nn.Module's own methods hand the module back
        callees = self.callees(node)
        if callees:
            returned = []
            for callee in callees:
                self.result.summaries_read.update(((callee.key, "passthrough"), (callee.key, "returns")))
                passed = self.project.passthrough(callee)
                value = (self._passed_through(node, callee, passed) if passed is not None
                         else self.project.return_value(callee))
                if value == v.SELF and callee.class_name is not None:
                    # A method returning its own object (`__call__` ending `return self`): the
                    # object it was called on, not the caller's `self`.
                    named = isinstance(func, cst.Attribute) and func.attr.value == callee.node.name.value
                    value = self.value(func.value if named else func)
                returned.append(value)
            return functools.reduce(v.join, returned)
        built = self.built_classes(func)
        if built:
            fields = self._built_fields(built[0], node) if len(built) == 1 else ()
            return v.ModuleValue(frozenset(built), fresh=True, fields=fields)
        qualified = self.qualname(func)
        if qualified:
            if qualified == "torch.Generator":
                return v.GENERATOR
            if is_torch_module_base(qualified):
                return v.ModuleValue(frozenset({qualified}), fresh=True)  # `nn.Linear(d, 2)` built here
            if qualified.startswith("torch."):
                positional, keywords = self._argument_kinds(node)
                probed = v.probed_kind(qualified, positional, keywords)
                if probed is None and qualified.count(".") == 1 and positional[:1] == [v.TENSOR]:
                    # `torch.median(x, dim=0)` is `x.median(dim=0)`: the method's probes answer too
                    probed = v.probed_kind(f"torch.Tensor.{qualified[6:]}", positional[1:], keywords)
                return probed if probed is not None else v.torch_call_value(qualified)
            if qualified.startswith("numpy.") and self.dynamo.enabled("trace_numpy") and qualified[6:7].islower():
                # TorchDynamo traces NumPy calls as tensor computations (trace_numpy): even on
                # Python numbers (`np.lcm(a, b)` on config values) the result is data, and
                # branching on it breaks (GB0170). An array of Python objects is not traced at all.
                if self._numpy_object_dtype(node) is not None:
                    return v.OTHER
                return v.numpy_call_value(qualified[6:], [self.value(a.value) for a in node.args])
            if qualified in v.NON_TENSOR_BUILTINS:
                return v.BUILTIN_RESULT_KINDS.get(qualified, v.OTHER)
            if qualified in _COPIES and node.args and node.args[0].keyword is None and not node.args[0].star:
                copied = self.value(node.args[0].value)  # `copy.deepcopy(self.encoder)`: another module
                return dataclasses.replace(copied, fresh=True) if isinstance(copied, v.ModuleValue) else copied
            if qualified in _NUMBER_PICKS and len(node.args) >= 2 and all(a.keyword is None and not a.star
                                                                      for a in node.args):
                kinds = [self.value(a.value) for a in node.args]
                if all(kind in v.NUMBERS for kind in kinds):
                    return functools.reduce(v.join, kinds)  # `max(0, (t - k) // 2)`: one of the numbers
            if qualified == "builtins.map" and len(node.args) >= 2 and isinstance(node.args[0].value, cst.Lambda):
                return self._mapped_value(node.args[0].value, [a.value for a in node.args[1:]])
            copied = self._copied_container(qualified, node)
            if copied is not None:
                return copied
            if qualified in v.BUILT_SORT:
                return v.container(sort=v.BUILT_SORT[qualified], holds_tensors=tensor_argument)
            if qualified in v.CONTAINER_BUILTINS:
                return v.TENSORS if tensor_argument else v.OTHER
            if self._imported(func):
                # An import the analysis cannot read: never guessed to be a tensor; given Python
                # values, what the catalogue saw a probe of it return (`unicodedata.normalize`: a str).
                positional, keywords = self._argument_kinds(node)
                probed = v.probed_kind(qualified, positional, keywords) if all(
                    map(v.is_plain, (*positional, *keywords.values()))) else v.uniform_result(qualified)
                return probed if probed is not None and v.is_plain(probed) else v.UNKNOWN
        called = self.value(func)
        if isinstance(called, v.ModuleValue):
            return v.TENSOR  # module(x) runs its forward
        if called == v.UNKNOWN:
            return v.UNKNOWN  # what an unknown callable returns is not known, whatever it is given
        return v.TENSOR if tensor_argument else v.OTHER

    def _copied_container(self, qualified: str, call: cst.Call) -> v.Value | None:
        """`sorted(features)`, `list(d)`, `tuple(xs)`: a new sequence of what iterating a container
        of known sort gives (a dict's keys); `dict(d)`: a copy of the dict. None when the argument
        is not such a container."""
        sort = _SEQUENCE_BUILDERS.get(qualified)
        if sort is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        given = self.value(call.args[0].value)
        if not isinstance(given, v.Container) or not given.sort:
            return None
        if sort == "dict":
            return given if given.sort == "dict" else None
        element = self._iterated(call.args[0].value)
        return v.container(sort=sort, holds_tensors=element in (v.TENSOR, v.TENSORS), elements=element)

    def _looked_up(self, base: v.Container, call: cst.Call) -> v.Value | None:
        """`kwargs.get("mask")`, `options.pop("scale", 1.0)`: what the container holds there, or
        the default where it may be missing."""
        found = _held_at(base, call.args[0].value)
        default = self.value(call.args[1].value) if len(call.args) > 1 else None
        if default is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "get":
            default = v.NONE
        if found is None:
            return default
        return found if default is None else v.join(found, default)

    def _methods_named(self, owner: cst.BaseExpression, name: cst.BaseExpression) -> v.MethodValue | None:
        """`getattr(self, "{}_reduction".format(kind))`: the object's methods whose names the
        string may be, when it is made of literal text around what is not known."""
        instance = self.value(owner)
        pattern = name_pattern(name)
        if not (instance == v.SELF or isinstance(instance, v.ModuleValue)) or pattern is None or not pattern.strip("*"):
            return None
        found = v.MethodValue(self._instance_classes(instance), frozenset({pattern}))
        return found if self.project.method_names(found) else None

    def _global_value(self, node: cst.Name) -> v.Value | None:
        """A module-level number (`SCALE = 0.5`), a name bound to what a torch function returns
        (`_TABLE = torch.arange(10)`): a tensor where torch declares one, or an object of a scanned
        class. The compiled code reads it as a global, its data included."""
        if node.value in self.local_imports:
            return None
        module = self.function.module
        if node.value in module.plain_globals:  # `FAST_GELU = True`
            return module.plain_globals[node.value]
        called = module.assignments.get(node.value)
        if not called:
            return None
        if called.startswith("torch."):
            if names_a_class(called):  # `ENGINE = torch.quasirandom.SobolEngine(4)`: an object of that class
                return v.GENERATOR if called == "torch.Generator" else v.ModuleValue(frozenset({called}))
            return v.declared_kind(called)
        if called in v.OBJECT_FACTORIES:  # `_BATCHES = iter(loader)`
            return v.ModuleValue(frozenset({v.OBJECT_FACTORIES[called]}))
        maker = self.project.find_function(called)
        if maker is not None:  # `_STATS = running_stats()`: what the function builds
            made = self.project.built_by(maker)
            return v.ModuleValue(made) if made else None
        built = self.project.find_class(called)
        if built is None:
            return None
        if built.record:  # `EULER = Tableau(alpha=torch.tensor([...]), order=2)`
            return v.ModuleValue(frozenset({called}), fields=self._built_fields(
                called, module.global_calls[node.value], self._module_level_kind))
        return v.ModuleValue(frozenset({called}))  # `STORE = ActivationStore()`: kept from call to call

    def _module_level_kind(self, node: cst.BaseExpression) -> v.Value:
        """What a module-level expression is, read without this function's bindings."""
        return _written_kind(self.function.module, node)

    def _callable_named(self, node: cst.Name | cst.Attribute) -> v.Callables | None:
        """`Euler`, `methods.Euler`, `splines.rational_spline`: a scanned class or function named
        by its import or definition."""
        qualified = self.qualname(node)
        if not qualified or qualified.startswith(("builtins.", "torch.")):
            return None
        if self.project.find_class(qualified) is None and self.project.find_function(qualified) is None:
            return None
        return v.callables(frozenset({qualified}))

    def _numpy_object_dtype(self, call: cst.Call) -> cst.BaseExpression | None:
        """The `dtype=object` (or `str`, `bytes`, `complex`) a NumPy call is given, if it is."""
        dtype = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "dtype"), None)
        return dtype if dtype is not None and self.qualname(dtype) in v.NUMPY_OBJECT_DTYPES else None

    def _table_functions(self, node: cst.Subscript) -> v.Value | None:
        """`routines[self.loss][backend]` on a module-level table of functions (nested dicts,
        `partial`s): any of them."""
        table: cst.BaseExpression = node
        while isinstance(table, cst.Subscript):
            table = table.value
        if not isinstance(table, (cst.Name, cst.Attribute)) or (isinstance(table, cst.Name) and table.value in self.bindings):
            return None
        owner, _, name = (self.qualname(table) or "").rpartition(".")
        module = self.project.find_module(owner) if owner else None
        names = module.callable_tables.get(name, ()) if module is not None else ()
        if not names or not all(self.project.find_function(n) is not None for n in names):
            return None
        return v.callables(frozenset(names))

    def built_classes(self, func: cst.BaseExpression) -> tuple[str, ...]:
        """The scanned classes calling `func` builds an object of: a class (`Solver(...)`), each
        class of a module-level table of them (`SOLVERS[name](...)`), or each class a value may
        be (`solver_fn = select(method)`, where every `return` of `select` names a class)."""
        if isinstance(func, cst.Subscript):
            qualified = self.qualname(func.value)
            owner, _, name = (qualified or "").rpartition(".")
            module = self.project.find_module(owner) if owner else None
            names = module.callable_tables.get(name, ()) if module is not None else ()
            found = tuple(n for n in names if self.project.find_class(n) is not None)
            return tuple(dict.fromkeys(found)) if found and len(found) == len(names) else ()
        qualified = self.qualname(func)
        if qualified and self.project.find_class(qualified) is not None:
            return (qualified,)
        value = self.value(func) if isinstance(func, cst.Name) and func.value in self.bindings else None
        if isinstance(value, v.Callables):
            return tuple(sorted(name for name in value.names if self.project.find_class(name) is not None))
        return ()

    def _built_fields(self, qualified: str, call: cst.Call,
                      kind_of: Callable[[cst.BaseExpression], v.Value] | None = None) -> tuple[tuple[str, v.Value], ...]:
        """What building an object of the class gives its attributes: a dataclass's or
        NamedTuple's fields, by position or by name, or the attributes its `__init__` sets from
        its parameters (`self.loss = loss`). Arguments after a `*` spread are not placed. `kind_of`
        tells an argument's value (this function's `value` by default)."""
        kind_of = kind_of or self.value
        info = self.project.find_class(qualified)
        lineage = self.project.class_lineage(info) if info is not None else []
        maker = next((c for c in lineage if c.record or "__init__" in c.methods), None)
        if maker is None:
            return ()
        if maker.record and "__init__" not in maker.methods:
            names = list(dict.fromkeys(name for c in reversed(lineage) if c.record for name in c.annotated))
            parameters, attributes = names, {name: name for name in names}
        else:
            params = maker.methods["__init__"].node.params
            parameters = [p.name.value for p in (*params.posonly_params, *params.params)][1:]  # after `self`
            attributes = maker.attr_params
        given: dict[str, v.Value] = {}
        for position, argument in enumerate(a for a in call.args if a.keyword is None):
            if argument.star:
                break
            if position < len(parameters):
                given[parameters[position]] = kind_of(argument.value)
        given.update((a.keyword.value, kind_of(a.value)) for a in call.args if a.keyword is not None)
        return tuple((attr, given[param]) for attr, param in attributes.items() if param in given)

    def _argument_kinds(self, call: cst.Call) -> tuple[list[v.Value], dict[str, v.Value]]:
        """The kinds of a call's positional arguments, and of its keyword arguments by name (in order)."""
        positional = [self.value(a.value) for a in call.args if a.keyword is None and not a.star]
        return positional, {a.keyword.value: self.value(a.value) for a in call.args if a.keyword is not None}

    def _imported(self, func: cst.BaseExpression) -> bool:
        """Whether the called name comes from an import statement (module-level or local)."""
        head = (dotted_name(func) or "").split(".", 1)[0]
        return head in self.local_imports or (head not in self.bindings and head in self.function.module.imports)

    def _carries_tensor(self, argument: cst.Arg) -> bool:
        kind = self.value(argument.value)
        # A keyword left at None (`disable=None`) is an option, not data: an optional value counts
        # only when passed positionally.
        return kind in (v.TENSOR, v.TENSORS) or (kind == v.MAYBE_TENSOR and argument.keyword is None)

    def _passed_through(self, call: cst.Call, callee: FunctionInfo, positions: frozenset[int]) -> v.Value:
        """What an identity-like helper (`default(val, d)`) returns for this call: the kinds of the
        arguments it hands back; for a lambda, what calling it gives (`default(mask, lambda: ...)`)."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        star = callee.node.params.star_arg
        variadic_from = len(callee.positional_params) if isinstance(star, cst.Param) else None
        handed_back = [argument for i in sorted(positions)
                       for argument in (positional[i:] if i == variadic_from else positional[i:i + 1])]
        kinds = [self.value(a.body if isinstance(a, cst.Lambda) else a) for a in handed_back]
        return functools.reduce(v.join, kinds, v.OTHER)

    # -- bindings --------------------------------------------------------------------------
    def bind(self, target: cst.BaseExpression, value: v.Value, source: cst.BaseExpression | None = None) -> None:
        if isinstance(target, cst.Name):
            self._set(target.value, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = source.elements if isinstance(source, (cst.Tuple, cst.List)) else None
            returned = self._returned_items(source, len(target.elements))
            for position, element in enumerate(target.elements):
                if elements is not None and position < len(elements) and not isinstance(element, cst.StarredElement):
                    self.bind(element.value, self.value(elements[position].value), elements[position].value)
                elif returned is not None:
                    self.bind(element.value, returned[position])
                elif isinstance(value, v.Container) and value.items is not None and len(value.items) == len(
                        target.elements) and not isinstance(element, cst.StarredElement):
                    self.bind(element.value, value.items[position])
                else:
                    self.bind(element.value, self._element_of(value))
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, v.TENSORS if value in (v.TENSOR, v.TENSORS) else v.OTHER)
        elif (key := self._own_attribute(target)) is not None:
            self._set(key, value)  # `self.step_t = step_t`: read back as such further on
            self.own_stores.add(key)

    def _own_attribute(self, node: cst.BaseExpression) -> str | None:
        """`self.attr` on the object the method runs on, as the name its value is bound under."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and (
                self.bindings.get(node.value.value) == v.SELF):
            return f"{node.value.value}.{node.attr.value}"
        return None

    def _returned_parameters(self, value: cst.BaseExpression | None) -> frozenset[int] | None:
        """Positions of the parameters a `return` may hand back as they came; None if it may return
        anything else (constants and None are fine: they are never tensors)."""
        if value is None or isinstance(value, (cst.BaseNumber, cst.BaseString)) or (
                isinstance(value, cst.Name) and value.value in ("None", "True", "False")):
            return frozenset()
        if isinstance(value, cst.IfExp):
            body, orelse = self._returned_parameters(value.body), self._returned_parameters(value.orelse)
            return None if body is None or orelse is None else body | orelse
        if isinstance(value, cst.Call) and not value.args:  # `arg()`: calls what the caller passed
            value = value.func
        if isinstance(value, cst.Name) and value.value in self._parameter_positions:
            return frozenset({self._parameter_positions[value.value]})
        return None

    def _returned_items(self, source: cst.BaseExpression | None, count: int) -> tuple[v.Value, ...] | None:
        """`a, b = helper(x)`: the kinds the helper's tuple returns hold, position by position."""
        if not isinstance(source, cst.Call):
            return None
        callee = self.callee(source)
        if callee is None:
            return None
        self.result.summaries_read.add((callee.key, "items"))
        items = self.project.return_items(callee)
        return items if items is not None and len(items) == count else None

    def _forget(self) -> None:
        """A name was bound or unbound: values and qualified names computed so far may be stale."""
        self._memo.clear()
        self._qualnames.clear()
        self._callees.clear()

    def _set(self, name: str, value: v.Value) -> None:
        self.bindings[name] = value
        self.rebound.add(name)
        self._parameter_positions.pop(name, None)  # rebound: no longer what the caller passed
        self._forget()

    @staticmethod
    def _element_of(value: v.Value) -> v.Value:
        if v.sort_of(value) == "dict":
            # Iterating a dict gives its keys: the constant strings it was built with, or, where
            # they are not tracked, names and numbers (a tensor key would hash by identity).
            return v.STR if isinstance(value, v.Container) and value.keys is not None else v.OTHER
        if isinstance(value, v.Container) and value.items:
            return functools.reduce(v.join, value.items)
        if isinstance(value, v.Container) and value.elements is not None and value.sort != "dict":
            return value.elements
        if v.is_vector(value):
            return v.ZERO_DIM  # `for t in torch.arange(n)`: each a 0-d tensor
        if value in (v.TENSOR, v.TENSORS):
            if v.is_assumed_tensor(value) or v.data_held(value) == "size":
                # `zip(sizes, scale)`: each element as the sequence was assumed; `a, b =
                # torch.unique_consecutive(...)`: each result sized by the data
                return value
            return v.SOME_PATHS_TENSOR if v.on_some_paths(value) else v.TENSOR
        if value == v.SHAPE:
            return v.INT  # `b, c = x.size()`, `for n in x.shape`
        if v.varying_constant(value) == "literal":
            return value  # `lo, hi = clip` where the declared calls give other tuples: other items too
        return value if isinstance(value, v.ModuleValue) or value == v.UNKNOWN else v.OTHER

    def _bind_for(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        if self._bind_element(target, iterable):
            return
        self.bind(target, self._iterated(iterable))
        if self._variadic and isinstance(iterable, cst.Name) and iterable.value == self._variadic[0] and (
                isinstance(target, cst.Name)):
            self._parameter_positions[target.value] = self._variadic[1]

    def _bind_element(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> bool:
        """`for i, (a, b) in enumerate(zip(xs, ys))`: each name bound to an element of the sequence
        it comes from, however `enumerate` and `zip` nest; False when the iterable is neither."""
        called = self.qualname(iterable.func) if isinstance(iterable, cst.Call) else None
        if not isinstance(iterable, cst.Call) or called not in ("builtins.enumerate", "builtins.zip") or not (
                isinstance(target, (cst.Tuple, cst.List))):
            return False
        inner = [a.value for a in iterable.args if a.keyword is None]  # not `start=`, `strict=`
        elements = [e.value for e in target.elements if not isinstance(e, cst.StarredElement)]
        if len(elements) != len(target.elements) or any(a.star for a in iterable.args):
            return False
        if called == "builtins.enumerate":
            if len(elements) != 2 or not inner:
                return False
            self.bind(elements[0], v.INT)
            pairs = [(elements[1], inner[0])]
        elif len(elements) != len(inner):
            return False
        else:
            pairs = list(zip(elements, inner))
        for element, source in pairs:
            if not self._bind_element(element, source):
                self.bind(element, self._element_of(self.value(source)))
        return True

    # -- traversal -------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self._silent:
            for handler in self.handlers.get(type(node), ()):
                handler(node, self.context)
        method = _SPECIAL.get(type(node))
        return method(self, node) if method else True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        method = _AFTER.get(type(original_node))
        if method:
            method(self, original_node)

    def _visit_assign(self, node: cst.Assign) -> bool:
        """`x[mask] = v` writes through the index (`index_put_`): the target reads no data."""
        for target in node.targets:
            for element in find_nodes(target.target, (cst.Subscript,), prune=(cst.Subscript,)):
                self._written.add(id(element))
        return True

    def _visit_try(self, node: cst.Try) -> bool:
        """The body is where a break cannot be resumed from; handlers, `else` and `finally` are
        walked as usual."""
        self.try_depth += 1
        self.walk(node.body)
        self.try_depth -= 1
        for part in (*node.handlers, node.orelse, node.finalbody):
            if part is not None:
                self.walk(part)
        return False

    def _visit_match(self, node: cst.Match) -> bool:
        """Each `case` in its own environment: a subject named by the case's class pattern is of
        that class there (`case list() if sample and ...`: a list's truth, not a tensor's); where
        the cases go on, their bindings are joined with those of no case matching."""
        self.walk(node.subject)
        before = dict(self.bindings)
        subject = node.subject.value if isinstance(node.subject, cst.Name) else None
        outcomes = [before]
        outer_rebound, self.rebound = self.rebound, set()
        for case in node.cases:
            narrowed = self._pattern_value(case.pattern) if subject is not None else None
            self._replace_bindings({**before, subject: narrowed} if subject and narrowed is not None else dict(before))
            self._walk_conditionally(Branch(None, True), case)
            if not always_leaves(case.body):
                outcomes.append(self.bindings)
        joined = functools.reduce(lambda a, b: _joined(a, b, v.join_branches), outcomes)
        if subject is not None and subject in before and subject not in self.rebound:
            joined[subject] = before[subject]  # only narrowed: again what it was after the match
        self._replace_bindings(joined)
        self.rebound |= outer_rebound
        return False

    def _pattern_value(self, pattern: cst.MatchPattern) -> v.Value | None:
        """What a subject is where a `case` pattern matched it: `torch.Tensor()` a tensor, `str()`
        a string, `list()` / `[a, b]` a list or tuple, `{...}` a dict; None when the pattern does
        not say (a capture, a value, a user class)."""
        if isinstance(pattern, cst.MatchAs):
            return self._pattern_value(pattern.pattern) if pattern.pattern is not None else None
        if isinstance(pattern, cst.MatchOr):
            values = [self._pattern_value(element.pattern) for element in pattern.patterns]
            return None if None in values else functools.reduce(v.join, [k for k in values if k is not None])
        if isinstance(pattern, cst.MatchSequence):
            return v.container(elements=v.UNKNOWN)
        if isinstance(pattern, cst.MatchMapping):
            return v.container(sort="dict", elements=v.UNKNOWN)
        if isinstance(pattern, cst.MatchClass):
            qualified = self.qualname(pattern.cls)
            if qualified in TENSOR_CLASSES:
                return v.TENSOR
            name = (qualified or "").removeprefix("builtins.")
            if name in ("list", "tuple", "dict"):
                return v.container(sort=name, elements=v.UNKNOWN)
            return _BUILTIN_INSTANCE_KINDS.get(name)
        return None

    def _visit_with(self, node: cst.With) -> bool:
        """The block of a context manager TorchDynamo cannot break under is, like a `try` body,
        where a break cannot be resumed from (probed: "graph break in an active context manager
        that doesn't support graph breaking"); the items are walked as usual."""
        for item in node.items:
            self.walk(item)
        # An object of a scanned class built in the `with`: TorchDynamo runs its `__enter__`, and
        # its `__exit__` after the block (one built before is BS601's: it cannot be entered).
        built = [item.item for item in node.items if isinstance(item.item, cst.Call)
                 and isinstance(value := self.value(item.item), v.ModuleValue) and value.fresh]
        # A break in its `__enter__` cannot be resumed from either (probed: the frame runs eagerly).
        unresumable = any(self._forbids_breaks(item.item) for item in node.items)
        self.try_depth += unresumable
        for manager in built:
            self._implicit_call(manager, ("__enter__",), [])
        self.walk(node.body)
        self.try_depth -= unresumable
        for manager in reversed(built):
            self._implicit_call(manager, ("__exit__",), [v.NONE, v.NONE, v.NONE])
        return False

    def _implicit_call(self, operand: cst.BaseExpression, names: tuple[str, ...], arguments: list[v.Value]) -> None:
        """A method Python runs for an operation on an object of a scanned class (`__enter__` for
        `with`, `__bool__` for `if`), the first of `names` its classes have, as a call at `operand`."""
        methods = self.implicit_methods(operand, names)
        order = next(self.events) if methods else 0
        state = self._receiver_state(operand) if methods else ()
        for method in methods:
            self.result.calls.append(CallSite(method, list(arguments), {}, operand, in_loop=self.loop_depth > 0,
                                              in_try=self.try_depth > 0, order=order, arms=self.arms,
                                              receiver_state=state))

    def implicit_methods(self, operand: cst.BaseExpression, names: tuple[str, ...]) -> list[FunctionInfo]:
        """The methods of the first of `names` the classes of the object `operand` gives have."""
        instance = self.value(operand)
        if not isinstance(instance, v.ModuleValue) or not isinstance(operand, (cst.Call, cst.Attribute, cst.Name)):
            return []
        for name in names:
            methods = self.project.methods_of(instance, name)
            if methods:
                return methods
        return []

    def _truth_tested(self, test: cst.BaseExpression) -> None:
        """`if state:` runs the object's `__bool__` (else its `__len__`)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            self._truth_tested(test.expression)
        elif isinstance(test, cst.BooleanOperation):
            self._truth_tested(test.left)
            self._truth_tested(test.right)
        else:
            self._implicit_call(test, ("__bool__", "__len__"), [])

    def _forbids_breaks(self, manager: cst.BaseExpression) -> bool:
        """A context manager built in the `with` that TorchDynamo enters but cannot break under:
        a scanned `@contextmanager` generator, an object of a scanned class with its own
        `__enter__`, `warnings.catch_warnings()` (the torch ones, `nullcontext()`, `sdpa_kernel`,
        `record_function` can be broken under; probed)."""
        if not isinstance(manager, cst.Call):
            return False
        qualified = self.qualname(manager.func)
        if qualified == "warnings.catch_warnings":
            return True
        # A `@contextmanager` function or a method of the object's classes (`self._hooks()`).
        functions = self.callees(manager)
        if functions:
            return all(any(d in _GENERATOR_CONTEXT_MANAGERS for d in f.decorators) for f in functions)
        if qualified is None:
            return False
        info = self.project.find_class(qualified)
        return (info is not None and not self.project.is_module_class(info)
                and self.project.method(self.project.class_lineage(info), "__enter__") is not None)

    def _visit_if(self, node: cst.If) -> bool:
        outcome = self.compile_time_truth(node.test)
        if outcome is None:
            self.walk(node.test)
            self._truth_tested(node.test)
            self._walk_branches(node.test, node.body, node.orelse)
        elif outcome:
            self.walk(node.body)
        elif node.orelse is not None:
            self.walk(node.orelse)
        return False

    def _visit_block(self, node: cst.IndentedBlock) -> bool:
        """The statements in order, up to an `if` whose test TorchDynamo decides while tracing and
        whose taken branch leaves (`if not set_rng: return self.net(x)` with `set_rng` left at
        False): what follows it is never traced."""
        for statement in node.body:
            self.walk(statement)
            if isinstance(statement, cst.If) and self._leaves_for_certain(statement):
                break
        return False

    def _leaves_for_certain(self, node: cst.If) -> bool:
        outcome = self.compile_time_truth(node.test)
        if outcome:
            return always_leaves(node.body)
        if outcome is None or node.orelse is None:
            return False
        return self._leaves_for_certain(node.orelse) if isinstance(node.orelse, cst.If) else always_leaves(node.orelse)

    def _visit_ifexp(self, node: cst.IfExp) -> bool:
        outcome = self.compile_time_truth(node.test)
        if outcome is None:
            self.walk(node.test)
            self._truth_tested(node.test)
            self._walk_branches(node.test, node.body, node.orelse)
            return False
        self.walk(node.body if outcome else node.orelse)
        return False

    def _visit_boolean(self, node: cst.BooleanOperation) -> bool:
        """`x is not None and f(x)`: the right operand runs only where the left one is true (false
        for `or`), so it sees the names the left one pins down."""
        self.walk(node.left)
        narrowed = self._right_operand_narrowings(node.left, node.operator)
        self.operand_arms.append((id(node.left), isinstance(node.operator, cst.And)))
        if not narrowed:
            self.walk(node.right)
            self.operand_arms.pop()
            return False
        before = {name: self.bindings[name] for name in narrowed if name in self.bindings}
        self._replace_bindings({**self.bindings, **narrowed})
        self.walk(node.right)
        self.operand_arms.pop()
        restored = {name: value for name, value in self.bindings.items() if name not in narrowed}
        self._replace_bindings({**restored, **before})
        return False

    def _right_operand_narrowings(self, left: cst.BaseExpression, operator: cst.BaseBooleanOp) -> dict[str, v.Value]:
        when_true, when_false = narrowings(left, self)
        return when_true if isinstance(operator, cst.And) else when_false

    def _value_narrowed_by(self, left: cst.BaseExpression, right: cst.BaseExpression,
                           operator: cst.BaseBooleanOp) -> v.Value:
        """The value of an `and`/`or`'s right operand, which runs only where the left one is true
        (false for `or`), with the names the left one pins down; the names stay as they are here."""
        narrowed = self._right_operand_narrowings(left, operator)
        if not narrowed:
            return self.value(right)
        saved = self.bindings, self._memo, self._qualnames, self._callees
        self.bindings, self._memo, self._qualnames, self._callees = {**self.bindings, **narrowed}, {}, {}, {}
        try:
            return self.value(right)
        finally:
            self.bindings, self._memo, self._qualnames, self._callees = saved

    def _walk_branches(self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None) -> None:
        """Each branch in its own environment, narrowed by the test (`isinstance`, `is None`, an
        optional's truthiness); where both go on, their bindings are joined. A branch that always
        leaves (`return`, `raise`, `continue`, `break`) leaves only the other's bindings behind."""
        before = dict(self.bindings)
        when_true, when_false = narrowings(test, self)
        outer_rebound, self.rebound = self.rebound, set()
        self._replace_bindings({**before, **when_true})
        self._walk_conditionally(Branch(test, True), body)
        after_body, body_leaves = self.bindings, always_leaves(body)
        self._replace_bindings({**before, **when_false})
        if orelse is not None:
            self._walk_conditionally(Branch(test, False), orelse)
        after_else, else_leaves = self.bindings, orelse is not None and always_leaves(orelse)
        if body_leaves and not else_leaves:
            self._replace_bindings(after_else)
        elif else_leaves and not body_leaves:
            self._replace_bindings(after_body)
        else:
            joined = _joined(after_body, after_else, v.join_branches)
            # A name the test only narrowed (`if mask is not None: ...` leaving `mask` alone) is
            # again what it was: both branches go on with the same value.
            joined.update({name: before[name] for name in {**when_true, **when_false}
                           if name in before and name not in self.rebound})
            self._replace_bindings(joined)
        self.rebound |= outer_rebound

    @property
    def arms(self) -> Arms:
        """The `if` arms around the node being visited (see `exclusive`), and the `and`/`or` right
        operands it is in (`isinstance(p, str) and os.path.exists(p)`: it runs on some paths only)."""
        return tuple((id(branch.test), branch.when) for branch in self.conditions if branch.test is not None) + tuple(
            self.operand_arms)

    def _walk_conditionally(self, branch: "Branch", block: cst.CSTNode) -> None:
        self.conditions.append(branch)
        self.walk(block)
        self.conditions.pop()

    def _visit_except(self, node: cst.ExceptHandler) -> bool:
        if node.type is not None:
            self.walk(node.type)
        self._walk_conditionally(Branch(None, True), node.body)
        return False

    def _replace_bindings(self, bindings: dict[str, v.Value]) -> None:
        self.bindings = bindings
        self._forget()

    def compile_time_truth(self, test: cst.BaseExpression) -> bool | None:
        """True/False when the test's value under TorchDynamo is known (`is_compiling()` guards, a literal
        `True`/`False`, `TYPE_CHECKING`, a module-level flag the code writes out and no function
        switches): only that branch is traced."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.compile_time_truth(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            left, right = self.compile_time_truth(test.left), self.compile_time_truth(test.right)
            if isinstance(test.operator, cst.And):
                return False if False in (left, right) else (True if left and right else None)
            return True if True in (left, right) else (False if left is False and right is False else None)
        if isinstance(test, cst.Name) and test.value in ("True", "False"):
            return test.value == "True"
        if isinstance(test, cst.Name) and test.value in self.bindings:
            known = v.known_truth(self.bindings[test.value])
            if known is not None:
                return known  # `if set_rng:` where every call site leaves it at `set_rng=False`
        if isinstance(test, cst.Name) and test.value not in self.bindings and test.value in (
                self.function.module.global_flags):
            return self.function.module.global_flags[test.value]  # `DEBUG = False` at module level
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._comparison_truth(test.left, test.comparisons[0])
        if self.qualname(test) == "typing.TYPE_CHECKING":
            return False
        if isinstance(test, cst.Call) and self._never_a_tensor_instance(test):
            return False
        if isinstance(test, cst.Call) and not test.args:
            last = (dotted_name(test.func) or "").rsplit(".", 1)[-1]
            if last in TRACING_GUARDS:
                return False
            if last in COMPILING_GUARDS:
                return True
        return None

    def _never_a_tensor_instance(self, test: cst.Call) -> bool:
        """`isinstance(n, torch.Tensor)` where `n` holds a Python number, string, None, shape or
        container: TorchDynamo knows the answer while tracing, and only the false branch runs
        (`get_same_padding(ih, ...)` on a size read from `x.shape`). Not an `other` object, which
        may be a tensor subclass the analysis cannot see."""
        classes = isinstance_classes(test, self)
        if classes is None or not classes <= TENSOR_CLASSES:
            return False
        value = self.value(test.args[0].value)
        return (v.is_plain(value) and value != v.OTHER) or isinstance(value, v.Container)

    def _comparison_truth(self, left: cst.BaseExpression, target: cst.ComparisonTarget) -> bool | None:
        """`x is None` where the name `x` is known to be None (a parameter every caller leaves at
        None, a local bound to it) or a container built here; `n == "warn"` where `n` is known to be
        a number (or a string compared with a number): TorchDynamo specialises on these, and so
        does the lint. Not decided: attributes (what `__init__` sets is not all they hold), and
        values an annotation declares (`-> int` on a property that starts as None) or a guess
        (an unannotated parameter taken to be a tensor)."""
        right = target.comparator
        operator = target.operator
        if isinstance(operator, (cst.Is, cst.IsNot)):
            other = right if v.literal_kind(left) == v.NONE else left if v.literal_kind(right) == v.NONE else None
            if not isinstance(other, cst.Name):
                return None
            value = self.value(other)
            # Not an object: joined with None, an object stays an object (`join`).
            is_none = True if value == v.NONE and value.name == v.NONE.name else False if isinstance(
                value, v.Container) else None
            if is_none is None and self.called and other.value in self._parameter_positions and any(
                    v.identical(value, number) for number in (v.INT, v.FLOAT, v.BOOL, v.STR, v.SHAPE)):
                is_none = False  # a helper's parameter every call site gives a number it computed: never None
            return None if is_none is None else is_none == isinstance(operator, cst.Is)
        if isinstance(operator, (cst.Equal, cst.NotEqual)):
            kinds = {self.value(left), self.value(right)}
            if v.STR in kinds and kinds & v.NUMBERS and len(kinds) == 2:
                return isinstance(operator, cst.NotEqual)  # a number never equals a string
        return None

    def _visit_for(self, node: cst.For) -> bool:
        self.walk(node.iter)
        self._implicit_call(node.iter, ("__iter__",), [])  # `for layer in self.layers:` on a scanned container class

        def iteration() -> None:
            self._bind_for(node.target, node.iter)
            self.walk(node.body)

        self._walk_loop(iteration)
        if node.orelse is not None:
            self.walk(node.orelse)
        return False

    def _walk_loop(self, iteration: Callable[[], None]) -> None:
        """A loop's body with the values its names hold on any iteration: silent passes (no rule
        runs, nothing is recorded) join what one iteration leaves with what the loop started with,
        until nothing changes; then rules see the body once, under those values. After the loop,
        a name holds what it held before or what an iteration left (it may run zero times)."""
        self.loop_depth += 1
        if not self._silent:  # inside a silent pass, one iteration is enough
            for _ in range(MAX_SILENT_PASSES):
                head = dict(self.bindings)
                with self._silenced():
                    iteration()
                self._replace_bindings(_joined(head, self.bindings))
                if self.bindings == head:
                    break
        head = dict(self.bindings)
        iteration()
        self._replace_bindings(_joined(head, self.bindings))
        self.loop_depth -= 1

    @contextlib.contextmanager
    def _silenced(self) -> Iterator[None]:
        kept, self.result, self._silent = self.result, FunctionResult(), True
        try:
            yield
        finally:
            self.result, self._silent = kept, False

    def _visit_while(self, node: cst.While) -> bool:
        # TorchDynamo resumes after a break in the test's first evaluation, which comes before the
        # loop; the body then runs, and the test breaks again inside the loop, skipping the frame.
        self.walk(node.test)
        # Rules report a test on the `while` itself (their handlers ran before this) or on a part of it.
        test = subtree_ids(node.test) | {id(node)}
        test_breaks = any(f.severity == "error" and id(f.node) in test for f in self.result.findings)

        def iteration() -> None:
            self.walk(node.body)
            if self._silent:
                self.walk(node.test)  # evaluated again before each further iteration

        self._walk_loop(iteration)
        if test_breaks:
            self.result.frame_skips.append((next(self.events), self.arms))
        if node.orelse is not None:
            self.walk(node.orelse)
        return False

    def _visit_comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> bool:
        """In a scope of its own, as in Python 3: its loop variables do not leak into the function.
        What it builds is valued inside that scope and kept (`_scoped`)."""
        outer = dict(self.bindings)
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            self.walk(comp.iter)
            self._implicit_call(comp.iter, ("__iter__",), [])
            self._bind_for(comp.target, comp.iter)
            for condition in comp.ifs:
                self.walk(condition)
            comp = comp.inner_for_in
        # Not a loop of this frame for TorchDynamo: a break inside a comprehension does not make it
        # skip the enclosing function.
        if isinstance(node, cst.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        self._scoped[id(node)] = self._compute_value(node)
        self._replace_bindings(outer)
        return False

    def _comprehension_value(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> v.Value:
        """What a comprehension builds, asked before the walk reaches it (a rule on the call it
        is given to): valued in its own scope, as the walk will, and left as it was."""
        outer, rebound, positions = dict(self.bindings), set(self.rebound), dict(self._parameter_positions)
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            self._bind_for(comp.target, comp.iter)
            comp = comp.inner_for_in
        found = self._compute_value(node)
        self._replace_bindings(outer)
        self.rebound, self._parameter_positions = rebound, positions
        return found

    def _mapped_value(self, function: cst.Lambda, iterables: list[cst.BaseExpression]) -> v.Value:
        """`map(lambda x: x.shape[1] > 0, (q, k))`: what the lambda gives for the elements of
        what it is mapped over (Python bools here, not tensors)."""
        return v.container(elements=self._lambda_result(function, [self._iterated(i) for i in iterables]))

    def _lambda_result(self, function: cst.Lambda, arguments: list[v.Value]) -> v.Value:
        """What a lambda's body gives with its parameters bound to `arguments`."""
        outer, rebound, positions = dict(self.bindings), set(self.rebound), dict(self._parameter_positions)
        for parameter, argument in zip(_all_params(function.params), arguments):
            self._set(parameter.name.value, argument)
        found = self.value(function.body)
        self._replace_bindings(outer)
        self.rebound, self._parameter_positions = rebound, positions
        return found

    def _iterated(self, iterable: cst.BaseExpression) -> v.Value:
        """What iterating `iterable` gives; a dict's `items()` gives (key, value) tuples and its
        `values()` its values."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
            view = iterable.func.attr.value
            owner = self.value(iterable.func.value)
            if view in ("items", "values") and v.sort_of(owner) == "dict":
                values = v.held(owner)
                if values is not None:
                    return values if view == "values" else v.container(items=(v.STR, values), sort="tuple")
        if isinstance(iterable, cst.Call) and iterable.args:
            called = self.qualname(iterable.func)
            if called == "builtins.range":
                return v.INT
            if called == "builtins.reversed":
                return self._iterated(iterable.args[0].value)
        return self._element_of(self.value(iterable))

    def sort_keys(self, items: cst.BaseExpression, key: cst.BaseExpression | None) -> v.Value:
        """What a sort of `items` compares (see RegionContext.sort_keys)."""
        item = self._iterated(items)
        if key is None:
            return item
        if isinstance(key, cst.Lambda):
            return self._lambda_result(key, [item])
        if isinstance(key, cst.Attribute) and key.attr.value in ("get", "__getitem__"):  # `key=scores.get`
            owner = self.value(key.value)
            if owner == v.TENSOR and key.attr.value == "__getitem__":
                return v.TENSOR  # `key=scores.__getitem__`: an element of a tensor is a 0-d tensor
            return v.held(owner) or v.UNKNOWN
        qualified = self.qualname(key)
        if qualified is not None and qualified.startswith("torch.") and item in (v.TENSOR, v.TENSORS):
            return v.torch_call_value(qualified)  # `key=torch.norm`
        return v.UNKNOWN

    def _visit_function(self, node: cst.FunctionDef) -> bool:
        decorators = {self.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) for d in node.decorators}
        if decorators & {"torch.compiler.disable", "torch._dynamo.disable"}:
            self._set(node.name.value, v.OTHER)
            return False
        # A closure is traced when it is called; its parameters take what the enclosing code passes
        # and, like its locals, do not leak into the enclosing function's names.
        outer = dict(self.bindings)
        result = self.result
        returned = (result.returns, result.return_items, result.passthrough, result._returns_seen, self._yielded)
        for parameter in _all_params(node.params):
            self._set(parameter.name.value, _local_parameter_kind(parameter, self._expand))
        self.walk(node.body)
        # Its `return`s and `yield`s are its own, not the enclosing function's.
        result.returns, result.return_items, result.passthrough, result._returns_seen, self._yielded = returned
        self._replace_bindings(outer)
        self._set(node.name.value, v.OTHER)
        return False

    def _visit_lambda(self, node: cst.Lambda) -> bool:
        outer = dict(self.bindings)  # its parameters are its own
        for parameter in _all_params(node.params):
            self._set(parameter.name.value, _local_parameter_kind(parameter, self._expand))
        self.walk(node.body)
        self._replace_bindings(outer)
        return False

    def _visit_class(self, node: cst.ClassDef) -> bool:
        return False

    def _after_assign(self, node: cst.Assign) -> None:
        kind = self.value(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):  # `d["n"] = t`: what it holds there changed
                self._forget_items(target.target.value, kind, _constant_index(target.target))
            self.bind(target.target, kind, node.value)

    def _forget_items(self, holder: cst.BaseExpression, added: v.Value | None, key: int | str | None = None) -> None:
        """A list or dict built here was changed in place: it holds what it held, or `added` (None:
        nothing was added, some may be gone); it stays a list or a dict (what iterating it gives).
        A dict whose keys are known keeps them, with `added` at a constant `key`. So does one the
        function's own object holds (`self.last[name] = loss.detach()`)."""
        name = holder.value if isinstance(holder, cst.Name) else self._own_attribute(holder)
        if isinstance(holder, cst.Attribute) and name is not None and name not in self.bindings:
            current = self.value(holder)  # as the object's class sets it: `self.last = {}`
            if isinstance(current, v.Container):
                self._set(name, current)
        if name is not None and isinstance(self.bindings.get(name), v.Container):
            held = self.bindings[name]
            if held.sort == "dict" and held.keys is not None:
                if added is None:
                    return  # `kwargs.pop("scale", 1.0)`: the other keys hold what they held
                if isinstance(key, str):
                    keys = (*((k, x) for k, x in held.keys if k != key), (key, added))
                    elements = held.elements
                else:  # `kwargs[name] = t`: any key may hold it now
                    keys = tuple((k, v.join(x, added)) for k, x in held.keys)
                    elements = added if held.elements is None else v.join(held.elements, added)
                self._set(name, v.container(keys=keys, sort="dict", elements=elements))
                return
            if added is None:
                self._set(name, v.container(sort=held.sort, holds_tensors=held == v.TENSORS, elements=v.held(held)))
                return
            empty = held.elements is None and (held.items == () or held.keys == ())
            self._set(name, v.container(sort=held.sort,
                                        holds_tensors=v.TENSORS in (held, added) or added == v.TENSOR,
                                        elements=added if empty else v.join_held(v.held(held), added)))

    def _after_annassign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, self.value(node.value), node.value)

    def _after_augassign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            value = v.join(self.value(node.target), self.value(node.value))
            if v.is_mask(value) and not isinstance(node.operator, (cst.BitAndAssign, cst.BitOrAssign, cst.BitXorAssign)):
                value = v.TENSOR  # `m *= 2` makes numbers of a mask; `keep &= other` keeps one
            self._set(node.target.value, value)

    def _after_assert(self, node: cst.Assert) -> None:
        """Past `assert edge_type is not None` (or an `isinstance`), the test held."""
        when_true, _ = narrowings(node.test, self)
        if when_true:
            self._replace_bindings({**self.bindings, **when_true})

    def _after_namedexpr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, self.value(node.value))

    def _after_withitem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, self.value(node.item))

    def _after_import(self, node: cst.Import | cst.ImportFrom) -> None:
        for local, qualified in import_bindings(node, self.function.module.package):
            self.local_imports[local] = qualified
            self.bindings.pop(local, None)
            self._forget()

    def _after_return(self, node: cst.Return) -> None:
        self._record_exit()
        result = self.result
        positions = self._returned_parameters(node.value)
        if not result._returns_seen:
            result.passthrough = positions
        elif result.passthrough is not None:
            result.passthrough = None if positions is None else result.passthrough | positions
        if node.value is None:
            result._returns_seen = True
            return
        returned = self.value(node.value)
        # The first `return` gives the value as it is (a container keeps what it holds).
        result.returns = v.join(result.returns, returned) if result._returns_seen else returned
        items = None
        if isinstance(node.value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in node.value.elements):
            items = tuple(self.value(e.value) for e in node.value.elements)
        if not result._returns_seen:
            result.return_items = items
        elif items is None or result.return_items is None or len(items) != len(result.return_items):
            result.return_items = None
        else:
            result.return_items = tuple(v.join(a, b) for a, b in zip(result.return_items, items))
        result._returns_seen = True

    def _after_yield(self, node: cst.Yield) -> None:
        if not self._silent and any(d in _GENERATOR_CONTEXT_MANAGERS for d in self.function.decorators) and any(
                f.rule.kind == "break" and f.severity == "error" and not f.arms and not f.only_if_eager
                for f in self.result.findings):
            # A `@contextmanager` generator that breaks before its `yield` on every path: TorchDynamo
            # cannot break while entering it and runs the frame that uses it eagerly (probed), so
            # what follows the `yield` (its exit) never breaks.
            self.result.frame_skips.append((next(self.events), self.arms))
        if node.value is None:
            value: v.Value = v.NONE
        elif isinstance(node.value, cst.From):  # `yield from items`: each of its elements
            value = self._element_of(self.value(node.value.item))
        else:
            value = self.value(node.value)
        self._yielded = value if self._yielded is None else v.join(self._yielded, value)

    def _property(self, node: cst.Attribute) -> FunctionInfo | None:
        """The `@property` that reading `self.attr` (or `module.attr`) runs, when the class has one."""
        base = self.value(node.value)
        if base != v.SELF and not isinstance(base, v.ModuleValue):
            return None
        found = self.project.method(self._classes_of(base), node.attr.value)
        if found is None or not found.is_property:
            return None
        return self.project.bound(found, self.cls) if base == v.SELF else found

    def _after_attribute(self, node: cst.Attribute) -> None:
        prop = self._property(node)
        if prop is not None:  # reading it runs its body under TorchDynamo, as a call would
            self.result.calls.append(CallSite(prop, [], {}, node, in_loop=self.loop_depth > 0, in_try=self.try_depth > 0,
                                              arms=self.arms, order=next(self.events),
                                              receiver_state=self._receiver_state(node.value)))

    def _after_call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _REMOVING_METHODS:  # `kwargs.pop("scale")`
            self._forget_items(func.value, None)
        elif isinstance(func, cst.Attribute) and func.attr.value == "update" and (
                named := self._named_keys(node)) is not None:
            for key, value in named:  # `kwargs.update(context=c)`: that key only
                self._forget_items(func.value, value, key)
        elif isinstance(func, cst.Attribute) and func.attr.value in _MUTATING_METHODS:  # `items.append(t)`
            given = [self.value(a.value) for a in node.args]
            if func.attr.value in ("extend", "update"):  # what the other container holds
                given = [v.held(g) or g if isinstance(g, v.Container) else g for g in given]
            added = functools.reduce(v.join, given, v.OTHER)
            self._forget_items(func.value, added)
        hook = self.traced_hook(node)
        if hook is not None:  # the hook runs as it is registered, given the gradient
            order = next(self.events)
            for function in self.project.callable_functions(self, hook):
                self.result.calls.append(CallSite(function, [v.TENSOR], {}, node, in_loop=self.loop_depth > 0,
                                                  in_try=self.try_depth > 0, order=order, arms=self.arms))
            return
        callees = self.callees(node, constructors=True)
        callees = callees + self._duck_typed_callees(node, callees)
        if not callees:
            return
        arguments, keywords, spreads = self._passed(node)
        if self.project.autograd_forward(self, node) is not None:
            arguments = [v.OTHER, *arguments]  # `forward(ctx, ...)`: `apply` passes the context first
        order = next(self.events)
        receiver = self._own_receiver(func.value) if isinstance(func, cst.Attribute) else None
        state = self._receiver_state(func.value) if isinstance(func, cst.Attribute) else ()
        for callee in callees:
            self.result.calls.append(CallSite(callee, arguments, keywords, node, in_loop=self.loop_depth > 0,
                                              in_try=self.try_depth > 0, order=order, arms=self.arms,
                                              spreads=spreads, receiver_state=state))
        if receiver is not None:
            self._apply_stores(receiver, callees)

    def traced_hook(self, call: cst.Call) -> cst.BaseExpression | None:
        """The hook of `h.register_hook(hook)` on a tensor computed in the compiled code, which
        TorchDynamo traces when it is registered; None for any other call, and for a hook on an
        input or a parameter (`x`, `self.weight`), which is registered when the graph runs."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "register_hook" and call.args):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Attribute) or (isinstance(receiver, cst.Name) and (
                receiver.value in self._parameter_positions)) or self.value(receiver) != v.TENSOR:
            return None
        return call.args[0].value

    def _own_receiver(self, receiver: cst.BaseExpression) -> str | None:
        """The name the function's own object is bound to, when `receiver` is it (`self`, or `super()`)."""
        if isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "super":
            params = [*self.function.node.params.posonly_params, *self.function.node.params.params]
            receiver = params[0].name if params else receiver
        if isinstance(receiver, cst.Name) and self.bindings.get(receiver.value) == v.SELF:
            return receiver.value
        return None

    def _receiver_state(self, receiver: cst.BaseExpression) -> tuple[tuple[str, v.Value], ...]:
        """What a method called on `receiver` reads its attributes as: those this function has set
        so far, when it is its own object; those building it gave, when it is an object it built
        (`dets = Detections(boxes, scores)`, then `if dets:` runs `__bool__` on those tensors)."""
        name = self._own_receiver(receiver)
        if name is not None:
            return tuple(self._own_state(name).items())
        built = self.value(receiver)
        return built.fields if isinstance(built, v.ModuleValue) else ()

    def _own_state(self, name: str) -> dict[str, v.Value]:
        prefix = name + "."
        return {key[len(prefix):]: value for key, value in self.bindings.items() if key.startswith(prefix)}

    def _record_exit(self) -> None:
        """The attributes set on the function's own object on every way out of it so far (a
        method's callers read them so after the call: `self._stats(x)` then `self.mean`)."""
        params = [*self.function.node.params.posonly_params, *self.function.node.params.params][:1]
        if not params or self.bindings.get(params[0].name.value) != v.SELF:
            return
        prefix = params[0].name.value + "."
        state = {attribute: value for attribute, value in self._own_state(params[0].name.value).items()
                 if prefix + attribute in self.own_stores}
        stores = self.result.stores
        self.result.stores = state if stores is None else {
            attribute: v.join(stores[attribute], value) for attribute, value in state.items() if attribute in stores}

    def _apply_stores(self, receiver: str, callees: list[FunctionInfo]) -> None:
        """After a method call on the function's own object: the attributes every method it may
        run sets on every way out."""
        methods = [callee for callee in callees if callee.class_name is not None and not callee.is_staticmethod]
        if not methods:
            return
        for callee in methods:
            self.result.summaries_read.add((callee.key, "stores"))
        stores = [self.project.stored_attributes(callee) for callee in methods]
        for attribute in set.intersection(*(set(stored) for stored in stores)):
            value = functools.reduce(v.join, (stored[attribute] for stored in stores))
            # An object the method built and kept is the object's, not one this function holds fresh.
            self._set(f"{receiver}.{attribute}",
                      dataclasses.replace(value, fresh=False) if isinstance(value, v.ModuleValue) else value)
            self.own_stores.add(f"{receiver}.{attribute}")

    def _named_keys(self, call: cst.Call) -> list[tuple[str, v.Value]] | None:
        """The keys and values a `dict.update` call stores, when each is named: keyword
        arguments, or a dict whose keys are all known; None otherwise."""
        named: list[tuple[str, v.Value]] = []
        for argument in call.args:
            if argument.keyword is not None:
                named.append((argument.keyword.value, self.value(argument.value)))
                continue
            given = self.value(argument.value)
            if argument.star == "*" or not (isinstance(given, v.Container) and given.sort == "dict"
                                            and given.keys is not None and given.elements is None):
                return None
            named.extend(given.keys)
        return named

    def _passed(self, node: cst.Call) -> tuple[list[v.Value], dict[str, v.Value], bool]:
        """What a call passes by position, a `*tuple` whose items are known spread out
        (`f(*flatten(x, y))` with `flatten` returning two tensors), and by name, a `**dict`'s
        constant keys included (`f(**{"scale": s})`); and whether it also passes something
        whose positions or names are not known (`*args`, `**kwargs`), after which nothing more
        is placed by position."""
        arguments: list[v.Value] = []
        keywords: dict[str, v.Value] = {}
        spreads = False
        for argument in node.args:
            if argument.keyword is not None:
                keywords[argument.keyword.value] = self._passed_value(argument.value, node)
            elif argument.star == "**":
                spread = self.value(argument.value)
                if isinstance(spread, v.Container) and spread.keys is not None:
                    keywords.update(spread.keys)
                if not (isinstance(spread, v.Container) and spread.keys is not None and spread.elements is None):
                    spreads = True
            elif spreads:
                continue
            elif argument.star == "*":
                spread = self.value(argument.value)
                if isinstance(spread, v.Container) and spread.items is not None and spread.sort != "dict":
                    arguments.extend(spread.items)
                else:
                    spreads = True
            else:
                arguments.append(self._passed_value(argument.value, node))
        return arguments, keywords, spreads

    def _passed_value(self, argument: cst.BaseExpression, call: cst.Call) -> v.Value:
        """What an argument passes: a value the declared calls vary that this function read before
        the call is the one constant its guard holds."""
        value = self.value(argument)
        if isinstance(argument, cst.Name) and v.guarded(value) is not value:
            places, first = self.project.memoised(guarding_reads, self.function.node)
            read = first.get(argument.value)
            if read is not None and id(call) in places and read < places[id(call)]:
                return v.guarded(value)
        return value

    def _duck_typed_callees(self, node: cst.Call, resolved: list[FunctionInfo]) -> list[FunctionInfo]:
        """The scanned methods a call of a distinctive method name may run on an object of no
        scanned class the analysis knows of (`self.ball.dist2plane(x)`), or on one declared with
        a class whose method only states the interface (`controller: StepSizeController`,
        implemented by classes that do not derive from it). They are walked for what they hold;
        the call's value is not read from them (a guess at the callee is no evidence of a type)."""
        func = node.func
        if not isinstance(func, cst.Attribute) or self.qualname(func) is not None:
            return []
        name = func.attr.value
        if name.startswith("__") or name in v.GENERAL_METHOD_NAMES or catalogue.tensor_method(name) is not None:
            return []
        receiver = self.value(func.value)
        interface = None
        if resolved:
            if not (isinstance(receiver, v.ModuleValue) and receiver.declared):
                return []
            interface = next((self.project.find_class(f"{callee.module.name}.{callee.class_name}")
                              for callee in resolved if callee.class_name and is_abstract(callee.node)), None)
            if interface is None:
                return []
        elif receiver not in (v.UNKNOWN, v.OTHER) or isinstance(receiver, v.Container):
            return []  # an object of no scanned class the analysis knows of (`self.ball`, stored from a parameter)
        known = {callee.key for callee in resolved}
        return [method for method in self.project.implementations(name, self.function.module, interface)
                if method.key not in known and not is_abstract(method.node)]


def _constructions_stored(function: cst.FunctionDef) -> dict[str, cst.Call]:
    """`self.attr = Class(...)` in a method, by attribute: the last call stored there."""
    stored: dict[str, cst.Call] = {}
    for node in find_nodes(function.body, (cst.Assign,), prune=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        assert isinstance(node, cst.Assign)
        target = node.targets[0].target if len(node.targets) == 1 else None
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self" \
                and isinstance(node.value, cst.Call):
            stored[target.attr.value] = node.value
    return stored


def _written_kind(module: ModuleIndex, node: cst.BaseExpression) -> v.Value:
    """What an expression is, read without a walk: a literal, or what a torch function returns."""
    literal = v.literal_kind(node)
    if literal is not None:
        return literal
    if isinstance(node, cst.Call):
        called = module.qualify(dotted_name(node.func))
        if called and called.startswith("torch."):
            return v.declared_kind(called) or v.UNKNOWN
    return v.UNKNOWN


def _init_kind(info: ClassInfo, node: cst.BaseExpression) -> v.Value:
    """What an argument in the class's `__init__` is, read without a walk: as `_written_kind`, or a
    tensor attribute the class registered (`self.P0`)."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return v.TENSOR if node.attr.value in info.tensor_attrs else v.UNKNOWN
    return _written_kind(info.module, node)


def _named_tuple(info: ClassInfo) -> bool:
    """A NamedTuple: TorchDynamo looks into its fields for tensors (into no other object's)."""
    return info.record and any(base.rpartition(".")[2] == "NamedTuple" for base in info.bases)


def _node_positions(function: cst.FunctionDef) -> dict[int, int]:
    """Each node of the function's body (not of the functions it defines): its position among the
    body's nodes in source order (a node's subtree follows it)."""
    nodes = find_nodes(function.body, (cst.CSTNode,), prune=(cst.FunctionDef, cst.Lambda))
    return {id(node): position for position, node in enumerate(nodes)}


def _reads_after(function: cst.FunctionDef) -> list[tuple[int, str]]:
    """The variables the function's body reads (no attribute names or keyword labels), each with
    its position among the body's nodes (as `_node_positions` counts them)."""
    nodes = find_nodes(function.body, (cst.CSTNode,), prune=(cst.FunctionDef, cst.Lambda))
    labels = {id(node.attr) for node in nodes if isinstance(node, cst.Attribute)} | {
        id(node.keyword) for node in nodes if isinstance(node, cst.Arg) and node.keyword is not None}
    return [(position, node.value) for position, node in enumerate(nodes)
            if isinstance(node, cst.Name) and id(node) not in labels]


def _names_in(function: cst.FunctionDef) -> list[cst.Name]:
    """Every name in the function, attribute names included (what its code's `co_names` may hold)."""
    return [node for node in find_nodes(function.body, (cst.Name,)) if isinstance(node, cst.Name)]


def _negated_indices(function: cst.FunctionDef) -> frozenset[str]:
    """Names a subscript indexes with their negation (`d[~same]`)."""
    return frozenset(element.slice.value.expression.value
                     for subscript in find_nodes(function.body, (cst.Subscript,), prune=(cst.FunctionDef,))
                     for element in subscript.slice
                     if isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.UnaryOperation)
                     and isinstance(element.slice.value.operator, cst.BitInvert)
                     and isinstance(element.slice.value.expression, cst.Name))


def _joined(first: dict[str, v.Value], second: dict[str, v.Value],
            join: Callable[[v.Value, v.Value], v.Value] = v.join) -> dict[str, v.Value]:
    """The bindings where two paths meet: a name bound on both holds either value; a name bound
    on one only holds that one's (on the other, using it would fail)."""
    return {name: join(first[name], second[name]) if name in first and name in second
            else first.get(name, second.get(name, v.OTHER)) for name in {**first, **second}}


_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Lambda)


def _short_code(node: cst.CSTNode) -> str:
    what = cst.Module(body=[]).code_for_node(node)
    return what if len(what) <= 40 else what[:37] + "..."


_ORDERINGS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _all_bool_literals(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False")
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(_all_bool_literals(e.value) for e in node.elements)
    return False


# Methods that change a list or dict in place.
_MUTATING_METHODS = v.CONTAINER_ADDING_METHODS
_REMOVING_METHODS = v.CONTAINER_REMOVING_METHODS  # they add nothing


_LOOKUP_METHODS = frozenset({"get", "pop", "setdefault"})


def _held_at(base: v.Container, key: cst.BaseExpression) -> v.Value | None:
    """What a container holds at `key`: for a dict of known keys, the values of those the key may
    name (`"mask"`, `f"output_{k}"`) and what its other keys hold; else any element. None: no
    element is known to be there."""
    if base.keys is None:
        return v.held(base)
    pattern = name_pattern(key) or "*"
    parts = [value for name, value in base.keys if fnmatch.fnmatchcase(name, pattern)]
    if base.elements is not None:
        parts.append(base.elements)
    if "*" in pattern and len({v.is_tensorish(part) for part in parts}) > 1:
        return v.UNKNOWN  # a key the analysis cannot tell, among tensors and other values
    return functools.reduce(v.join, parts) if parts else None


def _minus_one(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, cst.Integer) and node.expression.value == "1")


def _constant_index(node: cst.Subscript) -> int | str | None:
    """`t[1]`, `t[-1]`, `d["key"]`: the one constant index of a subscript, else None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    if isinstance(index, cst.SimpleString) and isinstance(index.evaluated_value, str):
        return index.evaluated_value
    negative = isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus)
    number = index.expression if negative and isinstance(index, cst.UnaryOperation) else index
    if isinstance(number, cst.Integer):
        return -int(number.value) if negative else int(number.value)
    return None


def _slices(node: cst.Subscript) -> bool:
    return any(isinstance(element.slice, cst.Slice) for element in node.slice)


def _sequence_arithmetic(operator: cst.BaseBinaryOp, kinds: list[v.Value]) -> v.Value | None:
    """`[scale] * n` and `a + b` on lists or tuples built in the code: a list or tuple of what
    they hold (positions not tracked); None for any other operation."""
    sequences = [kind for kind in kinds if isinstance(kind, v.Container) and kind.sort in ("list", "tuple")]
    others = [kind for kind in kinds if not (isinstance(kind, v.Container) and kind.sort in ("list", "tuple"))]
    if isinstance(operator, cst.Multiply) and len(sequences) == 1 and all(k == v.INT or k == v.UNKNOWN for k in others):
        # (a count the analysis cannot read, `[seg // 2] * self.num_segments`, is still a count)
        held = v.held(sequences[0])
    elif isinstance(operator, cst.Add) and len(sequences) == 2 and sequences[0].sort == sequences[1].sort:
        held = v.join_held(v.held(sequences[0]), v.held(sequences[1]))
    else:
        return None
    return v.container(sort=sequences[0].sort, elements=held)


# nn.Module's methods that return the module itself.
_MODULE_METHODS_RETURNING_SELF = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "double", "half",
                                            "bfloat16", "requires_grad_", "type", "apply", "share_memory"})
# What these return is a copy of what they are given: a value of its kind.
_COPIES = frozenset({"copy.copy", "copy.deepcopy"})
# Builtins that return one of the numbers they are given.
_NUMBER_PICKS = frozenset({"builtins.max", "builtins.min"})


def _arithmetic(operator: cst.BaseBinaryOp, kinds: list[v.Value]) -> v.Value:
    """What Python arithmetic on non-tensor values gives: numbers stay numbers (`/` a float),
    strings concatenate or format, sizes concatenate."""
    if all(kind in v.NUMBERS for kind in kinds):
        if isinstance(operator, cst.Divide) or v.FLOAT in kinds:
            return v.FLOAT
        return v.INT
    if isinstance(operator, cst.Divide) and any(kind in v.NUMBERS for kind in kinds):
        return v.FLOAT  # `h / window[0]` with `window` a sequence of unknown items: a number divides
    if kinds[0] == v.STR and isinstance(operator, (cst.Add, cst.Modulo, cst.Multiply)):
        return v.STR
    if all(kind == v.SHAPE for kind in kinds) and isinstance(operator, cst.Add):
        return v.SHAPE
    return v.OTHER


_LEAVING = (cst.Return, cst.Raise, cst.Continue, cst.Break)


def always_leaves(block: cst.CSTNode) -> bool:
    """Whether a branch never falls through to the code after its `if`."""
    body = block.body if isinstance(block, (cst.IndentedBlock, cst.Else)) else None
    if isinstance(block, cst.Else):
        return always_leaves(block.body)
    if isinstance(block, cst.If):
        return always_leaves(block.body) and block.orelse is not None and always_leaves(block.orelse)
    if isinstance(block, cst.SimpleStatementSuite):
        return any(isinstance(small, _LEAVING) for small in block.body)
    if not isinstance(body, (list, tuple)) or not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, _LEAVING) for small in last.body)
    if isinstance(last, cst.If):
        return always_leaves(last)
    return False


# `isinstance(x, T)`: what x is in the branch where it holds.
TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Builtins that build a container of another's elements, and what they build.
_SEQUENCE_BUILDERS = {**v.BUILT_SORT, "builtins.tuple": "tuple", "builtins.reversed": "list", "builtins.set": "set",
                      "builtins.frozenset": "set"}
_CONTAINER_CLASSES = frozenset({f"builtins.{name}" for name in ("list", "tuple", "dict", "set", "frozenset")})
_BUILTIN_INSTANCE_KINDS = {"int": v.INT, "float": v.FLOAT, "bool": v.BOOL, "str": v.STR, "set": v.OTHER,
                           "frozenset": v.OTHER, "bytes": v.OTHER, "complex": v.OTHER}
_PYTHON_CLASSES = frozenset({f"builtins.{name}" for name in (
    "int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "set", "frozenset", "complex", "slice")})


def isinstance_classes(test: cst.Call, walker: "RegionWalker") -> set[str | None] | None:
    """The qualified names of the classes `isinstance(x, C)` / `isinstance(x, (C, D))` tests
    (None for one the walker cannot name); None when the call is not such a test."""
    if len(test.args) != 2 or walker.qualname(test.func) != "builtins.isinstance":
        return None
    classes = test.args[1].value
    options = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
    return {walker.qualname(option) for option in options}


def _not_none(value: v.Value) -> v.Value:
    """An optional value where a test has ruled None out."""
    if value == v.MAYBE_TENSOR:
        return v.ASSUMED_TENSOR if v.is_assumed_tensor(value) else v.TENSOR
    return value


def narrowings(test: cst.BaseExpression, walker: "RegionWalker") -> tuple[dict[str, v.Value], dict[str, v.Value]]:
    """Names the test pins down: (their values where it is true, where it is false)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        when_true, when_false = narrowings(test.expression, walker)
        return when_false, when_true
    if isinstance(test, cst.BooleanOperation):
        left, right = narrowings(test.left, walker), narrowings(test.right, walker)
        if isinstance(test.operator, cst.And):  # both hold where it is true
            return {**left[0], **right[0]}, {}
        return {}, {**left[1], **right[1]}  # neither holds where an `or` is false
    if isinstance(test, cst.Name):
        current = walker.bindings.get(test.value)
        if current == v.MAYBE_TENSOR:  # `if mask:` on an optional tensor
            return {test.value: _not_none(current)}, {}
        if isinstance(current, v.Kind) and current.name == v.BOOL.name:  # `if not set_rng: return ...`
            return {test.value: v.TRUE}, {test.value: v.FALSE}
        return {}, {}
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        name, comparison = test.left.value, test.comparisons[0]
        if isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None":
            current = walker.bindings.get(name, v.OTHER)
            not_none = _not_none(current)
            if isinstance(comparison.operator, cst.Is):
                return {name: v.OTHER}, {name: not_none}
            if isinstance(comparison.operator, cst.IsNot):
                return {name: not_none}, {name: v.OTHER}
        return {}, {}
    if isinstance(test, cst.Call) and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name):
        name = test.args[0].value.value
        qualified = isinstance_classes(test, walker)
        if qualified is not None:
            if qualified <= TENSOR_CLASSES:
                current = walker.bindings.get(name, v.OTHER)
                return {name: v.TENSOR}, {name: v.OTHER if current in (v.TENSOR, v.MAYBE_TENSOR) else current}
            if qualified <= _PYTHON_CLASSES:
                current = walker.bindings.get(name, v.OTHER)
                if qualified <= _CONTAINER_CLASSES and (current == v.TENSORS or isinstance(current, v.Container)):
                    return {name: current}, {}  # a list of tensors is still one
                if qualified <= _CONTAINER_CLASSES and current in (v.TENSOR, v.MAYBE_TENSOR, v.UNKNOWN):
                    # Not the tensor it was taken for: a container of what, is not known.
                    sorts = {q.rpartition(".")[2] for q in qualified if q is not None}
                    sort = sorts.pop() if len(sorts) == 1 and sorts <= {"list", "tuple", "dict"} else ""
                    return {name: v.container(sort=sort, elements=v.UNKNOWN)}, {}
                return {name: v.OTHER}, {}
            # Instances of other classes: `isinstance(edge_index, SparseTensor)` picks the
            # union member that is not a tensor.
            classes = test.args[1].value
            if None not in qualified and len(qualified) == (len(classes.elements) if isinstance(classes, cst.Tuple) else 1):
                kinds = [walker.project.instance_value(q) for q in qualified if q is not None]
                if kinds and None not in kinds:
                    return {name: functools.reduce(v.join, [k for k in kinds if k is not None])}, {}
    if isinstance(test, cst.Call) and len(test.args) == 1 and isinstance(test.args[0].value, cst.Name):
        if walker.qualname(test.func) == "builtins.callable":
            return {test.args[0].value.value: v.OTHER}, {}
    return {}, {}


def _local_parameter_kind(parameter: cst.Param, expand: Expand) -> v.Value:
    """A closure's or lambda's parameter: what its annotation or default says, else unknown (it
    takes whatever its caller passes, a hook's module and kwargs as much as a tensor)."""
    if parameter.annotation is not None:
        declared = annotation_kind(parameter.annotation.annotation, expand)
        if declared is not None:
            return declared
    literal = v.literal_kind(parameter.default) if parameter.default is not None else None
    return literal or v.UNKNOWN


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Operations whose result's size the data decides: TorchDynamo breaks on them unless
# `capture_dynamic_output_shape_ops` is set (probed: GB0036).
_DATA_SIZED_OPERATIONS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select", "where"})
# Operations given sizes as numbers (`x.new_zeros(n)`, `torch.split(x, lengths)`): given numbers
# read from data, their result is sized by the data.
_SIZED_BY_NUMBERS = frozenset({
    "split", "split_with_sizes", "tensor_split", "narrow", "reshape", "view", "expand", "repeat", "repeat_interleave",
    "unflatten", "new_zeros", "new_ones", "new_empty", "new_full", "zeros", "ones", "empty", "full", "arange", "randn",
    "rand", "randint", "linspace"})
# Kinds a value the data decides refines (values.as_data); OTHER: what `max(a, b)` is taken for.
_PLAIN_NAMES = frozenset(kind.name for kind in (v.TENSOR, v.TENSORS, v.INT, v.FLOAT, v.OTHER))
# Operations that draw at random: what they give differs on every call, whatever they are given.
_RANDOM_OPERATIONS = frozenset({"randn_like", "rand_like", "randint_like", "dropout", "bernoulli", "multinomial",
                                "normal", "normal_", "uniform_", "bernoulli_", "exponential_", "random_"})
# Builtins whose result on numbers is a number.
_NUMBER_BUILTINS = frozenset({"max", "min", "abs", "round", "sum"})
# Reductions that, given no dimension, leave a 0-d tensor: its size does not depend on the data.
_FULL_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "prod", "norm", "all", "any", "std", "var",
                              "count_nonzero", "numel", "logsumexp", "median"})


def _same_every_call(kind: v.Value) -> bool:
    """What the module holds, a Python value, the module or an object: nothing the inputs decide."""
    return v.is_state(kind) or v.is_plain(kind) or kind == v.SELF or isinstance(kind, v.ModuleValue)


def _called_name(node: cst.BaseExpression) -> str | None:
    """The last name of what a call calls (`torch.split` -> "split", `x.new_zeros` -> "new_zeros")."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


def _given_true(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword and isinstance(a.value, cst.Name)
               and a.value.value == "True" for a in call.args)


def _operands(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values an expression computes its own from: operands, the receiver and arguments of a
    call, an indexed value and its indices."""
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    if isinstance(node, cst.Subscript):
        indices = [part for element in node.slice for part in (
            [element.slice.value] if isinstance(element.slice, cst.Index)
            else [bound for bound in (element.slice.lower, element.slice.upper) if bound is not None])]
        return [node.value, *indices]
    if isinstance(node, cst.Call):
        receiver = [node.func.value] if isinstance(node.func, cst.Attribute) else []
        return [*receiver, *(argument.value for argument in node.args)]
    return []





def _all_params(params: cst.Parameters) -> list[cst.Param]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    kwargs = [params.star_kwarg] if params.star_kwarg is not None else []
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params, *kwargs]


_SPECIAL = {
    cst.IndentedBlock: RegionWalker._visit_block,
    cst.If: RegionWalker._visit_if,
    cst.IfExp: RegionWalker._visit_ifexp,
    cst.BooleanOperation: RegionWalker._visit_boolean,
    cst.For: RegionWalker._visit_for,
    cst.While: RegionWalker._visit_while,
    cst.ListComp: RegionWalker._visit_comprehension,
    cst.SetComp: RegionWalker._visit_comprehension,
    cst.GeneratorExp: RegionWalker._visit_comprehension,
    cst.DictComp: RegionWalker._visit_comprehension,
    cst.FunctionDef: RegionWalker._visit_function,
    cst.Lambda: RegionWalker._visit_lambda,
    cst.ClassDef: RegionWalker._visit_class,
    cst.ExceptHandler: RegionWalker._visit_except,
    cst.Try: RegionWalker._visit_try,
    cst.With: RegionWalker._visit_with,
    cst.Match: RegionWalker._visit_match,
    cst.Assign: RegionWalker._visit_assign,
}
_GENERATOR_CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})
_AFTER = {
    cst.Assign: RegionWalker._after_assign,
    cst.AnnAssign: RegionWalker._after_annassign,
    cst.AugAssign: RegionWalker._after_augassign,
    cst.Assert: RegionWalker._after_assert,
    cst.NamedExpr: RegionWalker._after_namedexpr,
    cst.WithItem: RegionWalker._after_withitem,
    cst.Import: RegionWalker._after_import,
    cst.ImportFrom: RegionWalker._after_import,
    cst.Return: RegionWalker._after_return,
    cst.Yield: RegionWalker._after_yield,
    cst.Call: RegionWalker._after_call,
    cst.Attribute: RegionWalker._after_attribute,
}
