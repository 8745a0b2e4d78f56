"""Whether a file's classes inherit a `forward`, read with `ast` from outlines of the modules
their bases come from.

A file that defines no `forward` may still hold compiled code: a loss or a layer in a file of its
own, whose base class (elsewhere, maybe several classes up) has the `forward` that runs on it,
calling the file's overrides through `self`. Most such files (enums, exceptions, helpers of a
package's own hierarchies) hold none, and a libcst parse of them, and of the modules their bases
come from, costs more than the rest of a scan of torch's own sources: the question is answered
from outlines (each class's bases and whether it defines `forward`) read with `ast`, 16 times
cheaper, and only a file that does inherit a module's forward is then parsed and analysed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from breakscan.lint.index import is_torch_module_base
from breakscan.lint.names import absolute_module

# Bases of bases, as deep as real hierarchies go; a cycle stops there too.
_DEPTH = 12


@dataclass(frozen=True)
class ClassOutline:
    bases: tuple[str, ...]  # qualified names, of the bases that have one
    methods: frozenset[str]  # the names of the methods its body defines


@dataclass(frozen=True)
class ModuleOutline:
    imports: dict[str, str]  # local name -> qualified name (re-exports are followed through it)
    classes: dict[str, ClassOutline]  # the top-level classes


def outline(tree: ast.Module, name: str, package: str) -> ModuleOutline:
    """A module's imports and top-level classes, their bases qualified: imported names through the
    imports, the module's own classes by its name."""
    imports: dict[str, str] = {}
    for statement in _module_level(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                top = alias.name.split(".")[0]
                imports[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(statement, ast.ImportFrom):
            source = absolute_module(statement.module or "", statement.level, package)
            for alias in statement.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{source}.{alias.name}" if source else alias.name
    defined = [s for s in _module_level(tree.body) if isinstance(s, ast.ClassDef)]
    own = {c.name for c in defined}
    classes = {}
    for node in defined:
        bases = []
        for base in node.bases:
            if isinstance(base, ast.Subscript):  # a generic's parameterisation: `Controller[State]`
                base = base.value
            head, _, rest = (_dotted(base) or "").partition(".")
            source = imports.get(head) or (f"{name}.{head}" if head in own else None)
            if source is not None:
                bases.append(f"{source}.{rest}" if rest else source)
        methods = frozenset(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        classes[node.name] = ClassOutline(tuple(bases), methods)
    return ModuleOutline(imports, classes)


class Lineages:
    """Whether classes are nn.Modules that run a scanned `forward`, from module outlines that
    `load` gives by module name (None for a module not scanned)."""

    def __init__(self, load: Callable[[str], ModuleOutline | None]):
        self._load = load
        self._facts: dict[str, tuple[bool, bool]] = {}

    def runs_forward(self, qualified: str) -> bool:
        is_module, has_forward = self._class_facts(qualified, 0)
        return is_module and has_forward

    def _class_facts(self, qualified: str, depth: int) -> tuple[bool, bool]:
        """(derives from torch's nn.Module, it or a base defines `forward`)."""
        if is_torch_module_base(qualified):
            return True, False
        if depth > _DEPTH:
            return False, False
        known = self._facts.get(qualified)
        if known is not None:
            return known
        self._facts[qualified] = (False, False)  # while it is being answered: cycles end here
        found = self._class(qualified)
        facts = (False, False)
        if isinstance(found, str):  # re-exported: `from .losses import Circle` in a package's __init__
            facts = self._class_facts(found, depth + 1)
        elif found is not None:
            inherited = [self._class_facts(base, depth + 1) for base in found.bases]
            facts = (any(m for m, _ in inherited), "forward" in found.methods or any(f for _, f in inherited))
        self._facts[qualified] = facts
        return facts

    def _class(self, qualified: str) -> ClassOutline | str | None:
        """The class's outline, the name a module re-exports it under, or None."""
        module, _, name = qualified.rpartition(".")
        found = self._load(module) if module else None
        if found is None:
            return None
        if name in found.classes:
            return found.classes[name]
        return found.imports.get(name)


class Hierarchy:
    """The scanned classes that derive from a class, directly or through other scanned classes, in
    a package: what a value declared with that class in the package may be (a model library's
    `nn.Embedding` subclasses in other models' folders are not what one model's layer is given).
    `candidates(name)` gives the modules whose class statements name a base `name` (by its last
    part), `load` a module's outline."""

    def __init__(self, candidates: Callable[[str], Iterable[str]], load: Callable[[str], ModuleOutline | None],
                 implementing: Callable[[str], Iterable[str]] = lambda method: (),
                 scanned: Callable[[str], bool] = lambda module: False):
        self._candidates = candidates
        self._load = load
        self._implementing = implementing  # the modules that may define a method, by its name
        self._scanned = scanned  # whether a module is one of the scanned files
        self._known: dict[tuple[str, str], frozenset[str]] = {}
        self._implementers: dict[tuple[str, str], frozenset[str]] = {}
        self._imported: dict[str, frozenset[str]] = {}

    def implementers(self, method: str, importer: str) -> frozenset[str]:
        """The scanned classes whose own body defines `method`, in the scanned modules that
        running module `importer` imports (directly or not): what an object the
        lint cannot type may be when that module's code calls the method on it (duck typing: a
        solver's `step_size_controller.adapt_step_size(...)`). A class no import leads to (a
        model family of its own, in a library of many) is not one."""
        key = (method, importer)
        known = self._implementers.get(key)
        if known is None:
            imported = self.imported_by(importer)
            found: set[str] = set()
            for module in self._implementing(method):
                if module not in imported:
                    continue
                loaded = self._load(module)
                found.update(f"{module}.{name}" for name, cls in (loaded.classes.items() if loaded else ())
                             if method in cls.methods)
            known = self._implementers[key] = frozenset(found)
        return known

    def imported_by(self, module: str) -> frozenset[str]:
        """`module` and the scanned modules importing it runs: its imports, theirs, and the
        packages holding each (up to `_MOST_IMPORTED` of them)."""
        known = self._imported.get(module)
        if known is None:
            seen = {module}
            pending = [module]
            while pending and len(seen) < _MOST_IMPORTED:
                outline = self._load(pending.pop(0))
                for target in (outline.imports.values() if outline is not None else ()):
                    name = target if self._scanned(target) else target.rpartition(".")[0]  # a module, or a name in one
                    while name and name not in seen and self._scanned(name):
                        seen.add(name)  # and the packages holding it, whose `__init__` runs first
                        pending.append(name)
                        name = name.rpartition(".")[0]
            known = self._imported[module] = frozenset(seen)
        return known

    def subclasses(self, qualified: str, within: str = "") -> frozenset[str]:
        """Those defined in package `within` (its modules and its subpackages'; every scanned
        module for ""). Empty for a base so general that more than `_MOST_SUBCLASSES` of them, or
        of `_MOST_MODULES` modules, derive from it: what such an object is cannot be told from it."""
        key = (qualified, within)
        known = self._known.get(key)
        if known is not None:
            return known
        found: set[str] = set()
        pending = [qualified]
        while pending and len(found) <= _MOST_SUBCLASSES:
            target = pending.pop()
            for module in self._candidates(target.rpartition(".")[2]):
                if within and module != within and not module.startswith(within + "."):
                    continue
                loaded = self._load(module)
                for name, cls in (loaded.classes.items() if loaded is not None else ()):
                    subclass = f"{module}.{name}"
                    if subclass not in found and any(self._canonical(base) == target for base in cls.bases):
                        found.add(subclass)
                        pending.append(subclass)
        modules = {name.rpartition(".")[0] for name in found}
        general = len(found) > _MOST_SUBCLASSES or len(modules) > _MOST_MODULES
        self._known[key] = frozenset() if general else frozenset(found)
        return self._known[key]

    def _canonical(self, qualified: str) -> str:
        """The name a class is defined under, through scanned re-exports (`from .transforms
        import Exp` in a package's `__init__`)."""
        for _ in range(_DEPTH):
            module, _, name = qualified.rpartition(".")
            loaded = self._load(module) if module else None
            if loaded is None or name in loaded.classes or name not in loaded.imports:
                break
            qualified = loaded.imports[name]
        return qualified


# A base class that many more scanned classes derive from, or classes in many more modules, is too
# general to say what an object is (and reading what each may do would parse every one of those
# modules: on torch's own sources, twice the time and memory of the whole lint).
_MOST_SUBCLASSES = 64
_MOST_MODULES = 4
# Modules followed from one module's imports when asking what its code may hold: a package's own
# modules (torchode's 12, geoopt's 40) fit; a library's hub modules import far more.
_MOST_IMPORTED = 200


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import, inside `if`/`try` blocks too (`try: from a import B`)."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)):
                yield from _module_level(block)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
