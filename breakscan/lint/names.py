"""Resolving names to qualified names from a module's own imports.

libcst's QualifiedNameProvider costs about three parses per file; the rules only need
`import torch.nn as nn; nn.Linear` -> `torch.nn.Linear`, which the import statements tell directly.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable

import libcst as cst

BUILTIN_NAMES = frozenset(dir(builtins))


def names_a_class(dotted: str) -> bool:
    """Whether a dotted name's last part is written as a class's (`nn.Linear`, `_Context`)."""
    return dotted.rsplit(".", 1)[-1].lstrip("_")[:1].isupper()


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` -> "a.b.c"; None for anything that is not a plain attribute chain."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def module_dotted(node: cst.BaseExpression | None) -> str:
    return dotted_name(node) or "" if node is not None else ""


def absolute_module(module: str, relative_dots: int, package: str) -> str:
    """Resolve `from ..x import y` against the importing module's package."""
    if not relative_dots:
        return module
    base = package.split(".") if package else []
    if relative_dots > 1:
        base = base[: len(base) - (relative_dots - 1)]
    return ".".join(part for part in [*base, module] if part)


def import_bindings(statement: cst.Import | cst.ImportFrom, package: str) -> Iterable[tuple[str, str]]:
    """(local name, qualified name) pairs bound by one import statement."""
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            full = module_dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value, full
            else:
                top = full.split(".")[0]
                yield top, top
        return
    if isinstance(statement.names, cst.ImportStar):
        return
    source = absolute_module(module_dotted(statement.module), len(statement.relative), package)
    for alias in statement.names:
        name = module_dotted(alias.name)
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
        yield local, f"{source}.{name}" if source else name


def name_pattern(node: cst.BaseExpression) -> str | None:
    """A string expression as a shell-style pattern of what it may be: its literal text, with `*`
    for each part that is not (`f"{kind}_reduction"`, `"{}_reduction".format(kind)`,
    `"get_" + name`). None for anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) and not _GLOB_CHARACTERS & set(value) else None
    if isinstance(node, cst.FormattedString):
        parts = [part.value if isinstance(part, cst.FormattedStringText) else "*" for part in node.parts]
        return "".join(parts) if not _GLOB_CHARACTERS & set("".join(parts).replace("*", "")) else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        template = name_pattern(node.func.value)
        return re.sub(r"\{[^{}]*\}", "*", template) if template is not None else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = name_pattern(node.left), name_pattern(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left, right = name_pattern(node.left), name_pattern(node.right)
        return (left or "*") + (right or "*") if left is not None or right is not None else None
    return None


_GLOB_CHARACTERS = frozenset("*?[")
