"""One model, one way, in a process of its own: `bench/ecosystem.py truth` starts it in the ecosystem venv.

    python bench/ecosystem_worker.py LIBRARY PACKAGE MODEL eager|dynamo RESULT.json
    python bench/ecosystem_worker.py --list LIBRARY       # the library's model names, as JSON

- eager:  runs the model once with a line tracer restricted to the library's package folder and
          writes the (file, line)s that ran. The call runs inside torch's own
          `torch.compiler._compile_session_context()`, the context `torch.compile` itself holds while
          compiling: it sets the flag that `torch.compiler.is_compiling()` returns, which
          `torch._dynamo.is_compiling`, `torch._dynamo.external_utils.is_compiling` and
          `torch._utils.is_compiling` all read too, as do the libraries' wrappers (transformers'
          `is_torchdynamo_compiling`, kornia's and torch-geometric's `is_compiling`, diffusers'
          `lru_cache_unless_export`). `torch.compiler.is_dynamo_compiling()` is a constant `False`
          that Dynamo folds to True: its code is swapped for the call, so a reference imported by
          name sees it too. Only the call is flagged, not the import or the model's construction,
          which run eagerly under torch.compile too; and each run is a fresh process, so no cache a
          library keeps (lru_cache, a cached rotary table) carries over from another run.
- dynamo: runs it under `torch.compile(backend="eager")` with breakscan's capture and writes every
          break occurrence of the first call, merged into sites at the innermost frame in the
          library's folder; then calls it twice more with the same inputs and writes every
          recompilation of the three calls (a helper compiled as a frame of its own recompiles
          within one call when given other shapes), at the library line whose value the failed
          guard read (breakscan's own merge), with the guard. A later call that fails (a stateful optimizer's next step)
          leaves the first call's breaks standing: its error is kept as "repeat_error".

The result is JSON: {"status": "ok"} with "lines" or "breaks", or {"status": "failed", "error": ...}.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # ecosystem_models, beside this file

from ecosystem_models import MODELS  # noqa: E402

from breakscan.confirm.attribute import UserFiles, merge_breaks  # noqa: E402
from breakscan.confirm.capture import capturing, without_guard_profiling  # noqa: E402
from breakscan.confirm.recompiles import merge_recompiles  # noqa: E402
from breakscan.confirm.registry import load_registry  # noqa: E402

# Where the models run: the CPU, as `truth` stores them; a GPU machine's check sets ECOSYSTEM_DEVICE=cuda.
DEVICE = torch.device(os.environ.get("ECOSYSTEM_DEVICE", "cpu"))
CALLS = 3  # calls of the compiled model: breaks are the first call's, recompiles those of all three

# Where a path in a break's reason is installed (the venv's folder): left out of the stored data.
INSTALLED = re.compile(r"[^\s(]*/site-packages/")


def package_dir(package: str) -> str:
    module = __import__(package)
    return os.path.realpath(list(module.__path__)[0])  # a namespace package (no __init__.py) has no __file__


class LibraryFiles(UserFiles):
    """The library's own files stand for "the user's": breakscan's attribution then places each
    break at the innermost frame inside the library (its own UserFiles excludes site-packages)."""

    def __init__(self, root: str):
        super().__init__([root])
        self.prefix = os.path.join(root, "")

    def __contains__(self, path: str) -> bool:
        if path not in self._known:
            self._known[path] = os.path.realpath(path).startswith(self.prefix)
        return self._known[path]


@contextmanager
def compiling_path() -> Iterator[None]:
    """Make the eager run take the branches torch.compile takes (see the module docstring)."""
    dynamo_compiling = torch.compiler.is_dynamo_compiling
    original_code = dynamo_compiling.__code__
    dynamo_compiling.__code__ = (lambda: True).__code__
    try:
        with torch.compiler._compile_session_context():
            checks = (torch.compiler.is_compiling, torch._dynamo.is_compiling, torch._utils.is_compiling,
                      torch._dynamo.external_utils.is_compiling, torch.compiler.is_dynamo_compiling)
            with warnings.catch_warnings():  # torch._utils.is_compiling is deprecated, and says so
                warnings.simplefilter("ignore")
                if not all(check() for check in checks):
                    raise RuntimeError("torch's is_compiling functions do not all see the compiling flag")
            yield
    finally:
        dynamo_compiling.__code__ = original_code


@contextmanager
def tracing_lines(root: str, into: dict[str, set[int]], positions: dict[str, set[tuple[int, int]]]) -> Iterator[None]:
    """Record every line that runs in a file under `root` (other frames are not traced at all), and every
    position (line, column) where an instruction that ran starts: the right operand of an `and` that
    short-circuited never shows there, though its line ran."""
    prefix = os.path.join(root, "")
    inside: dict[object, str | None] = {}
    starts: dict[object, list[tuple[int, int] | None]] = {}

    def local(frame, event, arg):
        if event == "line":
            into.setdefault(inside[frame.f_code], set()).add(frame.f_lineno)
        elif event == "opcode":
            start = starts[frame.f_code][frame.f_lasti // 2]
            if start is not None:
                positions.setdefault(inside[frame.f_code], set()).add(start)
        return local

    def on_call(frame, event, arg):
        code = frame.f_code
        if code not in inside:
            real = os.path.realpath(code.co_filename)
            inside[code] = os.path.relpath(real, root) if real.startswith(prefix) else None
            if inside[code] is not None:
                starts[code] = [(line, column) if line is not None and column is not None else None
                                for line, _, column, _ in code.co_positions()]
        if inside[code] is None:
            return None
        frame.f_trace_opcodes = True
        return local

    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(None)


def ranges(lines: set[int]) -> str:
    """{1, 2, 3, 7} -> "1-3,7"."""
    parts, ordered = [], sorted(lines)
    start = previous = ordered[0]
    for line in [*ordered[1:], None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if line is not None:
            start = previous = line
    return ",".join(parts)


def build(library: str, name: str):
    spec = next(s for s in MODELS[library] if s.name == name)
    torch.manual_seed(0)
    target, args, kwargs = spec.build()
    if isinstance(target, torch.nn.Module):
        target.train(spec.train).to(DEVICE)
    args, kwargs = torch.utils._pytree.tree_map_only(torch.Tensor, lambda t: t.to(DEVICE), (args, kwargs))
    return spec, target, args, kwargs


def run_eager(library: str, name: str, root: str) -> dict:
    spec, target, args, kwargs = build(library, name)
    lines: dict[str, set[int]] = {}
    positions: dict[str, set[tuple[int, int]]] = {}
    with torch.set_grad_enabled(spec.train), compiling_path(), tracing_lines(root, lines, positions):
        target(*args, **kwargs)
    return {"lines": {path: ranges(found) for path, found in sorted(lines.items())},
            "positions": {path: columns(found) for path, found in sorted(positions.items())}}


def columns(positions: set[tuple[int, int]]) -> str:
    """{(3, 4), (3, 8), (5, 0)} -> "3:4.8;5:0": the columns (0-based, UTF-8) where instructions that ran start."""
    by_line: dict[int, set[int]] = {}
    for line, column in positions:
        by_line.setdefault(line, set()).add(column)
    return ";".join(f"{line}:{'.'.join(map(str, sorted(cols)))}" for line, cols in sorted(by_line.items()))


def run_dynamo(library: str, name: str, root: str) -> dict:
    spec, target, args, kwargs = build(library, name)
    torch._dynamo.reset()
    repeat_error = None
    with torch.set_grad_enabled(spec.train), without_guard_profiling(), capturing() as capture:
        compiled = torch.compile(target, backend="eager")
        compiled(*args, **kwargs)
        first_call = len(capture.breaks)
        try:
            for _ in range(CALLS - 1):  # the same inputs again, as a loop over batches would: what recompiles
                compiled(*args, **kwargs)
        except Exception as exc:  # the first call's breaks stand; what recompiled before the failure is kept
            repeat_error = describe(exc)
    library_files = LibraryFiles(root)
    recompiles = [
        {"path": os.path.relpath(os.path.realpath(r.path), root) if r.path in library_files else r.path,
         "line": r.line, "guard": INSTALLED.sub("", r.guard), "count": r.count, "in_library": r.path in library_files}
        for r in merge_recompiles(capture.recompiles, capture.compiles, library_files)]
    breaks = []
    for brk in merge_breaks(capture.breaks[:first_call], library_files, load_registry()):
        inside = brk.path in library_files
        breaks.append({
            "path": os.path.relpath(os.path.realpath(brk.path), root) if inside else brk.path,
            "line": brk.line,
            "gb_id": brk.gb_id,
            "reason": INSTALLED.sub("", next(iter(brk.reason.splitlines()), "")),
            "count": brk.count,
            "frame_skipped": brk.frame_skipped,
            "in_library": inside,
        })
    return {"breaks": breaks, "graphs": len(capture.graphs), "recompiles": recompiles,
            **({"repeat_error": repeat_error} if repeat_error else {})}


def describe(exc: Exception) -> str:
    """`ValueError: first line of the message at file.py:12` (the innermost frame)."""
    last = traceback.extract_tb(exc.__traceback__)[-1]
    message = next(iter(str(exc).splitlines()), "")
    return f"{type(exc).__name__}: {message} at {os.path.basename(last.filename)}:{last.lineno}"


def main() -> None:
    if sys.argv[1] == "--list":
        print(json.dumps([spec.name for spec in MODELS[sys.argv[2]]]))
        return
    library, package, name, mode, result_path = sys.argv[1:6]
    started = time.perf_counter()
    try:
        root = package_dir(package)
        result = {"status": "ok", **(run_eager if mode == "eager" else run_dynamo)(library, name, root)}
    except Exception as exc:  # the model's failure is the result, not the worker's
        result = {"status": "failed", "error": describe(exc)}
    finally:
        torch._dynamo.reset()
    result["seconds"] = round(time.perf_counter() - started, 2)
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
