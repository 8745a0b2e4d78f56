"""Files in, findings out: read, pre-filter, parse, index, walk the compiled regions, run the rules.

The unit of work is one file and the roots it defines; helpers it calls in other scanned files are
parsed on demand, so units are independent (parallel, cacheable) and findings in a shared helper
are merged afterwards.
"""

from __future__ import annotations

import ast
import functools
import gc
import io
import os
import re
import sys
import threading
import tokenize
import traceback
from collections import Counter, OrderedDict
from collections.abc import Container
from dataclasses import dataclass

import libcst as cst

from breakscan.fixes import with_fix
from breakscan.fixes.source import SourceModule
from breakscan.lint.index import ModuleIndex, build_index
from breakscan.lint.inheritance import ClassOutline, Hierarchy, Lineages, ModuleOutline, outline
from breakscan.lint.parse import parse_module
from breakscan.lint.positions import ModulePositions
from breakscan.lint.regions import Project
from breakscan.lint.resolve import Located
from breakscan.lint.rule import Rule
from breakscan.lint.rules import rules_with_ids
from breakscan.lint.source import Source, SourceError, check_expression_size, disk_signature, read_source, syntax_error
from breakscan.lint.suppress import parse_suppressions
from breakscan.lint.units import FileSet, LintSettings, UnitResult
from breakscan.lint.walker import Handler, RawFinding
from breakscan.model import FileError, Finding, Fix, Frame, LibrarySite, Span

# Files that can define a compiled root; anything else is parsed only when compiled code calls it.
_ROOT_HINT = re.compile(r"\bdef\s+(?:forward|__call__)\b|\bcompile\b|BREAKSCAN_TARGETS")
_ROOT_METHODS = frozenset({"forward", "__call__"})  # a module runs both when it is called
_TARGETS_NAME = "BREAKSCAN_TARGETS"
# Deeply nested code recurses deeply in libcst's Python visitors: give them room in a worker thread.
_STACK_BYTES = 256 * 1024 * 1024
_RECURSION_LIMIT = 60_000


@dataclass
class _Parsed:
    path: str
    text: str
    data: bytes
    tree: cst.Module
    index: ModuleIndex
    signature: tuple[int, int] | None = None  # of the file on disk it was read from (Source.signature)

    @functools.cached_property
    def positions(self) -> ModulePositions:
        return ModulePositions(self.tree, self.text)


class _ParseCache:
    """Parsed files kept for the units that follow in this process (or the editor's next lint): a
    helper module that many files call, such as a package's `functional.py`, is parsed once, not
    once per caller. Trees and indexes are only read after they are built, so units can share them.
    Bounded by source lines (a libcst tree takes about 1.2 kB per line; its parse needs several
    times that while it runs, given back after it, see `parse_module`). When full, it drops the
    file the fewest units have asked for (the least recently used of those): the hubs that whole
    packages call (`functional.py`, `torch/__init__.py`) stay, where plain LRU parsed them again
    and again.

    The cached trees are most of the process's objects, and Python's full garbage collections,
    which visit every object, come about each time a quarter of the heap is new: they cost a third
    of a lint. So what a unit leaves alive is kept out of them (`gc.freeze`) once the unit is done
    and its own garbage collected (`settle`). Nothing cached is in a reference cycle (an index
    links back to itself weakly), so a dropped entry is freed as soon as no unit uses it, without
    a collection of the whole heap.
    """

    def __init__(self, max_lines: int):
        self.max_lines = max_lines
        self._entries: OrderedDict[str, tuple[_Parsed, int]] = OrderedDict()  # least recently used first
        self._requests: Counter[str] = Counter()  # by path, dropped entries' included
        self._lines = 0

    def unchanged(self, path: str, signature: tuple[int, int] | None) -> _Parsed | None:
        """The entry of a file read from disk whose modification time and size are still
        `signature`: a module a unit only looks up is then neither read nor decoded again."""
        entry = self._entries.get(path)
        if signature is None or entry is None or entry[0].signature != signature:
            return None
        self._requests[path] += 1
        self._entries.move_to_end(path)
        return entry[0]

    def get(self, path: str, data: bytes) -> _Parsed | None:
        self._requests[path] += 1
        entry = self._entries.get(path)
        if entry is None or entry[0].data != data:
            return None
        self._entries.move_to_end(path)
        return entry[0]

    def put(self, parsed: _Parsed, held: Container[str] = ()) -> None:
        """Keep `parsed`, dropping the least requested entries beyond `max_lines`, but never one of
        `held`, the files the running unit holds: dropping those would free nothing. A unit that
        reaches many files thus empties the cache of the others rather than holding both."""
        old = self._entries.pop(parsed.path, None)
        if old is not None:
            self._lines -= old[1]
        lines = parsed.text.count("\n") + 1
        self._entries[parsed.path] = (parsed, lines)
        self._lines += lines
        while self._lines > self.max_lines:
            droppable = [path for path in self._entries if path not in held and path != parsed.path]
            if not droppable:
                break
            self._lines -= self._entries.pop(min(droppable, key=self._requests.__getitem__))[1]

    @staticmethod
    def settle() -> None:
        """After a unit: collect its garbage (a walk of what it created, the frozen rest is not
        visited), then freeze what survives, the trees it parsed among them."""
        gc.collect()
        gc.freeze()


