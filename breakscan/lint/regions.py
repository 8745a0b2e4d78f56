"""Compiled regions: the roots TorchDynamo starts tracing from, and the call graph out of them.

Roots are `nn.Module.forward`s, `@torch.compile` functions, whatever is passed to
`torch.compile(...)` and the roots named in config. Every function reachable from a root is walked
once per distinct set of argument kinds, so a helper's parameters are tensors only when its
callers pass tensors.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.declared import Expand, annotation_kind, parameter_kind
from breakscan.lint.dynamo_settings import NO_SETTINGS, DynamoSettings
from breakscan.lint.index import (
    MODULE_BASES,
    CallSites,
    ClassInfo,
    FunctionInfo,
    ModuleIndex,
    constructed_classes,
    is_abstract,
    is_torch_module_base,
)
from breakscan.lint.names import dotted_name, names_a_class
from breakscan.lint.semantics.untraceable import GENERATOR_CLASS
from breakscan.lint.traverse import find_nodes, parent_map, subtree_ids
from breakscan.lint.walker import (
    TENSOR_CLASSES,
    CallSite,
    FunctionResult,
    Handler,
    N,
    RawFinding,
    RegionWalker,
    T,
    exclusive,
)

if TYPE_CHECKING:
    import networkx as nx  # imported where a graph is built: a warm run never needs it (0.2 s)

ROOT = "<compiled>"
MAX_PASSES_PER_FUNCTION = 8

@dataclass
class Analysis:
    results: dict[str, FunctionResult]
    functions: dict[str, FunctionInfo]
    graph: nx.DiGraph

    def chain(self, key: str) -> tuple[str, ...]:
        """Display names from the compiled root to the function, by the shortest call path."""
        return tuple(self.functions[node].qualname for node in self._path(key))

    def calls(self, key: str) -> list[tuple[FunctionInfo, cst.Call]]:
        """Along the same path, each function with its (first) call of the next."""
        path = self._path(key)
        return [(self.functions[caller], self.graph.edges[caller, callee]["call"])
                for caller, callee in zip(path, path[1:])]

    def _path(self, key: str) -> list[str]:
        import networkx as nx

        try:
            return nx.shortest_path(self.graph, ROOT, key)[1:]
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return [key]

# What an `__init__` parameter's annotation may declare that an attribute keeping it holds.
_DECLARED_TENSORS = frozenset({v.TENSOR, v.MASK, v.MAYBE_TENSOR, v.TENSORS})


class Project:
    def __init__(self, modules: dict[str, ModuleIndex], load_module: Callable[[str], ModuleIndex | None] | None = None,
                 config_roots: tuple[str, ...] = (), dynamo: DynamoSettings = NO_SETTINGS,
                 subclasses: Callable[[str, str], frozenset[str]] | None = None,
                 implementers: Callable[[str, str], frozenset[str]] | None = None):
        self.modules = modules
        self._load_module = load_module
        # The scanned classes deriving from a class, by qualified name, in a package (engine.Unit._hierarchy).
        self._subclasses = subclasses
        # The scanned classes defining a method, by its name, that a module's imports lead to
        # (inheritance.Hierarchy.implementers).
        self._implementers = implementers
        self.config_roots = config_roots
        self.dynamo = dynamo  # settings the project's config declares (made at run time elsewhere)
        # How each root is compiled: `fullgraph=True` on the `torch.compile` call that names it.
        self._fullgraph_roots: set[str] = set()
        self.root_keys: set[str] = set()  # the roots of the running analysis
        self._returns: dict[str, v.Value] = {}
        self._return_items: dict[str, tuple[v.Value, ...] | None] = {}
        self._stores: dict[str, dict[str, v.Value]] = {}
        self._hook_roots: dict[str, bool] = {}  # forward hooks analysed as roots: whether each runs before forward
        self._passthrough: dict[str, frozenset[int] | None] = {}
        self._module_class_cache: dict[int, bool] = {}
        self._bound: dict[tuple[str, int], FunctionInfo] = {}
        self._lineages: dict[int, list[ClassInfo]] = {}
        self._built_by: dict[str, frozenset[str]] = {}
        self._held: dict[str, bool] = {}
        self._inner: dict[int, FunctionInfo] = {}  # by id of the inner function's node
        self._wrappers: dict[str, list[tuple[cst.Decorator, FunctionInfo]]] = {}
        # id(__init__ parameter) -> (it, the classes its constructor calls build for it): see _built_for_parameter
        self._parameter_builds: dict[int, tuple[cst.Param, frozenset[str]]] = {}
        # id(module) -> (the module, qualified class -> the calls in its functions that build one)
        self._constructions: dict[int, tuple[ModuleIndex, dict[str, list[tuple[FunctionInfo, cst.Call]]]]] = {}
        self._call_sites: tuple[int, CallSites] | None = None
        self._expanded: dict[tuple[str, str], str] = {}  # (module, annotation text) -> its aliases expanded
        self._memo: dict[tuple[object, int], tuple[cst.CSTNode, object]] = {}

    def memoised(self, compute: Callable[[N], T], node: N) -> T:
        """`compute(node)`, once per lint of a file. A process-wide cache would keep the trees of
        its nodes alive after the parse cache let them go."""
        key = (compute, id(node))
        kept = self._memo.get(key)
        if kept is None:
            kept = self._memo[key] = (node, compute(node))  # the node kept: its id stays its own
        return kept[1]

    def call_sites(self) -> CallSites:
        """How the project's files use what they compile (merged; rebuilt when a module was loaded)."""
        if self._call_sites is None or self._call_sites[0] != len(self.modules):
            self._call_sites = (len(self.modules), CallSites.merged(m.call_sites for m in self.modules.values()))
        return self._call_sites[1]

    # -- lookups ---------------------------------------------------------------------------
    def find_module(self, name: str) -> ModuleIndex | None:
        if name in self.modules:
            return self.modules[name]
        if self._load_module is not None:
            loaded = self._load_module(name)
            if loaded is not None:
                self.modules[name] = loaded
            return loaded
        return None

    def expander(self, module: ModuleIndex) -> Expand:
        """Expands the type aliases an annotation written in `module` names, its own and those it
        imports from scanned modules, and names imported under another name from torch
        (`from torch import Tensor as T`)."""
        def expand(text: str, within: ModuleIndex = module, depth: int = 0) -> str:
            key = (within.name, text)
            if key not in self._expanded:
                self._expanded[key] = _IDENTIFIER.sub(functools.partial(replace, within=within, depth=depth), text)
            return self._expanded[key]

        def replace(match: re.Match, within: ModuleIndex, depth: int) -> str:
                dotted = match.group(0)
                if depth < _ALIAS_DEPTH and dotted in within.type_aliases:
                    return expand(_code(within.type_aliases[dotted]), within, depth + 1)
                qualified = within.qualify(dotted)
                if not qualified or qualified == dotted:
                    return dotted
                owner, _, name = qualified.rpartition(".")
                # Not torch's, the standard library's or NumPy's own names: reading their modules
                # to look for aliases would load torch/__init__.py into every unit.
                library = owner.partition(".")[0] in _NOT_ALIAS_SOURCES
                source = self.find_module(owner) if depth < _ALIAS_DEPTH and owner and not library else None
                if source is not None and name in source.type_aliases:
                    return expand(_code(source.type_aliases[name]), source, depth + 1)
                return qualified if qualified.startswith("torch.") and name != dotted.rpartition(".")[2] else dotted
        return expand

    def annotation_kind(self, annotation: cst.BaseExpression, module: ModuleIndex) -> v.Value | None:
        return annotation_kind(annotation, self.expander(module))

    def declared_value(self, annotation: cst.BaseExpression, module: ModuleIndex) -> v.Value | None:
        """What an annotation declares: its kind, or, naming a class, an object of that class or of
        a scanned class of the module's package deriving from it (`transform: Transform` may hold
        any of the package's transforms: a method called on it runs each one's)."""
        kind = self.annotation_kind(annotation, module)
        if kind != v.OTHER or isinstance(kind, v.Container):
            return kind
        classes = frozenset(c for member in _declared_members(annotation) for c in self._declared_classes(member, module))
        return v.ModuleValue(classes, declared=True) if classes else kind

    def attribute_parameter_value(self, info: ClassInfo, attr: str) -> v.Value | None:
        """`self.transform = transform` in `__init__`: an object of the classes the parameter's
        annotation names (a tuple of them for `*transforms: Transform`), or the tensors it declares
        (`y0: Tensor`); None when it names neither."""
        init = info.methods.get("__init__")
        name = info.attr_params.get(attr)
        if init is None or name is None:
            return None
        params = init.node.params
        star = params.star_arg
        if isinstance(star, cst.Param) and star.name.value == name:
            return self._declared_spread(star, info.module)
        param = next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None)
        if param is None:
            return None
        if param.annotation is None:
            known = self._parameter_builds.get(id(param))
            if known is None:
                known = self._parameter_builds[id(param)] = (param, self._built_for_parameter(info, param))
            return v.ModuleValue(known[1]) if known[1] else None
        declared = self.declared_value(param.annotation.annotation, info.module)
        return declared if isinstance(declared, v.ModuleValue) or declared in _DECLARED_TENSORS else None

    def attribute_parameter_default(self, info: ClassInfo, attr: str) -> str | None:
        """`self.stream = stream` in `__init__`, whose `stream=sys.stderr`: the default's qualified
        name, when the class's module builds it and passes nothing for that parameter there."""
        init = info.methods.get("__init__")
        name = info.attr_params.get(attr)
        if init is None or name is None:
            return None
        params = init.node.params
        param = next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None)
        default = param.default if param is not None else None
        if default is None or v.literal_kind(default) is not None or (dotted := dotted_name(default)) is None:
            return None
        qualified = f"{info.module.name}.{info.name}"
        if any(qualified in other.bases for other in info.module.classes.values()):
            return None  # a subclass may pass anything through `super().__init__(...)`
        positional = [p.name.value for p in (*params.posonly_params, *params.params)][1:]  # after `self`
        position = positional.index(name) if name in positional else None
        sites = self.constructions(info)
        if not sites or any(any(a.star for a in call.args) or _argument_for(call, name, position) is not None
                            for _, call in sites):
            return None
        return info.module.qualify(dotted) or dotted

    def _built_for_parameter(self, info: ClassInfo, param: cst.Param) -> frozenset[str]:
        """What the calls building the class in its own module pass for an `__init__` parameter
        without an annotation, when each passes an object it builds there, directly or by a local
        name (`arn = AutoRegressiveNN(...)`; `AffineAutoregressive(arn)`); else nothing."""
        init = info.methods["__init__"].node
        positional = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]  # after `self`
        name = param.name.value
        qualified = f"{info.module.name}.{info.name}"
        if any(qualified in other.bases for other in info.module.classes.values()):
            return frozenset()  # a subclass may pass anything through `super().__init__(...)`
        built: set[str] = set()
        for function, call in self._constructions_in(info.module).get(qualified, ()):
            given = _argument_for(call, name, positional.index(name) if name in positional else None)
            classes = _built_by_expression(given, function, info.module) if given is not None else set()
            if not classes:
                return frozenset()  # a call passes something else, or nothing: it could be anything
            built |= classes
        return frozenset(built)

    def held_class(self, info: ClassInfo) -> bool:
        """Whether every object of the class that its module builds is built in an `__init__` and
        stored on that object (`self.context = FrameContext(3)`): held from call to call, like
        the module holding it."""
        key = f"{info.module.name}.{info.name}"
        found = self._held.get(key)
        if found is None:
            methods = [m for c in info.module.classes.values() for m in c.methods.values()]
            sites = [(function, call) for function in (*info.module.functions.values(), *methods)
                     for call in self.memoised(_calls_in, function.node)
                     if info.module.qualify(dotted_name(call.func)) == key]
            found = self._held[key] = bool(sites) and all(
                function.node.name.value == "__init__" and _stored_on_self(function.node, call) for function, call in sites)
        return found

    def constructions(self, info: ClassInfo) -> list[tuple[FunctionInfo, cst.Call]]:
        """The calls building the class in its own module's functions and `__init__`s, each with
        the function making it."""
        return self._constructions_in(info.module).get(f"{info.module.name}.{info.name}", [])

    def _constructions_in(self, module: ModuleIndex) -> dict[str, list[tuple[FunctionInfo, cst.Call]]]:
        """The calls in the module's functions and its classes' `__init__`s (where objects are
        built to be kept), by the qualified name they call: read once per module."""
        known = self._constructions.get(id(module))
        if known is None:
            calls: dict[str, list[tuple[FunctionInfo, cst.Call]]] = {}
            functions = [*module.functions.values(), *(c.methods["__init__"] for c in module.classes.values()
                                                       if "__init__" in c.methods)]
            for function in functions:
                for call in find_nodes(function.node.body, (cst.Call,)):
                    assert isinstance(call, cst.Call)
                    called = module.qualify(dotted_name(call.func))
                    if called is not None:
                        calls.setdefault(called, []).append((function, call))
            known = self._constructions[id(module)] = (module, calls)
        return known[1]

    def _declared_classes(self, annotation: cst.BaseExpression, module: ModuleIndex) -> frozenset[str]:
        qualified = module.qualify(dotted_name(annotation))
        if qualified is not None and is_torch_module_base(qualified):
            # `encoder: nn.Module`: a module, of torch's class (the package's own subclasses are
            # not all it may be: any model may be given)
            return frozenset({qualified})
        if qualified is None or qualified.partition(".")[0] in _NOT_DECLARED_OBJECTS:
            return frozenset()
        info = self.find_class(qualified)
        if info is not None:
            if self.instance_value(qualified) == v.UNKNOWN:
                return frozenset()  # a subclass of torch.Tensor: a tensor with methods of its own
            qualified = f"{info.module.name}.{info.name}"
        classes = {qualified} if info is not None else set()
        if self._subclasses is not None:
            # Subclasses where the annotation is written; of a scanned base, where both are (a
            # solver in `pkg._core` given a `pkg._brownian` base's subclasses from `pkg._brownian`).
            within = _common_package(module.package, info.module.name) if info is not None else module.package
            classes |= self._subclasses(qualified, within)
        return frozenset(classes)

    def _split(self, qualified: str) -> tuple[ModuleIndex, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.find_module(".".join(parts[:cut]))
            if module is not None:
                return module, ".".join(parts[cut:])
        return None

    def find_class(self, qualified: str) -> ClassInfo | None:
        return self._find(qualified, "classes")

    def find_function(self, qualified: str) -> FunctionInfo | None:
        return self._find(qualified, "functions")

    def star_imported(self, module: ModuleIndex, name: str) -> str | None:
        """The qualified name of the scanned function or class that a module's `from ... import *`
        binds `name` to (`exists` after `from .utils import *`), the last such import winning, as
        in Python; None when none binds it."""
        if name.startswith("_"):
            return None
        for source in reversed(module.star_imports):
            qualified = f"{source}.{name}"
            if self.find_function(qualified) is not None or self.find_class(qualified) is not None:
                return qualified
        return None

    def _find(self, qualified: str, table: str, hops: int = 0):
        """A class or function of a scanned module, following re-exports (`from .layers import
        Block`, `from .layers import *` in a package's `__init__`)."""
        if not qualified or qualified.startswith("builtins."):
            return None
        found = self._split(qualified)
        if found is None:
            return None
        module, name = found
        definitions = getattr(module, table)
        if name in definitions:
            return definitions[name]
        if hops >= 8:  # re-export cycles
            return None
        head, dot, rest = name.partition(".")
        if head in module.imports and module.imports[head] + dot + rest != qualified:  # `Block`, `Block.method`
            return self._find(module.imports[head] + dot + rest, table, hops + 1)
        if not name.startswith("_"):  # `from .neurons import *` binds the public names
            for source in module.star_imports:
                found = self._find(f"{source}.{name}", table, hops + 1)
                if found is not None:
                    return found
        return None

    def class_lineage(self, info: ClassInfo) -> list[ClassInfo]:
        """The class and its scanned bases, breadth-first (close enough to the MRO for lookups);
        computed once per class (method lookups on `self` ask for it constantly)."""
        cached = self._lineages.get(id(info))
        if cached is not None:
            return cached
        seen: list[ClassInfo] = []
        stack = [info]
        while stack:
            current = stack.pop(0)
            if any(current is known for known in seen):
                continue
            seen.append(current)
            stack.extend(base for name in current.bases if (base := self.find_class(name)) is not None)
        self._lineages[id(info)] = seen
        return seen

    def is_module_class(self, info: ClassInfo) -> bool:
        cached = self._module_class_cache.get(id(info))
        if cached is not None:
            return cached
        self._module_class_cache[id(info)] = False  # guards against inheritance cycles
        result = any(is_torch_module_base(name) or (
            (base := self.find_class(name)) is not None and self.is_module_class(base)) for name in info.bases)
        self._module_class_cache[id(info)] = result
        return result

    def instance_value(self, qualified: str) -> v.Value | None:
        """What an instance of the class `qualified` is: a module for an nn.Module class, unknown
        for a scanned subclass of torch.Tensor, another Python value for any other scanned
        class or builtin, unknown for a class from a package not scanned (it may subclass torch.Tensor);
        None for torch's and NumPy's other classes, which `isinstance` tests elsewhere."""
        if qualified in MODULE_BASES:
            return v.ModuleValue(frozenset({qualified}))
        if qualified.partition(".")[0] in ("torch", "numpy"):
            return None
        if qualified.startswith("builtins."):
            return v.OTHER
        info = self.find_class(qualified)
        if info is None:
            return v.UNKNOWN
        if any(base in TENSOR_CLASSES for known in self.class_lineage(info) for base in known.bases):
            return v.UNKNOWN  # a tensor, with methods and attributes of its own the analysis does not model
        return v.ModuleValue(frozenset({qualified})) if self.is_module_class(info) else v.OTHER

    def bound(self, method: FunctionInfo, cls: ClassInfo | None) -> FunctionInfo:
        """`method` as run on an instance of `cls`: bound to it when `cls` inherits the method."""
        if cls is None or (method.module is cls.module and method.class_name == cls.name):
            return method
        key = (method.key.split("@")[0], id(cls))
        if key not in self._bound:
            self._bound[key] = dataclasses.replace(method, bound_class=cls)
        return self._bound[key]

    def method(self, classes: list[ClassInfo], name: str) -> FunctionInfo | None:
        for info in classes:
            if name in info.methods:
                return info.methods[name]
        return None

    # -- calls -----------------------------------------------------------------------------
    def resolve_calls(self, walker: RegionWalker, call: cst.Call, *, constructors: bool = False) -> list[FunctionInfo]:
        """Every function a call may run: a method of each class the object may be built from
        (`solver.integrate(t)` after `solver = SOLVERS[name](...)`); with `constructors`, also
        the `__init__` that building an object of a scanned class runs."""
        forward = self.autograd_forward(walker, call) if isinstance(call.func, cst.Attribute) else None
        if forward is not None:
            return [forward]
        return self.callable_functions(walker, call.func, constructors=constructors)

    def callable_functions(self, walker: RegionWalker, func: cst.BaseExpression, *,
                           constructors: bool = False) -> list[FunctionInfo]:
        """Every function calling `func` may run: `self.norm`, `layer`, `routines[kind]`, a
        function's name (see resolve_calls)."""
        if isinstance(func, cst.Attribute):
            base = func.value
            if isinstance(base, cst.Call) and dotted_name(base.func) == "super" and walker.defining_cls is not None:
                found = self.method(self.class_lineage(walker.defining_cls)[1:], func.attr.value)
                return [self.bound(found, walker.cls)] if found is not None else []
            base_value = walker.value(base)
            if base_value == v.SELF:
                found = self.method(walker._classes_of(base_value), func.attr.value)
                if found is not None:
                    return [self.bound(found, walker.cls)]
            elif isinstance(base_value, v.ModuleValue):
                methods = self.methods_of(base_value, func.attr.value)
                if methods:
                    return methods
        value = walker.value(func)
        if isinstance(value, v.MethodValue):
            return [method for name in self.method_names(value) for method in self.methods_of(
                v.ModuleValue(value.classes), name)]
        if isinstance(value, v.ModuleValue):
            # Calling an nn.Module runs its forward; calling any other object runs its __call__.
            classes = walker._classes_of(value)
            return self.methods_of(value, "forward" if any(self.is_module_class(info) for info in classes)
                                    else "__call__")
        built = walker.built_classes(func) if constructors else ()
        if built:
            return [init for name in built for init in self.methods_of(v.ModuleValue(frozenset({name})), "__init__")]
        qualified = walker.qualname(func)
        found_function = self.find_function(qualified) if qualified else None
        if found_function is None and isinstance(func, (cst.Name, cst.Attribute, cst.Subscript)) and (
                isinstance(value, v.Callables)):
            # `fn = pick(...)`; `self.search_fn` set to a function in `__init__`
            return [f for f in map(self.find_function, sorted(value.names)) if f is not None]
        return [found_function] if found_function is not None else []

    def implementations(self, name: str, caller: ModuleIndex, interface: ClassInfo | None = None) -> list[FunctionInfo]:
        """The methods `name` of the scanned classes that define one in the modules the caller's
        module imports: what a duck-typed call may run, on an object the lint cannot type
        (`self.ball.dist2plane(x)`), or on one declared with an `interface` class whose methods
        only state it (then the classes defining all of those, as a Protocol is matched). None
        when more classes than `_MOST_IMPLEMENTERS` qualify: a role many kinds of object play
        (`init`, `inverse`), which the name alone cannot tell apart."""
        if self._implementers is None:
            return []
        classes = self._implementers(name, caller.name)
        if interface is not None:
            for other in (n for n, method in interface.methods.items() if n != name and is_abstract(method.node)):
                classes &= self._implementers(other, caller.name)
        if not classes or len(classes) > _MOST_IMPLEMENTERS:
            return []
        return self.methods_of(v.ModuleValue(classes), name)

    def wrappers(self, function: FunctionInfo) -> list[tuple[cst.Decorator, FunctionInfo]]:
        """The functions that run in place of `function`, for each decorator of it that is a scanned
        function: its inner functions made with `functools.wraps` (`def wrapper(self, *args,
        **kwargs)`), which TorchDynamo traces on every call before the decorated body."""
        known = self._wrappers.get(function.key)
        if known is not None:
            return known
        found = self._wrappers[function.key] = []
        for decorator in function.node.decorators:
            expression = decorator.decorator
            named = expression.func if isinstance(expression, cst.Call) else expression
            factory = self.find_function(function.module.qualify(dotted_name(named)) or "")
            if factory is None:
                continue
            for maker in self._handed_on(factory):
                for inner in find_nodes(maker.node.body, (cst.FunctionDef,)):
                    assert isinstance(inner, cst.FunctionDef)
                    if any(_names_wraps(d.decorator) for d in inner.decorators):
                        found.append((decorator, self._inner_function(maker, inner)))
        return found

    def _handed_on(self, factory: FunctionInfo) -> list[FunctionInfo]:
        """A decorator factory and the scanned functions it hands the decorating on to, by
        returning their result or a partial of them (`return _cached(method, name=name)`,
        `return functools.partial(_cached, name=name)`), a few steps deep."""
        found = [factory]
        for maker in found:
            if len(found) > _MOST_HANDED_ON:
                break
            returns = find_nodes(maker.node.body, (cst.Return,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
            for returned in (r.value for r in returns if isinstance(r, cst.Return)):
                if not isinstance(returned, cst.Call):
                    continue
                callee = returned.func
                if maker.module.qualify(dotted_name(callee)) == "functools.partial" and returned.args:
                    callee = returned.args[0].value
                handed = self.find_function(maker.module.qualify(dotted_name(callee)) or "")
                if handed is not None and handed not in found:
                    found.append(handed)
        return found

    def _inner_function(self, outer: FunctionInfo, inner: cst.FunctionDef) -> FunctionInfo:
        known = self._inner.get(id(inner))
        if known is None:
            known = self._inner[id(inner)] = FunctionInfo(module=outer.module, node=inner, top_statement=outer.top_statement,
                                                          qualname=f"{outer.qualname}.<locals>.{inner.name.value}")
        return known

    def autograd_forward(self, walker: RegionWalker, call: cst.Call) -> FunctionInfo | None:
        """`Square.apply(x)` on a scanned torch.autograd.Function: TorchDynamo traces its
        `forward(ctx, x)`."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "apply"):
            return None
        qualified = walker.qualname(func.value)
        info = self.find_class(qualified) if qualified else None
        if info is None or not any(base in AUTOGRAD_FUNCTIONS for c in self.class_lineage(info) for base in c.bases):
            return None
        return self.method(self.class_lineage(info), "forward")

    def method_names(self, value: v.MethodValue) -> list[str]:
        """The methods a method value may be: its names, and those of the objects' methods
        matching its patterns."""
        lineage = [c for name in sorted(value.classes) if (info := self.find_class(name)) for c in self.class_lineage(info)]
        defined = dict.fromkeys(name for info in lineage for name in info.methods)
        return [name for name in defined if any(fnmatch.fnmatchcase(name, pattern) for pattern in value.names)]

    def built_by(self, function: FunctionInfo) -> frozenset[str]:
        """The classes a function's `return`s build (`return AvgNonZeroReducer()`, `return
        FakeQuantize(...)`): scanned ones and torch's, read from its code; a generator function
        builds a generator."""
        found = self._built_by.get(function.key)
        if found is None:
            returns = find_nodes(function.node.body, (cst.Return,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
            found = frozenset(name for r in returns if r.value is not None
                              for name in constructed_classes(function.module, r.value)
                              if name.startswith("torch.") or self.find_class(name))
            if find_nodes(function.node.body, (cst.Yield,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                found |= {GENERATOR_CLASS}  # calling a generator function builds a generator
            self._built_by[function.key] = found
        return found

    def methods_of(self, instance: v.ModuleValue, name: str) -> list[FunctionInfo]:
        """The method `name` of each class an object may be built from, bound to that class (for
        an object an annotation declares, as the class defining it has it: see ModuleValue)."""
        found: list[FunctionInfo] = []
        for qualified in sorted(instance.classes):
            info = self.find_class(qualified)
            method = self.method(self.class_lineage(info), name) if info is not None else None
            if method is not None:
                bound = method if instance.declared else self.bound(method, info)
                if all(bound.key != known.key for known in found):
                    found.append(bound)
        return found

    def passthrough(self, function: FunctionInfo) -> frozenset[int] | None:
        return self._passthrough.get(function.key)

    def return_items(self, function: FunctionInfo) -> tuple[v.Value, ...] | None:
        return self._return_items.get(function.key)

    def return_value(self, function: FunctionInfo) -> v.Value:
        """What a call returns: its annotation, else its analysed `return`s; a function excluded
        from compilation is never walked, so what it returns is unknown. Until a function's first
        walk it is taken to return a tensor (its callers are walked again if it does not)."""
        returns = function.node.returns
        declared = self.annotation_kind(returns.annotation, function.module) if returns is not None else None
        known = self._returns.get(function.key)
        if declared is not None:  # `-> int` is the author's word, even where a dead tail says otherwise
            # ... but for what the data decides, which no annotation says (`-> Tuple[Tensor, Tensor]`)
            return known if known is not None and known == declared and v.data_held(known) else declared
        if function.disabled:
            return v.UNKNOWN
        return known if known is not None else v.TENSOR

    def stored_attributes(self, method: FunctionInfo) -> dict[str, v.Value]:
        """The attributes a method sets on its object on every way out (none until its first walk,
        nor for one excluded from compilation)."""
        return self._stores.get(method.key, {})

    # -- roots and reachability ------------------------------------------------------------
    def roots(self, modules: list[ModuleIndex] | None = None) -> list[FunctionInfo]:
        roots: dict[str, FunctionInfo] = {}
        for module in modules if modules is not None else list(self.modules.values()):
            for function in module.functions.values():
                if function.disabled:
                    continue
                if function.compiled or self._named_in_config(function):
                    roots[function.key] = function
            for info in module.classes.values():
                # A module's forward, its own or inherited: an inherited one runs on this class's
                # instances, so the overrides it calls through `self` are this class's. So does a
                # scanned `__call__` override: a compiled module is called through it. Config
                # roots naming a method of the class may name an inherited one too.
                names = self._config_methods(module, info)
                if self.is_module_class(info):
                    names += ("forward", "__call__")
                for name in names:
                    method = self.method(self.class_lineage(info), name)
                    if method is not None and not method.disabled:
                        method = self.bound(method, info)
                        roots[method.key] = method
                for before, hook, made in info.hooks if self.is_module_class(info) else ():
                    function = self._hook_function(module, info, hook, made)
                    if function is not None and not function.disabled:
                        roots[function.key] = function
                        self._hook_roots[function.key] = before
            for reference in module.compiled_refs:
                function = self.find_function(reference)
                if function is None and (info := self.find_class(reference)) is not None:
                    function = self.method(self.class_lineage(info), "forward")
                if function is not None and not function.disabled:
                    roots[function.key] = function
                    if reference in module.fullgraph_refs:
                        self._fullgraph_roots.add(function.key)
        return list(roots.values())

    def _hook_function(self, module: ModuleIndex, info: ClassInfo, hook: str, made: bool) -> FunctionInfo | None:
        """A hook by the name it was registered under: a method of the class (`self._log`) or a
        function; for a `made` one, the function nested in that one which it returns (`return hook`),
        or the `__call__` of the class that makes it."""
        if hook.startswith("self.") and hook.count(".") == 1:
            found = self.method(self.class_lineage(info), hook[len("self."):])
            found = self.bound(found, info) if found is not None else None
        else:
            qualified = module.qualify(hook)
            found = self.find_function(qualified) if qualified is not None else None
            made_by = self.find_class(qualified) if qualified is not None and made and found is None else None
            if made_by is not None:  # an object of a class with `__call__`: `ActivationMonitor(name)`
                call = self.method(self.class_lineage(made_by), "__call__")
                return self.bound(call, made_by) if call is not None else None
        return self._returned_closure(found) if made and found is not None else found

    def _returned_closure(self, maker: FunctionInfo) -> FunctionInfo | None:
        """The function a function defines and returns (`def hook(...): ...; return hook`)."""
        body = maker.node.body
        nested = {statement.name.value: statement for statement in
                  (body.body if isinstance(body, cst.IndentedBlock) else ()) if isinstance(statement, cst.FunctionDef)}
        returns = find_nodes(body, (cst.Return,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
        returned = {r.value.value for r in returns if isinstance(r, cst.Return) and isinstance(r.value, cst.Name)}
        inner = [nested[name] for name in sorted(returned) if name in nested]
        return self._inner_function(maker, inner[0]) if len(inner) == 1 else None

    def _hook_parameters(self, function: FunctionInfo, before: bool) -> dict[str, v.Value]:
        """A forward hook's parameters: the module it is registered on (an object, not a tensor),
        the tuple of inputs, and, after forward, its output."""
        values = self._default_parameters(function)
        given: list[v.Value] = [v.OTHER, v.container(sort="tuple", elements=v.TENSOR)] + ([] if before else [v.TENSOR])
        for param, value in zip(function.positional_params, given):
            values[param.name.value] = value
        return values

    def _config_methods(self, module: ModuleIndex, info: ClassInfo) -> tuple[str, ...]:
        """The methods config roots name on this class (`PoincareBall.expmap`), its own or inherited."""
        full = f"{module.name}.{info.name}"
        return tuple(method for owner, _, method in (root.rpartition(".") for root in self.config_roots)
                     if owner and (full == owner or full.endswith("." + owner)))

    def _named_in_config(self, function: FunctionInfo) -> bool:
        full = f"{function.module.name}.{function.qualname}"
        return any(full == root or full.endswith("." + root) or function.key == root for root in self.config_roots)

    def analyze(self, handlers: Callable[[], dict[type, list[Handler]]],
                only: list[ModuleIndex] | None = None) -> Analysis:
        """Walks functions until every function's parameters, returns and settings stop
        changing. Each walk runs fresh rules (`handlers()` builds them) and replaces the function's
        result, so what is kept comes from the function's last walk, which saw the converged
        values: no rule sees a value an early pass had not yet learned, and none keeps state from
        one walk into another. Only a function whose inputs changed after its last walk (it hit
        the pass limit) is walked once more at the end."""
        import networkx as nx

        graph = nx.DiGraph()
        functions: dict[str, FunctionInfo] = {}
        results: dict[str, FunctionResult] = {}
        parameters: dict[str, dict[str, v.Value]] = {}
        passes: dict[str, int] = {}
        readers: dict[str, set[str]] = {}  # function -> the functions whose walks read its summary
        # callee -> caller -> the call sites of the caller's latest pass: parameters are always
        # recomputed from these, so a kind passed by an early, less informed pass does not stick.
        sites: dict[str, dict[str, list]] = {}
        queue: list[FunctionInfo] = []
        queued: set[str] = set()
        current: set[str] = set()  # functions whose last walk saw their inputs as they are now
        called: set[str] = set()  # functions whose parameters come from their call sites

        def enqueue(function: FunctionInfo) -> None:
            current.discard(function.key)
            if function.key not in queued:
                queued.add(function.key)
                queue.append(function)

        # How each function is compiled: what holds for every root that reaches it.
        compiled_as: dict[str, DynamoSettings] = {}
        for root in self.roots(only):
            self.root_keys.add(root.key)
            functions[root.key] = root
            graph.add_edge(ROOT, root.key)
            parameters[root.key] = (self._hook_parameters(root, self._hook_roots[root.key]) if root.key in self._hook_roots
                                    else self._default_parameters(root))
            compiled_as[root.key] = root.module.dynamo.merged(root.compile_settings).merged(
                DynamoSettings(fullgraph=root.key in self._fullgraph_roots))
            enqueue(root)
        while queue:
            function = queue.pop(0)
            key = function.key
            queued.discard(key)
            if passes.get(key, 0) >= MAX_PASSES_PER_FUNCTION:
                continue
            passes[key] = passes.get(key, 0) + 1
            dynamo = self.dynamo.merged(compiled_as[key]).merged(function.module.dynamo)
            current.add(key)
            result = RegionWalker(self, function, handlers(), parameters[key], dynamo, called=key in called).run()
            results[key] = result
            # A function read before its first walk was taken to return a tensor (`return_value`).
            summary = {"returns": result.returns, "items": result.return_items, "passthrough": result.passthrough,
                       "stores": result.stores or {}}
            seen = {"returns": self._returns.get(key, v.TENSOR), "items": self._return_items.get(key),
                    "passthrough": self._passthrough.get(key), "stores": self._stores.get(key, {})}
            changed = {kind for kind, value in summary.items() if not v.identical(value, seen[kind])}
            if changed:
                self._returns[key] = result.returns
                self._return_items[key] = result.return_items
                self._passthrough[key] = result.passthrough
                self._stores[key] = result.stores or {}
                for reader in readers.get(key, ()):
                    if reader in results and any((key, kind) in results[reader].summaries_read for kind in changed):
                        enqueue(functions[reader])
            for read, _ in result.summaries_read:
                readers.setdefault(read, set()).add(key)
            for callee_sites in sites.values():
                callee_sites.pop(key, None)
            for site in result.calls:
                callee = site.callee
                if not graph.has_edge(key, callee.key):
                    graph.add_edge(key, callee.key, call=site.node)
                if not callee.disabled:
                    functions[callee.key] = callee
                    sites.setdefault(callee.key, {}).setdefault(key, []).append(site)
                    inherited = compiled_as[key] if callee.key not in compiled_as else (
                        compiled_as[callee.key].common(compiled_as[key]))
                    if inherited != compiled_as.get(callee.key):
                        compiled_as[callee.key] = inherited
                        enqueue(callee)
            for callee_key, by_caller in sites.items():
                if key not in by_caller:
                    continue
                merged = self._parameters_from_sites(functions[callee_key], [s for c in by_caller.values() for s in c])
                if callee_key in self.root_keys:
                    # Compiled itself too, with what the declared calls vary: guarded as its own frame.
                    merged.update({name: value for name, value in self._default_parameters(functions[callee_key]).items()
                                   if v.guarded(value) is not value})
                if not v.identical(merged, parameters.get(callee_key)):
                    parameters[callee_key] = merged
                    called.add(callee_key)
                    enqueue(functions[callee_key])
        for key in [key for key in results if key not in current]:  # in a fixed order: runs repeat
            dynamo = self.dynamo.merged(compiled_as[key]).merged(functions[key].module.dynamo)
            results[key] = RegionWalker(self, functions[key], handlers(), parameters[key], dynamo,
                                        called=key in called).run()
        _drop_findings_after_loop_breaks(results, self.root_keys)
        _resumed_frames_recompile(results)
        return Analysis(results, functions, graph)

    def analyze_unreachable(self, handlers: Callable[[], dict[type, list[Handler]]], module: ModuleIndex,
                            analysis: Analysis) -> dict[str, FunctionResult]:
        """Walk the module's functions no compiled root reaches, as if each were compiled."""
        results = {}
        for function in module.functions.values():
            if function.key not in analysis.results and not function.disabled:
                dynamo = self.dynamo.merged(module.dynamo).merged(function.compile_settings)
                parameters = self._default_parameters(function)
                results[function.key] = RegionWalker(self, function, handlers(), parameters,
                                                     dynamo).run()
                analysis.functions[function.key] = function
        return results

    def _default_parameters(self, function: FunctionInfo) -> dict[str, v.Value]:
        """Parameters of a root: tensors unless annotated or defaulted as something else."""
        values: dict[str, v.Value] = {}
        node = function.node
        if function.class_name is not None and not function.is_staticmethod:
            first = [*node.params.posonly_params, *node.params.params][:1]
            if first:
                values[first[0].name.value] = v.SELF
        declared_by_calls = function.module.declared_arguments.get(function.qualname, ())
        offset = 1 if function.class_name is not None and not function.is_staticmethod else 0
        for position, param in enumerate([*function.positional_params, *node.params.kwonly_params]):
            kind = parameter_kind(param, self.expander(function.module))
            passed = declared_by_calls[position + offset] if position + offset < len(declared_by_calls) else None
            if passed is not None and (param.annotation is None or passed == kind or isinstance(passed, v.ModuleValue)) and (
                    position < len(function.positional_params)):
                # What every call BREAKSCAN_TARGETS declares passes (refining the annotation's kind:
                # `iters: int` given 2, then 3)
                values[param.name.value] = passed
                continue
            if kind == v.OTHER and param.annotation is not None:  # `problem: InitialValueProblem`: its attributes
                declared = self.declared_value(param.annotation.annotation, function.module)
                kind = declared if isinstance(declared, v.ModuleValue) else kind
            if position > 0 and param.annotation is None and (v.identical(kind, v.TENSOR) or v.identical(kind, v.MAYBE_TENSOR)):
                # Not the input: a tensor (or None, by default) only by assumption.
                kind = v.ASSUMED_TENSOR if kind == v.TENSOR else v.ASSUMED_OPTIONAL
            values[param.name.value] = kind
        star_arg, star_kwarg = node.params.star_arg, node.params.star_kwarg
        # A tuple and a dict (what iterating them gives TorchDynamo) of whatever the caller passes.
        if isinstance(star_arg, cst.Param):
            values[star_arg.name.value] = (self._declared_spread(star_arg, function.module)
                                           or v.container(sort="tuple", elements=v.UNKNOWN))
        if star_kwarg is not None:
            values[star_kwarg.name.value] = v.container(sort="dict", elements=v.UNKNOWN)
        return values

    def _parameters_from_sites(self, callee: FunctionInfo, sites: list) -> dict[str, v.Value]:
        """A helper's parameters: the join of what its call sites pass; defaults where nothing is."""
        node = callee.node
        module = callee.module
        merged: dict[str, v.Value] = {}
        if callee.class_name is not None and not callee.is_staticmethod:
            first = [*node.params.posonly_params, *node.params.params][:1]
            if first:
                merged[first[0].name.value] = v.SELF
                merged.update(_receiver_state(first[0].name.value, sites))
        positional = callee.positional_params
        by_name = {p.name.value: p for p in [*positional, *node.params.kwonly_params]}
        for name, param in by_name.items():
            kinds = []
            for site in sites:
                index = next((i for i, p in enumerate(positional) if p.name.value == name), None)
                if index is not None and index < len(site.arguments):
                    kinds.append(v.as_passed(site.arguments[index]))
                elif name in site.keywords:
                    kinds.append(v.as_passed(site.keywords[name]))
                elif site.spreads and (param.default is None or _defaults_to_none(param)):
                    # Passed in `*args` / `**kwargs`, or left at None: what they hold is not known here
                    # (`Solver(**options)` may give `step_size`), so not known to be None either.
                    kinds.append(v.UNKNOWN)
                elif _defaults_to_none(param):
                    kinds.append(v.NONE)  # left at its default: None, not an optional tensor
                elif param.default is not None and v.written_bool(param.default) is not None:
                    kinds.append(v.written_bool(param.default))  # left at `False`: known to be False
                else:
                    kinds.append(parameter_kind(param, self.expander(module)))  # its default
            passed = functools.reduce(v.join, kinds)
            declared = self.annotation_kind(param.annotation.annotation, module) if param.annotation is not None else None
            # An annotation is better evidence than a guess at the call site, but a union
            # (`t0: Optional[Union[float, Tensor]]`, `max_fpr: Optional[float]`) leaves the choice
            # to what the callers pass, when they all pass something the analysis knows that the
            # union admits.
            ambiguous = (declared == v.MAYBE_TENSOR and passed != v.UNKNOWN) or (
                declared == v.OTHER and v.is_plain(passed) and passed != v.OTHER)
            # What the callers pass may refine what is declared (a sparse tensor, the training mode).
            refined = passed == declared and not v.is_assumed_tensor(passed) and not v.on_some_paths(passed)
            if declared is not None and not isinstance(passed, v.ModuleValue) and not ambiguous and not refined:
                passed = declared
            merged[name] = passed
        spread = any(site.spreads for site in sites)  # what a `*spread` at a call site holds is not known
        star_arg = node.params.star_arg
        if isinstance(star_arg, cst.Param):
            extras = [site.arguments[len(positional):] for site in sites]
            merged[star_arg.name.value] = self._declared_spread(star_arg, module) or _spread_tuple(extras, spread)
        if node.params.star_kwarg is not None:
            named = set(by_name)
            passed_keywords = [{k: kind for k, kind in site.keywords.items() if k not in named} for site in sites]
            merged[node.params.star_kwarg.name.value] = _spread_dict(passed_keywords, spread)
        return merged

    def _declared_spread(self, star: cst.Param, module: ModuleIndex) -> v.Value | None:
        """`*transforms: Transform`: a tuple of objects of the classes the annotation names."""
        if star.annotation is None:
            return None
        declared = self.declared_value(star.annotation.annotation, module)
        return v.container(sort="tuple", elements=declared) if isinstance(declared, v.ModuleValue) else None


def _receiver_state(name: str, sites: list) -> dict[str, v.Value]:
    """The attributes every caller has set on the object before calling its method, joined, bound
    as the method's walker reads them (`self.scale`); one a caller has not set is read as the
    object's class sets it."""
    states = [dict(site.receiver_state) for site in sites]
    common = set.intersection(*(set(state) for state in states)) if states else set()
    return {f"{name}.{attribute}": functools.reduce(v.join, (state[attribute] for state in states))
            for attribute in sorted(common)}


def _spread_tuple(extras: list[list[v.Value]], spread: bool) -> v.Value:
    """`*args` of a helper: a tuple of what its call sites pass beyond the named parameters,
    position by position when every site passes as many."""
    holds_tensors = any(kind in (v.TENSOR, v.TENSORS) for passed in extras for kind in passed)
    if spread:
        return v.container(sort="tuple", holds_tensors=holds_tensors, elements=v.UNKNOWN)
    if extras and len({len(passed) for passed in extras}) == 1:
        items = tuple(functools.reduce(v.join, position) for position in zip(*extras))
        return v.container(items=items, sort="tuple")
    return v.container(sort="tuple", holds_tensors=holds_tensors)


def _spread_dict(passed: list[dict[str, v.Value]], spread: bool) -> v.Value:
    """`**kwargs` of a helper: a dict of the keywords its call sites pass beyond the named
    parameters, key by key (`kwargs["scale"]` is the number passed, not the tensor beside it)."""
    holds_tensors = any(kind in (v.TENSOR, v.TENSORS) for keywords in passed for kind in keywords.values())
    if spread:
        return v.container(sort="dict", holds_tensors=holds_tensors, elements=v.UNKNOWN)
    keys: dict[str, v.Value] = {}
    for keywords in passed:
        for key, kind in keywords.items():
            keys[key] = v.join(keys[key], kind) if key in keys else kind
    return v.container(keys=tuple(keys.items()), sort="dict", holds_tensors=holds_tensors)


# Modules whose classes do not say what an object is (`Any`, `object`, `Enum`) or are modelled as
# kinds of their own (`torch.Tensor`, `numpy.ndarray`).
_NOT_DECLARED_OBJECTS = frozenset({"builtins", "typing", "typing_extensions", "collections", "abc", "enum", "numpy"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_ALIAS_DEPTH = 4  # aliases of aliases, as deep as real code goes; a cycle stops there
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")
_NOT_ALIAS_SOURCES = frozenset({"torch", "typing", "typing_extensions", "collections", "builtins", "numpy"})


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _declared_members(annotation: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The types an annotation allows: `Optional[X]`, `X | None`, `Union[X, Y]`, `"X"` unwrapped."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value
        try:
            return _declared_members(cst.parse_expression(text)) if isinstance(text, str) else []
        except cst.ParserSyntaxError:
            return []
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return [*_declared_members(annotation.left), *_declared_members(annotation.right)]
    if isinstance(annotation, cst.Subscript):
        generic = (dotted_name(annotation.value) or "").rpartition(".")[2]
        if generic in ("Optional", "Union"):
            return [m for e in annotation.slice if isinstance(e.slice, cst.Index) for m in _declared_members(e.slice.value)]
        return []
    return [annotation]


def _common_package(package: str, module: str) -> str:
    """The longest dotted prefix of both: `pkg` for `pkg._core` and `pkg._brownian.base`."""
    common = []
    for mine, theirs in zip(package.split("."), module.split(".")):
        if mine != theirs:
            break
        common.append(mine)
    return ".".join(common)


def _calls_in(function: cst.FunctionDef) -> list[cst.Call]:
    return [call for call in find_nodes(function.body, (cst.Call,)) if isinstance(call, cst.Call)]


def _stored_on_self(function: cst.FunctionDef, call: cst.Call) -> bool:
    """`self.x = call` (or `self.x: T = call`) among the function's statements."""
    for statement in find_nodes(function.body, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
        if statement.value is call and len(targets) == 1 and isinstance(targets[0], cst.Attribute) and (
                isinstance(targets[0].value, cst.Name) and targets[0].value.value == "self"):
            return True
    return False


def _argument_for(call: cst.Call, name: str, position: int | None) -> cst.BaseExpression | None:
    """The expression a call passes for parameter `name` (at `position` among the positional
    ones); None when it passes none, or spreads `*args`/`**kwargs` before it."""
    for index, argument in enumerate(call.args):
        if argument.star:
            return None
        if argument.keyword is None and index == position:
            return argument.value
        if argument.keyword is not None and argument.keyword.value == name:
            return argument.value
    return None


def _built_by_expression(expression: cst.BaseExpression, function: FunctionInfo, module: ModuleIndex) -> set[str]:
    """The classes an expression builds: a constructor call, or a local name every assignment in
    the function binds to one."""
    if isinstance(expression, cst.Call):
        called = module.qualify(dotted_name(expression.func))
        return {called} if called and names_a_class(called) else set()
    if not isinstance(expression, cst.Name):
        return set()
    built: set[str] = set()
    for assign in find_nodes(function.node.body, (cst.Assign,), prune=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        assert isinstance(assign, cst.Assign)
        if any(isinstance(t.target, cst.Name) and t.target.value == expression.value for t in assign.targets):
            classes = _built_by_expression(assign.value, function, module) if len(assign.targets) == 1 else set()
            if not classes:
                return set()
            built |= classes
    return built


# Functions a decorator factory may hand the decorating on to, followed from it (`cached` ->
# `_cached`, `_cached_ignore_args`): more is a registry, not a decorator.
_MOST_HANDED_ON = 4
# A method name more classes define than this is a role many kinds of object play: the object a
# duck-typed call runs it on cannot be told from the name.
_MOST_IMPLEMENTERS = 6


def _names_wraps(decorator: cst.BaseExpression) -> bool:
    """`@wraps(func)`, `@functools.wraps(func)`."""
    named = decorator.func if isinstance(decorator, cst.Call) else decorator
    return (dotted_name(named) or "").rpartition(".")[2] == "wraps"


def _defaults_to_none(param: cst.Param) -> bool:
    return isinstance(param.default, cst.Name) and param.default.value == "None"


def _conditional(finding: RawFinding) -> bool:
    return bool(finding.if_callees_break or finding.if_breaks_within)


def _condition_holds(finding: RawFinding, result: FunctionResult, breaks: Callable[[str], bool],
                     surely_breaks: Callable[[str], bool]) -> bool:
    """Whether what a conditional finding rests on breaks (see `_drop_findings_after_loop_breaks`);
    one resting on warnings alone becomes a warning."""
    if finding.if_callees_break and not any(map(surely_breaks if finding.callees_surely else breaks,
                                                finding.if_callees_break)):
        return False
    if finding.unless_callees_break and all(map(breaks, finding.unless_callees_break)):
        return False  # an object built by one of several classes: only when each `__init__` breaks
    if finding.if_breaks_within:
        # Only the function's own findings there: a helper called there may break on other paths
        # than the one taken (kornia's `to_tensor` of an image, given a tensor).
        inside = set().union(*map(subtree_ids, finding.if_breaks_within))
        inner = [f for f in result.findings if id(f.node) in inside and f.rule.kind == "break" and not f.only_if_eager
                 and not _conditional(f)]
        if not inner:
            return False
        # TorchDynamo meets the items' breaks first, then gives up on the call: only what comes
        # after them runs eagerly.
        finding.order = max(f.order for f in inner)
        if all(f.severity != "error" for f in inner) and finding.severity == "error":
            finding.severity = "warning"
            finding.message += " (if the break inside it happens, which breakscan is unsure of)"
    return True


def _certain_break(finding: RawFinding) -> bool:
    """A break that happens whenever its line runs (a recompile finding breaks nothing)."""
    return (finding.rule.kind == "break" and finding.severity == "error" and not finding.only_if_eager
            and not _conditional(finding))


def _unconditional_break(finding: RawFinding) -> bool:
    return _certain_break(finding) and not finding.arms


def _sites(result: FunctionResult) -> list[tuple[CallSite, list[str]]]:
    """Each call site with the keys of every function called at its node: a call that may run
    several functions (a method of each class the object may be) breaks for certain only when
    each of them does. (The `__init__`, `__enter__` and `__exit__` a `with Timer():` runs are
    three calls at one node.)"""
    callees: dict[tuple[int, int], list[str]] = {}
    for site in result.calls:
        callees.setdefault((id(site.node), site.order), []).append(site.callee.key)
    return [(site, callees[id(site.node), site.order]) for site in result.calls]


def _break_test(results: dict[str, FunctionResult]) -> Callable[[str], bool]:
    """Whether a function (by key) may break: a certain break of its own, or a call of one that may."""
    may_break: dict[str, bool] = {}

    def breaks(key: str) -> bool:
        if key not in may_break:
            may_break[key] = False  # recursion: assume not while it is being decided
            result = results.get(key)
            may_break[key] = result is not None and (
                any(map(_certain_break, result.findings))
                or any(breaks(s.callee.key) for s in result.calls))
        return may_break[key]

    return breaks


def _resumed_frames_recompile(results: dict[str, FunctionResult]) -> None:
    """A function compiled as a frame of its own and given inputs that differ from call to call
    (`differing_inputs`: BR016's loop-carried input, which requires grad on the second pass only)
    recompiles at its `def`; where it breaks, TorchDynamo resumes it in a new frame, which guards
    those inputs again where it reads them (or holds them on its stack), so each such frame
    recompiles too. A helper it passes them to at a breaking call is a frame of its own as well:
    it recompiles at its `def` when it reads them before its first break, and where it resumes.
    So does the function itself: its first frame guards only the inputs it reads (a function that
    breaks before it reads them recompiles where it resumes, not at its `def`). A function whose
    break is in a loop or a `try` is not resumed: it runs eagerly."""
    breaks = _break_test(results)
    for result in list(results.values()):
        for finding in [f for f in result.findings if f.differing_inputs]:
            read_first = _report_resumed(finding, finding.function, set(finding.differing_inputs), results, breaks,
                                         result, seen=set(), at_start=False)
            if read_first is False:
                result.findings.remove(finding)


def _report_resumed(finding: RawFinding, function: FunctionInfo, inputs: set[str],
                    results: dict[str, FunctionResult], breaks: Callable[[str], bool], into: FunctionResult,
                    seen: set[str], at_start: bool) -> bool | None:
    """Report the frames `function` resumes in that guard `inputs`; whether it reads them before
    its first break (None when that is not known: no break it resumes after)."""
    own = results.get(function.key)
    if own is None or function.key in seen or len(seen) > _RESUMED_DEPTH:
        return None
    seen.add(function.key)
    points = sorted([(f.order, f.node, f.in_loop or f.in_try or f.ends_frame, None) for f in own.findings
                     if f.rule.kind == "break" and _unconditional_break(f) and not f.arms]
                    + [(s.order, s.node, s.in_loop or s.in_try, s) for s in own.calls
                       if breaks(s.callee.key) and not s.arms and isinstance(s.node, cst.Call)],
                    key=lambda point: point[0])
    if not points or any(skips for _, _, skips, _ in points):
        return None
    body = function.node.body
    order = {id(node): i for i, node in enumerate(find_nodes(body, (cst.CSTNode,), prune=(cst.FunctionDef, cst.Lambda)))}
    spans = {id(node): (order[id(node)], order[id(node)] + len(find_nodes(node, (cst.CSTNode,))))
             for _, node, _, _ in points if id(node) in order}
    points = [point for point in points if id(point[1]) in spans]
    if not points:
        return None
    reads = _derived_reads(body, inputs, order)
    parents = parent_map(body)

    def read_between(start: int, end: int) -> bool:
        return any(start <= position < end for position in reads)

    message = ("resumed here after the break, this function is a frame of its own again: it is given "
               "the input that requires grad on one call and not on another, and guards it where it reads "
               "it, so it compiles again")
    read_first = read_between(0, spans[id(points[0][1])][0])
    if at_start and read_first:
        start = function.node.decorators[0] if function.node.decorators else function.node
        into.findings.append(dataclasses.replace(finding, node=start, function=function, message=message,
                                                 differing_inputs=()))
    for index, (_, node, _, site) in enumerate(points):
        begin, end = spans[id(node)]
        following = spans[id(points[index + 1][1])][1] if index + 1 < len(points) else len(order)
        statement = _enclosing_statement(node, parents)
        stack_start = order.get(id(statement), begin) if statement is not None else begin
        held_on_stack = read_between(stack_start, begin)
        if held_on_stack or read_between(end, following):
            into.findings.append(dataclasses.replace(finding, node=node, function=function, message=message,
                                                     differing_inputs=()))
        if site is not None:
            passed = _parameters_given(site, node, reads, order)
            if passed:
                _report_resumed(finding, site.callee, passed, results, breaks, into, seen, at_start=True)
    return read_first


_RESUMED_DEPTH = 4  # helpers deep, along one chain


def _derived_reads(body: cst.CSTNode, inputs: set[str], order: dict[int, int]) -> set[int]:
    """Positions (in `order`) of the names that hold the inputs or what was computed from them
    (`x1, x2 = x.chunk(2)`)."""
    names = set(inputs)
    for statement in find_nodes(body, (cst.Assign, cst.AugAssign, cst.AnnAssign), prune=(cst.FunctionDef, cst.Lambda)):
        value = statement.value
        if value is not None and any(isinstance(n, cst.Name) and n.value in names for n in find_nodes(value, (cst.Name,))):
            targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
            names |= {n.value for t in targets for n in find_nodes(t, (cst.Name,)) if isinstance(n, cst.Name)}
    return {order[id(n)] for n in find_nodes(body, (cst.Name,), prune=(cst.FunctionDef, cst.Lambda))
            if isinstance(n, cst.Name) and n.value in names and id(n) in order}


def _enclosing_statement(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> cst.CSTNode | None:
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = parents.get(id(current))
    return current


def _parameters_given(site: CallSite, call: cst.Call, reads: set[int], order: dict[int, int]) -> set[str]:
    """The callee's parameters that the call gives an input (or a value computed from one)."""
    def given(argument: cst.Arg) -> bool:
        return any(order.get(id(n)) in reads for n in find_nodes(argument.value, (cst.Name,)))

    params = site.callee.positional_params
    named = {p.name.value for p in (*params, *site.callee.node.params.kwonly_params)}
    passed = {params[i].name.value for i, a in enumerate(a for a in call.args if a.keyword is None and not a.star)
              if i < len(params) and given(a)}
    passed |= {a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value in named and given(a)}
    return passed


def _drop_findings_after_loop_breaks(results: dict[str, FunctionResult], roots: set[str]) -> None:
    """TorchDynamo cannot resume a frame inside a loop or inside a `try` block's body: a break
    there (in the function itself or in a helper it calls there) makes it run the rest of the
    frame eagerly (for a loop, "graph break in loop, frame skipped": the whole frame it was
    tracing, from the last break it resumed after), so the function's later constructs never
    break. Fixing that first break brings them back, and breakscan reports them then. What breaks
    only in eager code (`only_if_eager`) is kept where the code runs eagerly, and nowhere else;
    what breaks only when a function it calls breaks (`if_callees_break`), or when something
    under a node breaks (`if_breaks_within`), is kept when that does, and the function then falls
    back to eager from there, as after a break in a loop. A function called from compiled code that
    TorchDynamo would not trace as a frame of its own (`untraced_alone`) runs untraced after its
    first break: its later constructs never break either."""
    breaks = _break_test(results)
    surely: dict[str, bool] = {}
    # Where each function surely runs eagerly from, and where TorchDynamo gives up on it (orders).
    eager_since: dict[str, tuple[int, int]] = {}
    skipped_whole: set[str] = set()  # the functions TorchDynamo may give up on before their first break

    def surely_breaks(key: str) -> bool:
        """Whether the function breaks on every path: a break, or a call of functions that each
        surely break, in no branch of it."""
        if key not in surely:
            surely[key] = False
            result = results.get(key)
            surely[key] = result is not None and (
                any(_unconditional_break(f) for f in result.findings)
                or any(not s.arms and all(map(surely_breaks, keys)) for s, keys in _sites(result)))
        return surely[key]

    for key, result in results.items():
        if key.endswith(".__exit__") and surely_breaks(key[: -len("__exit__")] + "__enter__"):
            # Its `__enter__` breaks on every path: TorchDynamo cannot break while entering a
            # context manager and runs the frame using it eagerly (probed), so its exit never breaks.
            result.findings = []
            continue
        result.findings = [f for f in result.findings if _condition_holds(f, result, breaks, surely_breaks)]
        certain = [f for f in result.findings if f.rule.kind == "break" and f.severity == "error" and not f.only_if_eager]
        sites = _sites(result)
        breaking_calls = [s for s, keys in sites if all(map(breaks, keys))]
        # Where TorchDynamo gives up on the frame: (order, the `if` arms it happens in, whether it
        # compiled the frame up to there first).
        skips = ([(f.order, f.arms, f.ends_frame) for f in certain if f.in_loop or f.in_try or f.ends_frame
                  or _conditional(f)]
                 + [(s.order, s.arms, False) for s in breaking_calls if s.in_loop or s.in_try]
                 + [(order, arms, False) for order, arms in result.frame_skips])
        if result.untraced_alone and key not in roots:
            # After its first break the rest of it runs as a frame TorchDynamo does not trace.
            skips += [(f.order, f.arms, False) for f in certain] + [(s.order, s.arms, False) for s in breaking_calls]
        break_orders = [f.order for f in certain] + [s.order for s in breaking_calls]
        eager_from = _eager_from(min(((order, ends) for order, _, ends in skips), default=None), break_orders)
        # The same, from the give-ups that happen on every path through the function.
        sure_skips = ([(f.order, f.ends_frame) for f in certain
                       if (f.in_loop or f.in_try or f.ends_frame) and _unconditional_break(f)]
                      + [(s.order, False) for s, keys in sites if (s.in_loop or s.in_try) and not s.arms
                         and all(map(surely_breaks, keys))]
                      + [(order, False) for order, arms in result.frame_skips if not arms])
        surely_eager_from = _eager_from(min(sure_skips, default=None), break_orders)
        kept = []
        for finding in result.findings:
            if finding.only_if_eager:
                since = surely_eager_from if finding.surely_eager else eager_from
                if since is not None and finding.order > since:
                    kept.append(finding)
            elif finding.own_frame or not any(order < finding.order and not exclusive(arms, finding.arms)
                                              for order, arms, _ in skips):
                # A give-up in the other arm of an `if` (`elif`) than the finding's is not on its way.
                kept.append(finding)
        first = min([f for f in certain if not (f.in_loop or f.in_try or f.ends_frame)] + breaking_calls,
                    key=lambda b: b.order,
                    default=None)
        if isinstance(first, RawFinding) and first.order in result.untraced_resumes:
            # What follows, on its path, a break resumed in a frame that holds no tensor runs untraced.
            kept = [f for f in kept if f.own_frame or f.order <= first.order or f.arms[:len(first.arms)] != first.arms]
        # A construct that breaks where it is traced is reported as that: what it does once the frame
        # runs eagerly (BS207's comprehension, after the comprehension's own break) follows from it.
        traced = {id(f.node) for f in kept if f.rule.kind == "break" and not f.only_if_eager}
        kept = [f for f in kept if not (f.only_if_eager and id(f.node) in traced)]
        result.findings = kept
        if surely_eager_from is not None:
            eager_since[key] = (surely_eager_from, min(sure_skips)[0])
        if eager_from == -1:
            skipped_whole.add(key)
    for result in results.values():
        # A frame TorchDynamo gives up on before its first graph (a break in a loop, on some path) is
        # marked to run eagerly from then on: compiled as a frame of its own, it never recompiles.
        result.findings = [f for f in result.findings if not (
            f.rule.kind == "recompile" and f.own_frame and f.function.key in skipped_whole)]
    _drop_untraced_frames(results, roots, eager_since)


def _eager_from(skip: tuple[int, bool] | None, break_orders: list[int]) -> int | None:
    """Where a function runs eagerly from (an order; -1: its start), given where TorchDynamo first
    gives up on it (order, and whether it compiled the frame up to there) and its breaks: the
    frame it gave up on started after the last break before that, or at the top."""
    if skip is None:
        return None
    order, compiled_up_to = skip
    return order if compiled_up_to else max((o for o in break_orders if o < order), default=-1)


def _drop_untraced_frames(results: dict[str, FunctionResult], roots: set[str],
                          eager_since: dict[str, tuple[int, int]]) -> None:
    """A function called only where its callers run eagerly is a frame of its own; TorchDynamo
    does not trace one that holds no tensor (`untraced_alone`: a timer's `__call__`, a string
    helper), so nothing in it recompiles, and what it calls is called eagerly too. Called only
    after its callers gave up (not as they gave up: TorchDynamo traced the call that made them
    give up, and met its break), nothing in it breaks either."""
    callers: dict[str, list[tuple[str, int]]] = {}
    for key, result in results.items():
        for site in result.calls:
            callers.setdefault(site.callee.key, []).append((key, site.order))

    def untraced(after_giving_up: bool) -> set[str]:
        found: set[str] = set()
        changed = True
        while changed:  # a caller found untraced runs eagerly from its start
            changed = False
            for key, result in results.items():
                sites = callers.get(key, [])
                if key in found or key in roots or not result.untraced_alone or not sites:
                    continue
                if all(caller in found or (caller in eager_since and order > eager_since[caller][after_giving_up])
                       for caller, order in sites):
                    found.add(key)
                    changed = True
        return found

    for key in untraced(after_giving_up=False):
        results[key].findings = [f for f in results[key].findings if f.rule.kind != "recompile"]
    for key in untraced(after_giving_up=True):
        results[key].findings = []
