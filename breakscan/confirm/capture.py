"""Every graph break and every graph that TorchDynamo produces, taken from its private hooks.

This is the only module that touches TorchDynamo internals (checked against torch 2.13 by
tests/confirm/test_capture.py). `torch._dynamo.explain` is not enough: it de-duplicates breaks,
lists only those that ended a graph, and misses breaks that skip a whole frame. Instead:

- `InstructionTranslatorBase.log_graph_break(code_options, reason, exc)` sees every handled
  break occurrence, with the exception (`gb_type`, `real_stack`, full message);
- `ConvertFrameAssert.__call__` sees each frame Dynamo compiles, and the soft failures that
  make it skip a frame without passing through `log_graph_break` (`exc.logged` is False);
- `OutputGraph.call_user_compiler(gm, example_inputs)` sees each graph, whatever the backend;
- `convert_frame.get_and_maybe_log_recompilation_reasons` sees each recompilation with the
  guards that failed (Dynamo's own text, with the user line the guarded value came from).

The worker also turns off a costly compile-time metric (`without_guard_profiling`).

Everything is recorded raw (Dynamo's stacks and messages); `attribute.py` makes sense of it.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field

from breakscan.model import Frame

SUPPORTED_TORCH = "2.13"

_STACK_LINE = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')
# Reasons Dynamo gives when the rest of the frame will run eagerly.
_SKIPPED_PREFIXES = ("Failed to handle graph break gracefully",
                     "Encountered graph break that we cannot resume from")


@dataclass(frozen=True)
class Region:
    """The top compiled function a compile belongs to: the outermost frame Dynamo compiled that
    is still on the Python stack (resume functions and helpers compiled as their own frames
    belong to the function whose execution reached them)."""

    path: str
    line: int
    function: str


@dataclass(frozen=True)
class BreakEvent:
    gb_type: str | None
    message: str  # the exception's text: type line, Explanation, Hints, registry link
    stack: tuple[Frame, ...]  # Dynamo's user stack from the compiled frame, outermost first
    skips_frame: bool  # the whole frame falls back to eager
    region: Region
    # The live Python stack above the compiled frame, outermost first: who called into a
    # library frame that Dynamo compiled on its own while the user's code ran it eagerly.
    outer: tuple[Frame, ...] = ()
    compile: int = 0  # which frame compile logged it, counted from 1 in the order they started


@dataclass(frozen=True)
class GraphEvent:
    ops: tuple[str, ...]
    op_stacks: tuple[tuple[Frame, ...], ...]  # per op node, from node.meta["stack_trace"]
    region: Region
    compile: int = 0  # the frame compile it came from (its graph runs before that compile's break)


@dataclass(frozen=True)
class RecompileEvent:
    """A frame compiled again because the guards of every earlier compile of it failed."""

    code: Frame  # the recompiled function (its first line)
    reason: str  # Dynamo's reason for the newest cache entry: `0/2: <guard>  # <source> ...`
    region: Region


@dataclass(frozen=True)
class CompileEvent:
    """One frame compile, timed from Dynamo's entry to its return (tracing and the backend)."""

    number: int
    code: Frame
    region: Region
    seconds: float
    limit_hit: bool = False  # Dynamo refused to compile it again: the recompile limit was reached


_LIMIT_HIT = "Dynamo recompile limit exceeded"


@dataclass(frozen=True)
class _Compile:
    region: Region
    is_root: bool  # the compiled frame is its region's top function
    outer: tuple[Frame, ...]
    number: int  # compiles counted from 1 in the order they start, which is the order they run


