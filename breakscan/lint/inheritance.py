"""The classes a file derives from classes of other modules, read with `ast`.

A file that defines no `forward` may still hold compiled code: a loss or a layer in a file of its
own, whose base class (elsewhere) has the `forward` that runs on it, calling the file's overrides
through `self`. Whether a base has one takes its module's index; which bases to look up is read
with `ast`, 16 times cheaper than the libcst parse such a file is otherwise spared.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from breakscan.lint.names import absolute_module


def imported_bases(tree: ast.Module, package: str) -> set[str]:
    """Qualified names of the imported classes the module's top-level classes derive from
    (`class Circle(GenericPairLoss)` after `from .generic import GenericPairLoss`)."""
    imports: dict[str, str] = {}
    for statement in _module_level(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    imports[top] = top
        elif isinstance(statement, ast.ImportFrom):
            source = absolute_module(statement.module or "", statement.level, package)
            for alias in statement.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = f"{source}.{alias.name}" if source else alias.name
    bases = set()
    for statement in _module_level(tree.body):
        if not isinstance(statement, ast.ClassDef):
            continue
        for base in statement.bases:
            head, _, rest = (_dotted(base) or "").partition(".")
            if head in imports:
                bases.add(f"{imports[head]}.{rest}" if rest else imports[head])
    return bases


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
