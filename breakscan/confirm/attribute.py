"""From Dynamo's raw stacks to the user's line: which files are the user's, the innermost user
frame of a stack, real function names for `torch_dynamo_resume_in_<fn>_at_<line>` frames, and
merging break occurrences into sites with a count.

We do the attribution ourselves: Dynamo's own resume-frame collapsing merges unrelated
consecutive frames that share a function name.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import sysconfig
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache

from breakscan.confirm.capture import BreakEvent, CompileEvent, GraphEvent, parse_message
from breakscan.confirm.registry import Registry
from breakscan.model import Break, Frame, GraphInfo, LibraryFrame

_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<name>.+)_at_\d+$")


def real_function_name(name: str) -> str:
    """`torch_dynamo_resume_in_forward_at_12` -> `forward` (resume functions are flat, but a
    resume of a resume is handled too)."""
    while match := _RESUME.match(name):
        name = match["name"]
    return name


def _package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.realpath(locations[0]) if locations else None


class UserFiles:
    """The user's files: under one of `roots`, and not the standard library, an installed
    package, torch or breakscan (a virtualenv often lives inside the project folder)."""

    def __init__(self, roots: Iterable[str]):
        self.roots = _prefixes(roots)
        paths = sysconfig.get_paths()
        self.libraries = _prefixes([_package_dir("torch"), _package_dir("breakscan")])
        self.excluded = self.libraries + _prefixes(
            paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")
        )
        self._known: dict[str, bool] = {}

    def __contains__(self, path: str) -> bool:
        if path not in self._known:
            real = os.path.realpath(path)
            installed = "/site-packages/" in real or "/dist-packages/" in real
            pseudo = path.startswith("<")  # <string>, <frozen ...>, <eval_with_key>: no file
            self._known[path] = not (pseudo or installed) and real.startswith(self.roots) and (
                not real.startswith(self.excluded)
            )
        return self._known[path]

    def is_library(self, path: str) -> bool:
        """torch or breakscan itself: never where a break is attributed."""
        return os.path.realpath(path).startswith(self.libraries)


_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_root(path: str) -> str:
    """Where the user's files are for code in `path`: the nearest folder above it that holds a
    project marker (pyproject.toml, setup.py, setup.cfg, .git), else the file's own folder."""
    folder = os.path.dirname(os.path.abspath(path))
    current = folder
    while not any(os.path.exists(os.path.join(current, m)) for m in _PROJECT_MARKERS):
        parent = os.path.dirname(current)
        if parent == current:
            return folder
        current = parent
    return current


def _prefixes(paths: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths if p)


@lru_cache(maxsize=256)
def _definitions(path: str) -> tuple[tuple[int, int, str, str], ...]:
    """(first line, last line, name, qualified name) of every def in the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return ()
    found: list[tuple[int, int, str, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    # co_firstlineno of a decorated function is its first decorator's line
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    found.append((start, child.end_lineno or child.lineno, child.name, qualname))
                    visit(child, qualname + ".<locals>.")
                else:
                    visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return tuple(found)


def qualified_name(path: str, line: int, name: str) -> str:
    """`M.forward` for a frame of `forward` at a line inside class M's method; else `name`."""
    enclosing = [d for d in _definitions(path) if d[0] <= line <= d[1] and d[2] == name]
    return max(enclosing, key=lambda d: d[0])[3] if enclosing else name


def user_frame(frames: Sequence[Frame], user: UserFiles) -> int | None:
    """Index of the innermost frame in the user's files."""
    return next((i for i in range(len(frames) - 1, -1, -1) if frames[i].path in user), None)


def _site_index(frames: Sequence[Frame], user: UserFiles) -> int:
    """The innermost user frame; for code with none (a library compiled on its own), the
    innermost frame outside torch, else the innermost frame."""
    found = user_frame(frames, user)
    if found is None:
        found = next((i for i in range(len(frames) - 1, -1, -1)
                      if not user.is_library(frames[i].path)), len(frames) - 1)
    return found


def _without_resumed_callers(frames: Sequence[Frame]) -> list[Frame]:
    """Drop each frame that only runs its own resume function (`f` calling
    `torch_dynamo_resume_in_f_at_N` in the same file): one frame of the user's code."""
    kept = []
    for frame, after in zip(frames, [*frames[1:], None]):
        resumed = after is not None and after.path == frame.path and after.function != frame.function \
            and real_function_name(after.function) == frame.function
        if not resumed:
            kept.append(frame)
    return kept


def _full_stack(event: BreakEvent, user: UserFiles) -> list[Frame]:
    """Dynamo's stack; when none of it is the user's (a library frame Dynamo compiled on its own
    while the user's code ran the library eagerly), the live frames that called into it first."""
    if user_frame(event.stack, user) is not None:
        return list(event.stack)
    return _without_resumed_callers([*event.outer, *event.stack])


_INSTALLED = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<top>[^/\\]+)")


def installed_package(path: str) -> str | None:
    """The top-level package of a file in an install location (`.../site-packages/vqlib/a.py`:
    vqlib; a single-module distribution: its module name), else None."""
    found = list(_INSTALLED.finditer(os.path.realpath(path)))
    return os.path.splitext(found[-1]["top"])[0] if found else None


