"""The lint as a whole: files -> units (in parallel, through the cache) -> merged, filtered findings."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from breakscan.config import Config
from breakscan.files import collect
from breakscan.lint.resolve import FollowPolicy, ModuleResolver
from breakscan.lint.rules import matches, select_rules
from breakscan.lint.suppress import Suppression, is_suppressed, unused
from breakscan.lint.units import FileSet, LintSettings, UnitResult
from breakscan.model import FileError, Finding

# A progress display's hook: (the file just linted, files done, files in all).
FileDone = Callable[[str, int, int], None]
# Below this many files a worker pool costs more than it saves.
_MIN_FILES_PER_WORKER = 8
# Batches handed to each worker: enough that the last ones are small next to the whole.
_BATCHES_PER_WORKER = 32


@dataclass
class LintOutcome:
    files: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unused_suppressions: list[FileError] = field(default_factory=list)
    declaring_targets: list[str] = field(default_factory=list)
    rule_ids: tuple[str, ...] = ()


def lint_paths(paths: list[str], config: Config, *, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
               jobs: int | None = None, cache=None, unreachable: bool = False, follow: bool = False,
               on_file: FileDone | None = None, fixes: bool = False) -> LintOutcome:
    """`on_file(path, done, total)` hears of each file as it is linted (a progress display);
    `fixes`: each finding comes with its suggested refactor."""
    collected = collect(paths, config.exclude)
    settings = lint_settings(config, select, ignore, unreachable, fixes)
    outcome = LintOutcome(files=collected.files, errors=list(collected.errors), missing=collected.missing,
                          rule_ids=settings.rule_ids)
    files = FileSet(collected.files, module_resolver(config, follow))
    units = _run_units(files, settings, jobs, cache, on_file)
    merge_units(outcome, units, config)
    return outcome


def module_resolver(config: Config, follow: bool = False) -> ModuleResolver:
    """Imports resolve in the project on disk, in config's `src` roots, and in the installed
    packages followed (all of them with `follow`, else those config names)."""
    return ModuleResolver(config.src_roots, FollowPolicy(everything=follow, packages=config.follow))


def lint_settings(config: Config, select: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                  unreachable: bool = False, fixes: bool = False) -> LintSettings:
    """Command-line choices over the config's."""
    return LintSettings(rule_ids=select_rules(select or config.select, ignore + config.ignore), roots=config.roots,
                        unreachable=unreachable or config.unreachable,
                        dynamo=config.dynamo, fixes=fixes)


def _run_units(files: FileSet, settings: LintSettings, jobs: int | None, cache,
               on_file: FileDone | None = None) -> list[tuple[str, UnitResult]]:
    results: dict[str, UnitResult] = {}
    todo = []
    for path in files.paths:
        cached = cache.get(path, settings, files) if cache is not None else None
        if cached is not None:
            results[path] = cached
        else:
            todo.append(path)
    done_count = itertools.count(len(results) + 1)

    def computed(path: str, result: UnitResult) -> None:
        results[path] = result
        if cache is not None:
            cache.put(path, settings, files, result)
        if on_file is not None:
            on_file(path, next(done_count), len(files.paths))

    workers = min(jobs or os.cpu_count() or 1, max(1, len(todo) // _MIN_FILES_PER_WORKER))
    if workers > 1:
        batches = _batches(todo, workers * _BATCHES_PER_WORKER)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            done = pool.map(_lint_batch, batches, itertools.repeat(files), itertools.repeat(settings))
            for batch, batch_results in zip(batches, done):  # each batch as it completes, in order
                for path, result in zip(batch, batch_results):
                    computed(path, result)
    else:
        for path in todo:
            computed(path, _lint_batch([path], files, settings)[0])
    return [(path, results[path]) for path in files.paths]


def _batches(paths: list[str], count: int) -> list[list[str]]:
    """`paths` in about `count` runs of neighbouring files, which call the same helpers (a worker
    parses those once), the largest runs first: a big file handed out last would keep one worker
    busy long after the others have finished."""
    size = max(1, len(paths) // count)
    batches = [paths[start:start + size] for start in range(0, len(paths), size)]
    return sorted(batches, key=lambda batch: sum(map(_file_size, batch)), reverse=True)


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # its unit reports why it cannot be read


def _lint_batch(paths: list[str], files: FileSet, settings: LintSettings) -> list[UnitResult]:
    # The analysis (and libcst) is imported only when some file is not answered from the cache.
    from breakscan.lint.engine import lint_unit

    return [lint_unit(path, files, settings) for path in paths]


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _preference(finding: Finding) -> tuple[int, bool, int, str]:
    # A break over a recompilation: where the graph breaks, the guard it would install is moot.
    return _SEVERITY_ORDER[finding.severity], not finding.gb_ids, len(finding.chain), finding.rule


def merge_units(outcome: LintOutcome, units: list[tuple[str, UnitResult]], config: Config) -> None:
    suppressions: dict[str, list[Suppression]] = {}
    found_by_unit: list[Finding] = []
    for path, unit in units:
        outcome.errors.extend(unit.errors)
        if unit.declares_targets:
            outcome.declaring_targets.append(path)
        for file, found in unit.suppressions.items():
            suppressions.setdefault(file, found)
        found_by_unit.extend(unit.findings)
    # One finding per construct: the same node reached from several roots, or matched by several
    # rules, is reported once, as its most certain finding (an error over a warning, a break over
    # a recompilation), then by the shortest way in from a compiled root.
    best: dict[tuple, Finding] = {}
    for finding in found_by_unit:
        if matches(finding.rule, config.ignored_for(finding.path)):
            continue
        if is_suppressed(suppressions.get(finding.path, []), finding.rule, finding.span.line, finding.span.end_line):
            continue
        key = (finding.path, finding.span)
        if key not in best or _preference(finding) < _preference(best[key]):
            best[key] = finding
    outcome.findings.extend(sorted(best.values(), key=lambda f: (f.path, f.span, f.rule)))
    selected = set(outcome.rule_ids)
    for file, found in suppressions.items():
        for suppression in unused(found, selected):
            what = f"[{', '.join(suppression.codes)}]" if suppression.codes else ""
            outcome.unused_suppressions.append(
                FileError(file, f"unused suppression `breakscan: ignore{what}`", suppression.line, None))
