"""Where an imported module lives on disk, found the way Python's import system would find it
from the scanned code, without importing anything.

A file's module name comes from its import root: the folder above its top-level package. The top
package is the highest folder holding an `__init__.py` within the file's project (folders between
without one are namespace packages, as Python resolves them); a file in no package is named from
the deepest configured `src` root holding it, else from its own folder (as a script would be).

An absolute import is looked up, in order, in the importer's import root, its own folder when it
is a script, the project's roots (the folder with `pyproject.toml`/`setup.py`/`setup.cfg`/`.git`,
its `src/`, and config `src = [...]`) and, for the installed packages that are followed
(`--follow`, config `follow = [...]`), the environment's site-packages. Install locations hold
many distributions: from one, only the importer's own top-level package resolves (plus followed
ones), so linting one installed library never wanders into another; an installed package linted
itself resolves to the files scanned, not to the rest of it on disk.
"""

from __future__ import annotations

import ast
import functools
import importlib.machinery
import importlib.util
import os
import site
import sys
import sysconfig
from dataclasses import dataclass

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_INSTALL_FOLDERS = ("site-packages", "dist-packages")
# torch's own packages are never followed: the rules model torch's API by name, and TorchDynamo
# traces torch by its own rules, not as user code.
_TORCH_PACKAGES = frozenset({"torch", "functorch", "torchgen"})


@dataclass(frozen=True)
class Located:
    """A module's file, and the installed package it belongs to when it was reached by following."""

    path: str
    library: str | None = None


@dataclass(frozen=True)
class FollowPolicy:
    """Which installed packages calls are followed into: every one the project's code calls
    (`everything`), and those named in config anywhere."""

    everything: bool = False
    packages: tuple[str, ...] = ()

    def follows(self, package: str, from_project: bool) -> bool:
        if package in _TORCH_PACKAGES or package in dynamo_skipped_packages():
            return False
        return package in self.packages or (self.everything and from_project)

    @property
    def active(self) -> bool:
        return self.everything or bool(self.packages)


class ModuleResolver:
    """Module names of files, and files of module names. Picklable: `--jobs` workers get a copy
    and fill their own lookup caches."""

    def __init__(self, src_roots: tuple[str, ...] = (), follow: FollowPolicy = FollowPolicy()):
        self.src_roots = tuple(os.path.abspath(root) for root in src_roots)
        self.follow = follow
        self._found: dict[tuple[str, str], str | None] = {}

    def __getstate__(self) -> dict:
        return {"src_roots": self.src_roots, "follow": self.follow, "_found": {}}

    # -- names of files -------------------------------------------------------------------------
    def module_name(self, path: str) -> tuple[str, str]:
        """(dotted module name, package) of the file at `path`."""
        absolute = os.path.abspath(path)
        directory, filename = os.path.split(absolute)
        stem = os.path.splitext(filename)[0]
        root = self.import_root(directory)
        parts = os.path.relpath(directory, root).split(os.sep) if directory != root else []
        if not all(part.isidentifier() for part in parts):
            parts = []  # not importable from that root: name it as a script
        if stem != "__init__":
            parts.append(stem)
        name = ".".join(parts)
        package = name if stem == "__init__" else name.rpartition(".")[0]
        return name, package

    def import_root(self, directory: str) -> str:
        top = _top_package(directory)
        if top is not None:
            return os.path.dirname(top)
        holding = [root for root in self.src_roots if _is_within(directory, root)]
        return max(holding, key=len) if holding else directory

    def project_search_path(self, directory: str) -> list[str]:
        """The folders the project's modules are found in from `directory`, in lookup order: its
        import root, a script's own folder, config `src` roots, the project folder and its `src/`
        (what running the code needs on `sys.path` to import them as the lint resolves them)."""
        return [root for root, library in self._roots(os.path.abspath(directory), "") if library is None]

    # -- files of names -------------------------------------------------------------------------
    def locate(self, name: str, importer: str) -> Located | None:
        """The file defining module `name` as imported from the file `importer`, or None when it is
        not a module of the project (nor of a followed package), or a namespace folder."""
        parts = name.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        directory = os.path.dirname(os.path.abspath(importer))
        if not self._reads_disk(directory, parts[0]):
            return None
        for root, library in self._roots(directory, parts[0]):
            found = self._find_under(root, parts)
            if found is not None:
                return Located(_display(found, importer), library)
        return None

    def probed(self, name: str, importer: str) -> list[str]:
        """The paths whose appearing would make `name` resolve differently (for the cache)."""
        top = name.split(".")[0]
        directory = os.path.dirname(os.path.abspath(importer))
        if not self._reads_disk(directory, top):
            return []
        return [candidate for root, _ in self._roots(directory, top)
                for candidate in (os.path.join(root, top), os.path.join(root, top + ".py"))]

    def _reads_disk(self, directory: str, top: str) -> bool:
        """Whether imports of `top` from `directory` are looked up on disk. Not when linting an
        installed package itself (torch, transformers...): its modules are the files scanned
        (FileSet knows them), and reading the rest of a large package would analyse far more than
        was asked for; followed packages are the exception."""
        return not _is_install_location(self.import_root(directory)) or self.follow.follows(top, from_project=False)

    def _roots(self, directory: str, top: str) -> list[tuple[str, str | None]]:
        own_root = self.import_root(directory)
        own_top = os.path.relpath(directory, own_root).split(os.sep)[0] if directory != own_root else None
        in_install = _is_install_location(own_root)
        roots: list[tuple[str, str | None]] = []
        if not in_install or top == own_top:
            roots.append((own_root, None))
        if not in_install:
            if _top_package(directory) is None:
                roots.append((directory, None))  # a script's own folder is first on sys.path
            roots += [(root, None) for root in (*self.src_roots, *_project_roots(directory))]
        if self.follow.active and self.follow.follows(top, from_project=not in_install):
            roots += [(root, top) for root in _install_locations()]
        seen: set[str] = set()
        return [(root, library) for root, library in roots if not (root in seen or seen.add(root))]

    def _find_under(self, root: str, parts: list[str]) -> str | None:
        key = (root, ".".join(parts))
        if key not in self._found:
            base = os.path.join(root, *parts)
            self._found[key] = next(
                (candidate for candidate in (base + ".py", os.path.join(base, "__init__.py"))
                 if os.path.isfile(candidate)), None)
        return self._found[key]