@dataclass
class Capture:
    breaks: list[BreakEvent] = field(default_factory=list)
    graphs: list[GraphEvent] = field(default_factory=list)
    recompiles: list[RecompileEvent] = field(default_factory=list)
    compiles: list[CompileEvent] = field(default_factory=list)
    _roots: set[tuple[str, int]] = field(default_factory=set, repr=False)
    _compiling: list[_Compile] = field(default_factory=list, repr=False)
    _started: int = field(default=0, repr=False)

    def current(self) -> _Compile | None:
        """The compile in progress, if any."""
        return self._compiling[-1] if self._compiling else None

    def _enter(self, code, caller) -> None:
        """A compile of `code` starts, called from the live frame `caller`: it belongs to the
        outermost registered root still running, else it starts a region of its own."""
        root, frame, outer = code, caller, []
        while frame is not None:
            if (frame.f_code.co_filename, frame.f_code.co_firstlineno) in self._roots:
                root = frame.f_code
            outer.append(Frame(frame.f_code.co_filename, frame.f_lineno or 0, frame.f_code.co_name))
            frame = frame.f_back
        self._roots.add((root.co_filename, root.co_firstlineno))
        region = Region(root.co_filename, root.co_firstlineno, root.co_name)
        self._started += 1
        self._compiling.append(_Compile(region, root is code, tuple(reversed(outer)), self._started))

    def _leave(self) -> None:
        self._compiling.pop()


def _code_frame(code) -> Frame:
    return Frame(code.co_filename, code.co_firstlineno, code.co_name)


def _frames(stack) -> tuple[Frame, ...]:
    return tuple(Frame(f.filename, f.lineno or 0, f.name) for f in stack or ())


def parse_stack_trace(text: str | None) -> tuple[Frame, ...]:
    """Frames of a formatted traceback (an FX node's `stack_trace`), outermost first."""
    return tuple(
        Frame(m["path"], int(m["line"]), m["function"]) for m in _STACK_LINE.finditer(text or "")
    )


def _op_name(node) -> str:
    target = node.target
    if node.op == "call_function":
        return getattr(target, "__name__", None) or str(target).rsplit(".", 1)[-1]
    return str(target)


def _graph_event(gm, region: Region, compile_number: int) -> GraphEvent:
    nodes = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
    return GraphEvent(
        ops=tuple(_op_name(n) for n in nodes),
        op_stacks=tuple(parse_stack_trace(n.meta.get("stack_trace")) for n in nodes),
        region=region,
        compile=compile_number,
    )


@contextmanager
def capturing() -> Iterator[Capture]:
    """Install the hooks for the duration of the block; they record into the yielded Capture."""
    from torch._dynamo import convert_frame, output_graph, symbolic_convert
    from torch._guards import TracingContext

    capture = Capture()
    translator = symbolic_convert.InstructionTranslatorBase
    orig_log, orig_convert = translator.log_graph_break, convert_frame.ConvertFrameAssert.__call__
    orig_compiler = output_graph.OutputGraph.call_user_compiler
    orig_reasons = convert_frame.get_and_maybe_log_recompilation_reasons

    def record_break(exc, stack, skips_frame: bool, fallback: Frame) -> None:
        current = capture.current()
        capture.breaks.append(
            BreakEvent(
                gb_type=getattr(exc, "gb_type", None) or None,
                message=str(exc),
                stack=_frames(stack) or (fallback,),
                skips_frame=skips_frame,
                region=current.region if current else Region(*astuple(fallback)),
                outer=current.outer if current else (),
                compile=current.number if current else 0,
            )
        )

    def log_graph_break(self, code_options, reason, exc):
        if not exc.logged:  # Dynamo logs an exception once; so do we
            # The same stack as Dynamo's own log: the exception's, else the tracing context's.
            stack = getattr(exc, "real_stack", None) or TracingContext.extract_stack()
            skips = bool(getattr(exc, "skip_frame", False)) or reason.startswith(_SKIPPED_PREFIXES)
            fallback = Frame(code_options["co_filename"], code_options["co_firstlineno"],
                             code_options["co_name"])
            record_break(exc, stack, skips, fallback)
        return orig_log(self, code_options, reason, exc)

    def convert(self, frame, *args, **kwargs):
        code = frame.f_code
        capture._enter(code, sys._getframe(1))
        started, limit_hit = time.perf_counter(), False
        try:
            return orig_convert(self, frame, *args, **kwargs)
        except Exception as exc:
            limit_hit = getattr(exc, "gb_type", None) == _LIMIT_HIT
            # A soft failure raised outside the translator: the frame is skipped, unlogged. It
            # counts where Dynamo would log it (it got as far as a compile id), or where it
            # refuses a region's top function outright (`torch.compile` of a generator); not for
            # the generator expressions of a library that runs eagerly after a break.
            refused_root = capture.current().is_root
            if hasattr(exc, "logged") and not exc.logged and (hasattr(exc, "compile_id") or refused_root):
                fallback = Frame(code.co_filename, code.co_firstlineno, code.co_name)
                record_break(exc, getattr(exc, "real_stack", None), True, fallback)
            raise
        finally:
            current = capture.current()
            capture.compiles.append(CompileEvent(current.number, _code_frame(code), current.region,
                                                 time.perf_counter() - started, limit_hit))
            capture._leave()

    def recompilation_reasons(cache_entries, frame, *args, **kwargs):
        reasons = orig_reasons(cache_entries, frame, *args, **kwargs)
        current = capture.current()
        code = _code_frame(frame.f_code)
        capture.recompiles.append(RecompileEvent(code, reasons[0] if reasons else "",
                                                 current.region if current else Region(*astuple(code))))
        return reasons

    def call_user_compiler(self, gm, example_inputs):
        current = capture.current()
        region = current.region if current else Region("<unknown>", 0, "<unknown>")
        capture.graphs.append(_graph_event(gm, region, current.number if current else 0))
        return orig_compiler(self, gm, example_inputs)

    translator.log_graph_break = log_graph_break
    convert_frame.ConvertFrameAssert.__call__ = convert
    output_graph.OutputGraph.call_user_compiler = call_user_compiler
    convert_frame.get_and_maybe_log_recompilation_reasons = recompilation_reasons
    try:
        yield capture
    finally:
        convert_frame.get_and_maybe_log_recompilation_reasons = orig_reasons
        translator.log_graph_break = orig_log
        convert_frame.ConvertFrameAssert.__call__ = orig_convert
        output_graph.OutputGraph.call_user_compiler = orig_compiler


