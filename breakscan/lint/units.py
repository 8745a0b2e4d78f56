"""What one unit of the lint (a file and the roots it defines) is given and gives back: the
scanned files, the settings, the result. Plain data, light to import: a run answered from the
cache needs these and nothing of the analysis (nor libcst).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from breakscan.lint.dynamo_settings import NO_SETTINGS, DynamoSettings
from breakscan.lint.resolve import Located, ModuleResolver
from breakscan.lint.source import SourceError, disk_signature, read_source
from breakscan.lint.suppress import Suppression
from breakscan.model import FileError, Finding
from breakscan.notebook import is_notebook


@dataclass(frozen=True)
class LintSettings:
    rule_ids: tuple[str, ...]  # the selected rules, in the catalogue's order
    roots: tuple[str, ...] = ()
    # Also report constructs in code no compiled root reaches, as "info".
    unreachable: bool = False
    # TorchDynamo settings the project's config declares (`[tool.breakscan.dynamo]`).
    dynamo: DynamoSettings = NO_SETTINGS
    # Write each finding's suggested refactor, on the unit's own parse of the file (the reports
    # that show them); an editor asks for them only when the user wants a code action.
    fixes: bool = False


@dataclass
class UnitResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    suppressions: dict[str, list[Suppression]] = field(default_factory=dict)
    # Every file this unit's result depends on, with the content it read (for the cache key).
    dependencies: dict[str, bytes] = field(default_factory=dict)
    # Files whose appearing would change what an import resolved to (for the cache key too).
    absent: set[str] = field(default_factory=set)
    declares_targets: bool = False
    # Base class names (last parts) this result asked the scanned files' subclasses of, with the
    # files whose class statements named them then: a file that starts or stops naming one changes
    # what an object of that class may be (checked again on a cache hit).
    derivations: dict[str, list[str]] = field(default_factory=dict)
    # Method names this result asked the scanned classes defining them of (a duck-typed call on
    # an object the lint cannot type), with the files defining a method of that name then.
    implementations: dict[str, list[str]] = field(default_factory=dict)


class FileSet:
    """The scanned files, and how module names map to files: the scanned ones, and the project's
    (and followed packages') other files on disk, found on demand by the resolver."""

    def __init__(self, paths: list[str], resolver: ModuleResolver | None = None):
        self.paths = paths
        self.resolver = resolver or ModuleResolver()
        self.by_module: dict[str, str] = {}
        self._by_real_path: dict[str, str] = {}
        self._deriving: dict[str, list[str]] | None = None
        self._implementing: dict[str, list[str]] | None = None
        for path in paths:
            self.by_module.setdefault(self.resolver.module_name(path)[0], path)
            self._by_real_path.setdefault(os.path.realpath(path), path)

    def locate(self, name: str, importer: str) -> Located | None:
        """Module `name` as the code of `importer` imports it; a scanned file keeps its given path."""
        found = self.resolver.locate(name, importer)
        if found is not None:
            scanned = self._by_real_path.get(os.path.realpath(found.path))
            return Located(scanned, None) if scanned is not None else found
        path = self.by_module.get(name)
        return Located(path) if path is not None else None

    def deriving_from(self, name: str) -> list[str]:
        """The scanned files whose class statements name a base whose last part is `name`, read
        from their text once per run (and kept per file while it is unchanged)."""
        if self._deriving is None:
            self._deriving = {}
            for path in self.paths:
                for base in _declared_names(path)[0]:
                    self._deriving.setdefault(base, []).append(path)
        return self._deriving.get(name, [])

    def implementing(self, method: str) -> list[str]:
        """The scanned files where a class (or a function's inner class) defines a method named
        `method`, read from their text as `deriving_from` reads bases."""
        if self._implementing is None:
            self._implementing = {}
            for path in self.paths:
                for name in _declared_names(path)[1]:
                    self._implementing.setdefault(name, []).append(path)
        return self._implementing.get(method, [])


def _declared_names(path: str) -> tuple[frozenset[str], frozenset[str]]:
    """The base names a file's class statements name, and the names of its indented `def`s."""
    signature = disk_signature(path)
    kept = _declared.get(path)
    if kept is None or signature is None or kept[0] != signature:
        try:
            # Only class and def statements are read: a plain decode, without `read_source`'s
            # checks (a warm run asks this of every file, and the checks took most of its time).
            if is_notebook(path):
                text = read_source(path).text
            else:
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", errors="replace")
            names = derived_names(text), frozenset(_METHOD_DEF.findall(text))
        except (SourceError, OSError):
            names = frozenset(), frozenset()  # the file's own unit reports why
        kept = _declared[path] = (signature, *names)
    return kept[1], kept[2]


# `class Name(Base, other.Base2, metaclass=M):`, its bases possibly over several lines.
_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
_BASE_NAME = re.compile(r"(?<![=\w.])(?:\w+\.)*(\w+)\s*(?=[,\[]|$)")
# `    def name(`, indented: a method (or an inner function).
_METHOD_DEF = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


def derived_names(text: str) -> frozenset[str]:
    """The last parts of the names a file's classes derive from (`Transform` for `class
    Exp(dist.Transform)`), read from the text: which files may define subclasses of a class,
    known without parsing them."""
    return frozenset(match.group(1) for header in _CLASS_HEADER.finditer(text)
                     for match in _BASE_NAME.finditer(header.group(1)))


# path -> (signature, derived_names, indented def names)
_declared: dict[str, tuple[tuple[int, int] | None, frozenset[str], frozenset[str]]] = {}