def _display(found: str, importer: str) -> str:
    """Relative to the working folder when the importer was given that way and the file is below it."""
    if os.path.isabs(importer):
        return found
    relative = os.path.relpath(found)
    return found if relative.startswith(os.pardir) else relative


def _is_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))


def _is_install_location(folder: str) -> bool:
    return os.path.basename(folder) in _INSTALL_FOLDERS


@functools.lru_cache(maxsize=4096)
def _enclosure(directory: str) -> str | None:
    """The nearest folder at or above `directory` that bounds a project: one with a project marker,
    or the install location (site-packages) the directory is in."""
    current = directory
    while True:
        if _is_install_location(current) or any(
                os.path.exists(os.path.join(current, marker)) for marker in PROJECT_MARKERS):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _project_roots(directory: str) -> tuple[str, ...]:
    project = _enclosure(directory)
    if project is None or _is_install_location(project):
        return ()
    src = os.path.join(project, "src")
    return (project, src) if os.path.isdir(src) else (project,)


@functools.lru_cache(maxsize=4096)
def _top_package(directory: str) -> str | None:
    """The highest folder holding an `__init__.py` at or above `directory`: within the project or
    the installed distribution (namespace folders between count), or, outside both, in one
    unbroken run of packages."""
    boundary = _enclosure(directory)
    top = None
    current = directory
    while current != boundary or not _is_install_location(current):
        if os.path.isfile(os.path.join(current, "__init__.py")):
            top = current
        elif boundary is None:
            return top
        parent = os.path.dirname(current)
        if current == boundary or parent == current:
            break
        current = parent
    return top


@functools.cache
def _install_locations() -> tuple[str, ...]:
    """This environment's site-packages folders, where installed packages' sources are read from."""
    paths = sysconfig.get_paths()
    candidates = [paths.get("purelib"), paths.get("platlib"), site.getusersitepackages(),
                  *(entry for entry in sys.path if _is_install_location(entry))]
    ordered: list[str] = []
    for candidate in candidates:
        if candidate and os.path.isdir(candidate) and os.path.abspath(candidate) not in ordered:
            ordered.append(os.path.abspath(candidate))
    return tuple(ordered)