def original_callable(target):
    """What `torch.compile` was given, for a target that is already compiled."""
    target = getattr(target, "_orig_mod", target)  # an OptimizedModule
    return getattr(target, "_torchdynamo_orig_callable", target)  # a compiled function


@contextmanager
def without_guard_profiling() -> Iterator[None]:
    """Skip Dynamo's guard-latency measurement: a metric only, but it flushes the CPU cache on
    every compile (about a third of a small target's compile time in 2.13)."""
    from torch._dynamo import guards

    original = guards.profile_guard_manager
    guards.profile_guard_manager = lambda *args: 0.0
    try:
        yield
    finally:
        guards.profile_guard_manager = original


@dataclass(frozen=True)
class MessageParts:
    title: str
    explanation: str | None
    hints: tuple[str, ...]
    context: str | None
    own_text: str  # this break's part of a chained message (see parse_message)
    causes: tuple[str, ...] = ()  # titles of the breaks that led to this one, earliest first


_CHAINED = "*** While handling this graph break, another graph break occurred: ***"


def parse_message(message: str) -> MessageParts:
    """Split Dynamo's break message: the type line, `Explanation:`, `Hint:` lines and the
    `Developer debug context:`; continuation lines are folded into the field above them.

    A break raised while handling another (e.g. "graph break in loop") has the earlier break's
    message first, then `_CHAINED`, then its own: the last part is this break's own."""
    *earlier, own = message.split(_CHAINED)
    lines = own.strip().splitlines()
    fields: dict[str, list[str]] = {"Explanation": [], "Hint": [], "Developer debug context": []}
    current: list[str] | None = None
    for raw in lines[1:]:
        text = raw.strip()
        key = next((k for k in fields if text.startswith(k + ":")), None)
        if key:
            fields[key].append(text[len(key) + 1:].strip())
            current = fields[key]
        elif text.startswith("For more details about this graph break"):
            current = None
        elif text and current:
            current[-1] = f"{current[-1]} {text}".strip()
    return MessageParts(
        title=lines[0].strip() if lines else "",
        explanation=next(iter(fields["Explanation"]), None),
        hints=tuple(fields["Hint"]),
        context=next(iter(fields["Developer debug context"]), None),
        own_text=own,
        causes=tuple(part.strip().splitlines()[0] for part in earlier if part.strip()),
    )