def _user_stack(frames: Sequence[Frame], user: UserFiles
                ) -> tuple[tuple[Frame, ...], Frame, LibraryFrame | None]:
    """The stack to show, outermost first, the site, and the library frame it broke in: user
    frames down to the site, then what the site called (e.g. `copy.deepcopy`, an installed
    library), whose innermost installed-package frame is where TorchDynamo broke in a library;
    torch's and breakscan's own frames are left out."""
    named = [replace(f, function=real_function_name(f.function)) for f in frames]
    named = [replace(f, function=qualified_name(f.path, f.line, f.function))
             if f.path in user or installed_package(f.path) else f for f in named]
    site = _site_index(named, user)
    head = [f for f in named[:site] if f.path in user]
    tail = [f for f in named[site + 1:] if not user.is_library(f.path)]
    inside = next(((f, package) for f in reversed(tail) if (package := installed_package(f.path))), None)
    library = LibraryFrame(inside[1], inside[0].path, inside[0].line, inside[0].function) if inside else None
    return tuple([*head, named[site], *tail]), named[site], library


def _first_occurrence(event: BreakEvent, user: UserFiles, registry: Registry | None) -> Break:
    stack, site, library = _user_stack(_full_stack(event, user), user)
    parts = parse_message(event.message)
    gb_id = None
    if registry:
        # A break raised while handling another ("graph break in loop" skipping the frame) is that
        # one's consequence, recorded as `frame_skipped`: the id to act on is the first cause's.
        cause = registry.id_for_type(parts.causes[0]) if parts.causes else None
        gb_id = cause or registry.identify(event.gb_type, parts.own_text)
    entry = registry.by_id.get(gb_id) if registry and gb_id else None
    reason = parts.title + (f" ({parts.context})" if parts.context else "")
    reason += "".join(f"; caused by: {cause}" for cause in parts.causes)
    return Break(
        path=site.path, line=site.line, gb_id=gb_id,
        gb_type=event.gb_type or (entry.gb_type if entry else None),
        reason=reason,
        hints=parts.hints or (entry.hints if entry else ()),
        stack=stack,
        explanation=parts.explanation or (entry.explanation if entry else None),
        frame_skipped=event.skips_frame,
        library=library,
    )


def merge_breaks(events: Iterable[BreakEvent], user: UserFiles, registry: Registry | None,
                 graphs: Sequence[GraphEvent] = ()) -> list[Break]:
    """One `Break` per (path, line, break kind), counting occurrences, in first-seen order; the
    longest stack seen is kept (a helper's break is seen inlined in its caller, then again when
    the helper is compiled as a frame of its own).

    `graphs_before`, from the order of compiles: a compile's graph runs before its break, so
    the graphs (with operations) of every compile up to the break's own ran before it. A break
    first seen while inlining a helper really happens in the next compile, the helper's own
    frame, after that frame's first graph: when the helper's compile sees it again, it counts."""
    ran = [g.compile for g in graphs if g.ops]
    sites: dict[tuple[str, int, str, tuple[str, int] | None], Break] = {}
    first_seen: dict[tuple[str, int, str, tuple[str, int] | None], BreakEvent] = {}
    for event in events:
        if not event.stack:
            continue
        brk = _first_occurrence(event, user, registry)
        inside = (brk.library.path, brk.library.line) if brk.library else None
        key = (brk.path, brk.line, brk.gb_id or brk.gb_type or brk.reason, inside)
        before = sum(1 for number in ran if number <= event.compile)
        found, first = sites.get(key), first_seen.get(key)
        if found is None or first is None:
            sites[key], first_seen[key] = replace(brk, graphs_before=before), event
            continue
        own_frame = found.count == 1 and event.compile == first.compile + 1 and len(event.stack) < len(first.stack)
        sites[key] = replace(
            found,
            count=found.count + 1,
            frame_skipped=found.frame_skipped or brk.frame_skipped,
            stack=brk.stack if len(brk.stack) > len(found.stack) else found.stack,
            graphs_before=before if own_frame else found.graphs_before,
        )
    return list(sites.values())


def graph_infos(events: Iterable[GraphEvent], user: UserFiles,
                compiles: Sequence[CompileEvent] = ()) -> list[GraphInfo]:
    """Ops per graph and the user lines they came from (in the file most of them came from), with
    the time of the frame compile that produced it; graphs without operations are left out."""
    seconds = {event.number: event.seconds for event in compiles}
    # A compile of a function compiled before (in this run) is a recompilation.
    compiled_before, recompiled = set(), set()
    for event in compiles:
        if event.code in compiled_before:
            recompiled.add(event.number)
        compiled_before.add(event.code)
    infos: list[GraphInfo] = []
    for event in events:
        if not event.ops:  # an empty graph runs nothing: left out, and not counted
            continue
        origins = []
        for frames in event.op_stacks:
            found = user_frame(frames, user)
            if found is not None:
                origins.append((frames[found].path, frames[found].line))
        path = Counter(p for p, _ in origins).most_common(1)[0][0] if origins else None
        lines = tuple(sorted({line for p, line in origins if p == path}))
        infos.append(GraphInfo(index=len(infos), op_count=len(event.ops), ops=event.ops, lines=lines, path=path,
                               compile_time=round(seconds.get(event.compile, 0.0), 4),
                               recompiled=event.compile in recompiled))
    return infos