@functools.cache
def dynamo_skipped_packages() -> frozenset[str]:
    """Third-party packages TorchDynamo never traces (its `THIRDPARTY_SKIPLIST`), read from the
    installed torch's source without importing torch; empty when torch is not installed."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return frozenset()
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    rules = os.path.join(next(iter(spec.submodule_search_locations)), "_dynamo", "trace_rules.py")
    try:
        with open(rules, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    for statement in tree.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == "THIRDPARTY_SKIPLIST"):
            try:
                return frozenset(ast.literal_eval(statement.value))
            except ValueError:
                return frozenset()
    return frozenset()


# -- compiled extensions ----------------------------------------------------------------------------
# Packages whose compiled code TorchDynamo handles itself (torch's operators; NumPy through
# torch._numpy), and the standard library's (other rules know which of its functions break).
_NOT_EXTENSION_CALLS = frozenset({*_TORCH_PACKAGES, "numpy", "builtins", *sys.stdlib_module_names})
_REEXPORT_DEPTH = 4


def compiled_extension(qualified: str, importer: str) -> str | None:
    """The compiled extension module (a C, C++ or Cython `.so`/`.pyd` file) that defines what the
    dotted name `qualified` names, as imported from the file `importer`, found without importing
    anything: the name is an attribute of such a module (`my_kernels.forward`), or a package
    module re-exports it from one by `from ... import` (`scipy.optimize.linear_sum_assignment`
    comes from `scipy.optimize._lsap`). None for Python code, for what torch, NumPy and the
    standard library define, and for names bound some other way."""
    if qualified.partition(".")[0] in _NOT_EXTENSION_CALLS:
        return None
    directory = os.path.dirname(os.path.abspath(importer))
    # Re-exports are followed in other packages only: reading the importer's own package's modules
    # (transformers' large `__init__` files) costs more than the kernels its Python code names directly.
    own = _top_package(directory)
    follow = own is None or qualified.partition(".")[0] != os.path.basename(own)
    return _defining_extension(qualified, _extension_roots(directory), _REEXPORT_DEPTH if not follow else 0)


@functools.lru_cache(maxsize=1024)
def _extension_roots(directory: str) -> tuple[str, ...]:
    """Where modules imported from `directory` are looked for: its import root, the project's
    roots, and the installed packages."""
    top = _top_package(directory)
    roots = [os.path.dirname(top) if top is not None else directory, *_project_roots(directory),
             *_install_locations()]
    return tuple(dict.fromkeys(roots))


@functools.lru_cache(maxsize=4096)
def _defining_extension(qualified: str, roots: tuple[str, ...], depth: int) -> str | None:
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest prefix that is a module
        found = _module_file(roots, tuple(parts[:cut]))
        if found is None:
            continue
        path, is_extension = found
        if is_extension:
            return path
        if cut != len(parts) - 1 or depth >= _REEXPORT_DEPTH:
            return None
        source = _reexports(path, ".".join(parts[:cut])).get(parts[cut])
        return _defining_extension(source, roots, depth + 1) if source else None
    return None


@functools.lru_cache(maxsize=4096)
def _module_file(roots: tuple[str, ...], parts: tuple[str, ...]) -> tuple[str, bool] | None:
    """The file of module `parts` under the first root that has it, as Python's finder looks:
    a package, then an extension, then a source file; with whether it is an extension."""
    if not all(part.isidentifier() for part in parts):
        return None
    for root in roots:
        base = os.path.join(root, *parts)
        if os.path.isfile(os.path.join(base, "__init__.py")):
            return os.path.join(base, "__init__.py"), False
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if os.path.isfile(base + suffix):
                return base + suffix, True
        if os.path.isfile(base + ".py"):
            return base + ".py", False
    return None


@functools.lru_cache(maxsize=256)
def _reexports(path: str, module: str) -> dict[str, str | None]:
    """The names the module at `path` (module `module`) binds at top level (in `try`/`if` blocks
    too), each with the qualified name it takes it from when its last binding is a
    `from <module> import <name>`, else None."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError, RecursionError):
        return {}
    package = module if os.path.basename(path) == "__init__.py" else module.rpartition(".")[0]
    bound: dict[str, str | None] = {}
    statements = list(tree.body)
    while statements:
        statement = statements.pop(0)
        if isinstance(statement, (ast.Try, ast.If)):
            statements[:0] = [*statement.body, *(s for h in getattr(statement, "handlers", ()) for s in h.body),
                              *statement.orelse]
        elif isinstance(statement, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - statement.level + 1] if statement.level else []
            for alias in statement.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = ".".join(
                        [*base, *([statement.module] if statement.module else []), alias.name])
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[statement.name] = None
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            for target in statement.targets if isinstance(statement, ast.Assign) else [statement.target]:
                if isinstance(target, ast.Name):
                    bound[target.id] = None
    return bound