# Lines kept per process. A process's peak memory is set less by it than by the largest unit, which
# holds every file it reached (on torch's sources, a test file reaching 34 modules, 63,000 lines,
# while the cache makes room by dropping the others): before the parser's working memory was given
# back, at 15,000 / 25,000 / 40,000 lines one process peaked at 570 / 550 / 539 MB and took
# 119 / 82 / 79 s, the smallest re-parsing the hub modules. Each `--jobs` worker keeps a whole
# cache: splitting it made the workers re-parse the hubs they share.
PARSE_CACHE_LINES = 40_000
_parse_cache = _ParseCache(PARSE_CACHE_LINES)
# Outlines of the modules base classes come from, by path: the file's signature and text when read.
_outlines: dict[str, tuple[tuple[int, int] | None, bytes, ModuleOutline]] = {}


class Unit:
    """Lints one file's compiled regions."""

    def __init__(self, path: str, files: FileSet, settings: LintSettings):
        self.path = path
        self.files = files
        self.settings = settings
        self.parsed: dict[str, _Parsed] = {}
        self._modules: dict[str, ModuleIndex | None] = {}
        # Files of installed packages reached by following calls: path -> package.
        self.libraries: dict[str, str] = {}
        self.result = UnitResult()

    def run(self) -> UnitResult:
        outcome: list[UnitResult] = []
        thread = threading.Thread(target=lambda: outcome.append(self._run_guarded()), daemon=True)
        old_size = threading.stack_size(_STACK_BYTES)
        try:
            thread.start()
        finally:
            threading.stack_size(old_size)
        thread.join()
        _parse_cache.settle()
        return outcome[0]

    def _run_guarded(self) -> UnitResult:
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            self._run()
        except RecursionError:
            self.result = UnitResult(errors=[FileError(self.path, "code nested too deeply to analyse")])
        except SourceError as error:
            self.result = UnitResult(errors=[FileError(self.path, error.message, error.line, error.column)])
        except Exception as error:  # noqa: BLE001 - a bug in the analysis of one file must not stop the others
            if os.environ.get("BREAKSCAN_DEBUG"):
                traceback.print_exc()
            self.result = UnitResult(errors=[FileError(
                self.path, f"internal error while analysing this file ({type(error).__name__}: {error}); please "
                           "report it (BREAKSCAN_DEBUG=1 prints the traceback)")])
        finally:
            sys.setrecursionlimit(old_limit)
        return self.result

    def _run(self) -> None:
        try:
            source = self.read(self.path)
        except SourceError as error:
            self.result.errors.append(FileError(self.path, error.message, error.line, error.column))
            return
        self.result.dependencies[self.path] = source.data
        self.result.suppressions[self.path] = parse_suppressions(source.text)
        if not (_may_define_roots(source.text) or self.settings.roots or self.settings.unreachable
                or self._inherits_forward(_syntax_tree(source.text))):
            return
        own = self._parse(self.path, source.text, source.data, source.signature)
        self.result.declares_targets = own.index.declares_targets
        hierarchy = self._hierarchy(own.index)
        project = Project({own.index.name: own.index}, self._load_module, self.settings.roots, self.settings.dynamo,
                          hierarchy.subclasses, hierarchy.implementers)
        handlers = functools.partial(_handlers, rules_with_ids(self.settings.rule_ids))
        analysis = project.analyze(handlers, only=[own.index])
        raw: dict[str, list[tuple[RawFinding, str]]] = {}
        for key, function_result in analysis.results.items():
            for finding in function_result.findings:
                raw.setdefault(finding.function.module.path, []).append((finding, key))
        if self.settings.unreachable:
            for key, function_result in project.analyze_unreachable(handlers, own.index, analysis).items():
                for finding in function_result.findings:
                    finding.severity = "info"
                    raw.setdefault(finding.function.module.path, []).append((finding, key))
        # Positions for the reported nodes and for the calls along their chains, file by file.
        calls = {key: analysis.calls(key) for items in raw.values() for _, key in items}
        wanted: dict[str, list[tuple[cst.CSTNode, cst.CSTNode]]] = {}
        for path, items in raw.items():
            wanted.setdefault(path, []).extend((node, f.function.top_statement) for f, _ in items
                                               for node in (f.node, f.start, f.end) if node is not None)
        for caller, call in (site for along in calls.values() for site in along):
            wanted.setdefault(caller.module.path, []).append((call, caller.top_statement))
        spans = {path: self.parsed[path].positions.locate(nodes) for path, nodes in wanted.items()}
        sources = functools.cache(self._source)
        for path, items in raw.items():
            for finding, key in items:
                rule = finding.rule
                sites = tuple(Frame(caller.module.path, spans[caller.module.path][id(call)].line, caller.qualname)
                              for caller, call in calls[key])
                span = spans[path][id(finding.node)]
                first = spans[path][id(finding.start)] if finding.start is not None else None
                last = spans[path][id(finding.end)] if finding.end is not None else span
                if first is None or first.line >= span.line:  # on one line, the construct's own column
                    first = span
                span = Span(first.line, first.column, last.end_line, last.end_column)
                found = Finding(rule=rule.id, name=rule.name, path=path, span=span,
                                message=finding.message, gb_ids=rule.gb_ids, severity=finding.severity,
                                chain=analysis.chain(key), fix=finding.fix or Fix(rule.fix_hint), call_sites=sites,
                                library=self._library_site(path, sites), kinds=finding.kinds)
                self.result.findings.append(with_fix(found, sources) if self.settings.fixes else found)

    def _inherits_forward(self, tree: ast.Module) -> bool:
        """Whether a class of the file is an nn.Module whose `forward` comes from a scanned base
        class of another module."""
        name, package = self.files.resolver.module_name(self.path)
        own = outline(tree, name, package)
        if not any(c.bases for c in own.classes.values()):
            return False
        lineages = Lineages(lambda module: own if module == name else self._outline(module))
        return any(lineages.runs_forward(f"{name}.{cls}") for cls in own.classes)

    def _hierarchy(self, own: ModuleIndex) -> Hierarchy:
        """Subclasses among the scanned files: the unit's own classes from its index, the others
        from outlines of the files whose class statements name the base."""
        mine = ModuleOutline(own.imports, {name: ClassOutline(info.bases, frozenset(info.methods))
                                           for name, info in own.classes.items()})

        def candidates(name: str) -> list[str]:
            paths = self.result.derivations[name] = self.files.deriving_from(name)
            return [self.files.resolver.module_name(path)[0] for path in paths]

        def implementing(method: str) -> list[str]:
            paths = self.result.implementations[method] = self.files.implementing(method)
            return [self.files.resolver.module_name(path)[0] for path in paths]

        return Hierarchy(candidates, lambda module: mine if module == own.name else self._outline(module),
                         implementing, self.files.by_module.__contains__)

    def _outline(self, name: str) -> ModuleOutline | None:
        """The outline of module `name`, read with `ast` (and kept while the file is unchanged)."""
        if name.partition(".")[0] in sys.stdlib_module_names:  # `enum.Enum`, `abc.ABC`: never scanned
            return None
        located = self._locate(name)
        if located is None or located.path == self.path:
            return None
        signature = self.disk_signature(located.path)
        kept = _outlines.get(located.path)
        if kept is None or signature is None or kept[0] != signature:
            try:
                source = self.read(located.path)
                tree = ast.parse(source.text)
            except (SourceError, SyntaxError, RecursionError, MemoryError, ValueError):
                return None
            package = self.files.resolver.module_name(located.path)[1]
            kept = _outlines[located.path] = (signature, source.data, outline(tree, name, package))
        self.result.dependencies[located.path] = kept[1]
        return kept[2]

    def _source(self, path: str) -> SourceModule | None:
        """A file this unit parsed, for the fix suggesters: its tree and positions, shared."""
        parsed = self.parsed.get(path)
        return SourceModule(path, parsed.text, parsed.tree, parsed.positions) if parsed is not None else None

    def _library_site(self, path: str, sites: tuple[Frame, ...]) -> LibrarySite | None:
        package = self.libraries.get(path)
        if package is None:
            return None
        into_library = [site for site in sites if site.path not in self.libraries]
        return LibrarySite(package, into_library[-1] if into_library else None)

    def read(self, path: str) -> Source:
        """A file's source; `breakscan.lint.buffer` overrides it with an editor's unsaved text."""
        return read_source(path)

    def _parse(self, path: str, text: str, data: bytes, signature: tuple[int, int] | None = None) -> _Parsed:
        parsed = _parse_cache.get(path, data)
        if parsed is not None and parsed.signature != signature:
            parsed.signature = signature  # the same text, read again (after a touch)
        if parsed is None:
            check_expression_size(text)
            try:
                tree = parse_module(text)
            except cst.ParserSyntaxError as error:
                raise syntax_error(text, error.message, error.raw_line, error.raw_column + 1) from None
            name, package = self.files.resolver.module_name(path)
            parsed = _Parsed(path, text, data, tree, build_index(tree, name, path, package, text), signature)
            _parse_cache.put(parsed, held=self.parsed)
        self.parsed[path] = parsed
        return parsed

    def _load_module(self, name: str) -> ModuleIndex | None:
        """The index of module `name`, looked up once per unit: the walker asks for the same
        names again and again (for every call it resolves)."""
        if name not in self._modules:
            self._modules[name] = self._find_module(name)
        return self._modules[name]

    def _locate(self, name: str) -> Located | None:
        located = self.files.locate(name, self.path)
        if located is None:
            # Paths that exist were looked at and passed over (the unit's own file, say): only a
            # path that is missing now can "appear" and change what the import finds.
            self.result.absent.update(p for p in self.files.resolver.probed(name, self.path) if not os.path.exists(p))
        return located

    def _find_module(self, name: str) -> ModuleIndex | None:
        located = self._locate(name)
        if located is None:
            return None
        path = located.path
        if path == self.path:
            return None
        if path in self.parsed:
            return self.parsed[path].index
        parsed = _parse_cache.unchanged(path, self.disk_signature(path))
        if parsed is not None:
            self.parsed[path] = parsed
        else:
            try:
                source = self.read(path)
                parsed = self._parse(path, source.text, source.data, source.signature)
            except SourceError:
                return None  # that file's own unit reports why (or, outside the scan, it is unknown)
        if located.library is not None:
            self.libraries[path] = located.library
        self.result.dependencies[path] = parsed.data
        self.result.suppressions[path] = parse_suppressions(parsed.text)
        return parsed.index

    def disk_signature(self, path: str) -> tuple[int, int] | None:
        """The file's modification time and size, when what this unit reads for it is the file on
        disk (`breakscan.lint.buffer` reads an editor's unsaved text instead: None)."""
        return disk_signature(path)


