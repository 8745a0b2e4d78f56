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
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from breakscan.lint.index import is_torch_module_base
from breakscan.lint.names import absolute_module

# Bases of bases, as deep as real hierarchies go; a cycle stops there too.
_DEPTH = 12


@dataclass(frozen=True)
class ClassOutline:
    bases: tuple[str, ...]  # qualified names, of the bases that have one
    defines_forward: bool


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
            head, _, rest = (_dotted(base) or "").partition(".")
            source = imports.get(head) or (f"{name}.{head}" if head in own else None)
            if source is not None:
                bases.append(f"{source}.{rest}" if rest else source)
        forward = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward" for s in node.body)
        classes[node.name] = ClassOutline(tuple(bases), forward)
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
            facts = (any(m for m, _ in inherited), found.defines_forward or any(f for _, f in inherited))
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
