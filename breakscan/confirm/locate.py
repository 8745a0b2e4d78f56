"""How the worker imports a target's file: as the module it is in its project, named and searched
for by the lint's own resolver (`breakscan.lint.resolve`), so that relative and absolute imports
of the project work and a file named like an installed package never stands in for it.

Runs in the parent (no torch, nothing imported from the user's code).
"""

from __future__ import annotations

import keyword
import os
from dataclasses import dataclass

from breakscan.lint.resolve import ModuleResolver


@dataclass(frozen=True)
class ModuleSite:
    """A file's dotted module name and the folders to put first on `sys.path` to import it (its
    import root first). `package` is empty for a file in no package (imported as a script is)."""

    name: str
    package: str
    search_path: tuple[str, ...]


def module_site(path: str, src_roots: tuple[str, ...] = ()) -> ModuleSite:
    resolver = ModuleResolver(src_roots)
    absolute = os.path.abspath(path)
    name, package = resolver.module_name(absolute)
    return ModuleSite(name, package, tuple(resolver.project_search_path(os.path.dirname(absolute))))


def find_module(name: str, folder: str, src_roots: tuple[str, ...] = ()) -> str | None:
    """The file of the dotted module `name` as the project around `folder` resolves it (a package's
    `__init__.py`), or None."""
    located = ModuleResolver(src_roots).locate(name, os.path.join(os.path.abspath(folder), "__main__.py"))
    return os.path.abspath(located.path) if located is not None else None


def main_file(name: str, folder: str, src_roots: tuple[str, ...] = ()) -> str | None:
    """What `python -m name` runs from `folder`: the module's file, or a package's `__main__.py`."""
    found = find_module(name, folder, src_roots)
    if found is not None and os.path.basename(found) == "__init__.py":
        main = os.path.join(os.path.dirname(found), "__main__.py")
        return main if os.path.isfile(main) else None
    return found


def split_module_entry(entry: str) -> tuple[str | None, str]:
    """`package.module:expr` -> ("package.module", "expr"); any other entry -> (None, entry)."""
    module, colon, expression = entry.partition(":")
    parts = module.strip().split(".")
    if colon and expression.strip() and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return module.strip(), expression.strip()
    return None, entry