def _may_define_roots(text: str) -> bool:
    """Whether the file's code (not only its strings and comments) has `def forward`, `def
    __call__`, a name `compile`, or names BREAKSCAN_TARGETS (which the index finds in the text). Docstrings and test
    tables name torch.compile often, and a libcst parse is costly: torch's 28,000-line table of
    test cases takes 6 s and 800 MB. Python's tokenizer reads up to the first such name; text it
    cannot tokenize is parsed, for its error."""
    if _TARGETS_NAME in text:
        return True
    if not _ROOT_HINT.search(text):
        return False
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and (token.string == "compile" or token.string in _ROOT_METHODS
                                                and previous == "def"):
                return True
            previous = token.string
    except (tokenize.TokenError, SyntaxError):
        return True
    return False


def _syntax_tree(text: str) -> ast.Module:
    """The `ast` of a file that may hold no compiled code: its syntax errors are still reported,
    cheaply."""
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise SourceError(f"syntax error: {error.msg}", error.lineno, error.offset) from None
    except (MemoryError, ValueError) as error:
        raise SourceError(f"cannot parse: {error}") from None


def _handlers(rules: tuple[type[Rule], ...]) -> dict[type, list[Handler]]:
    """Fresh rule instances' handlers by node type (every walk of a function gets its own)."""
    instances = [rule_class() for rule_class in rules]
    return {node_type: [getattr(instances[number], method) for number, method in handlers]
            for node_type, handlers in _handler_layout(rules).items()}


@functools.cache
def _handler_layout(rules: tuple[type[Rule], ...]) -> dict[type, list[tuple[int, str]]]:
    """Which rule (by position) handles which node type with which method."""
    layout: dict[type, list[tuple[int, str]]] = {}
    for number, rule_class in enumerate(rules):
        for name in rule_class.handler_names():
            layout.setdefault(getattr(cst, name[3:]), []).append((number, name))
    return layout


def lint_unit(path: str, files: FileSet, settings: LintSettings) -> UnitResult:
    return Unit(path, files, settings).run()
