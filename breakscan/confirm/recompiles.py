"""Recompilations as the user should see them: each at the line whose value the failed guard
checked, merged over its occurrences, with TorchDynamo's advice.

TorchDynamo writes a failed guard as

    0/2: self.step == 2     # self.step += 1  # rc/m.py:11 in forward (HINT: ...)
    User stack trace:
      File "/tmp/rc/m.py", line 11, in forward
        self.step += 1

(compile id, guard, the source line the value came from, a hint for some guards, then the user
stack where the guarded value was read); a guard on an input (`tensor 'x' size mismatch at
index 0. expected 2, actual 3`) has no stack, and is placed at the recompiled function.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from breakscan.confirm.attribute import UserFiles, user_frame
from breakscan.confirm.capture import CompileEvent, RecompileEvent, parse_stack_trace
from breakscan.model import Recompile

_COMPILE_ID = re.compile(r"^\s*\[?\d+/\d+\]?:\s*")
_SOURCE_NOTE = re.compile(r"\s{2,}# .*?(?:\(HINT: (?P<hint>.*)\))?$")
# Values in a guard (`== 2`, `expected 2, actual 3`, an object's address): the same guard on
# another value is one site.
_LITERAL = re.compile(r"0x[0-9a-fA-F]+|(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?|'[^']*'")


def parse_reason(reason: str) -> tuple[str, str | None, str]:
    """(guard, hint, the rest: the user stack) of one of TorchDynamo's recompilation reasons."""
    first, _, rest = reason.partition("\n")
    first = _COMPILE_ID.sub("", first)
    note = _SOURCE_NOTE.search(first)
    if note is None:
        return first.strip(), None, rest
    hint = note["hint"]
    return first[:note.start()].strip(), hint.strip() if hint else None, rest


# What each kind of failed guard means and how to avoid it, in TorchDynamo 2.13's wording of guards.
_ADVICE: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern), advice) for pattern, advice in (
    (r"size mismatch|stride mismatch",
     "an input's shape changed between calls: mark the varying dimension dynamic before the first "
     "call (`torch._dynamo.mark_dynamic(x, dim)`) or compile with `dynamic=True`"),
    (r"dtype mismatch|device mismatch|requires_grad mismatch|dispatch key set mismatch",
     "an input's dtype, device or requires_grad changed between calls: each combination compiles a "
     "graph of its own; keep them the same from call to call"),
    (r"GLOBAL_STATE changed: grad_mode",
     "grad mode differed from the earlier compile (`torch.no_grad()`/`inference_mode` around some "
     "calls only): each mode compiles a graph of its own"),
    (r"GLOBAL_STATE changed",
     "global state (autocast, deterministic algorithms...) differed from the earlier compile: each "
     "state compiles a graph of its own; keep it the same around every call"),
    (r"\.training ==",
     "the module switched between train and eval mode: each mode compiles a graph of its own (keep "
     "one mode per compiled module, or expect one recompile per mode)"),
    (r"BACKEND_MATCH",
     "torch.compile was given another backend object than at the earlier compile (a lambda or function "
     "made per call): create the backend once and reuse it"),
    (r"___check_obj_id\(|___check_type_id\(",
     "a different object (or type) was passed than at the earlier compile: create the function, "
     "module or backend once outside the compiled code, and pass numbers as tensors"),
    (r"^len\(",
     "the length of a list or tuple changed between calls: each length compiles a graph of its own"),
    (r"==\s*-?\d",
     "a Python number that changes between calls is specialised: pass it as a 0-d tensor, or "
     "compile with `dynamic=True`"),
))


def advice(guard: str, hint: str | None) -> str:
    """TorchDynamo's hint when it is a sentence, else what this kind of guard means."""
    if hint and len(hint.split()) >= 4:
        return hint
    found = next((text for pattern, text in _ADVICE if pattern.search(guard)), None)
    return found or f"the guard `{guard}` that the earlier compile installed failed on this call"


def guard_pattern(guard: str) -> str:
    return _LITERAL.sub("…", guard)


def merge_recompiles(events: Iterable[RecompileEvent], compiles: Sequence[CompileEvent],
                     user: UserFiles) -> list[Recompile]:
    """One `Recompile` per (guarded line, guard pattern), in the order they first happened."""
    limited = {event.code for event in compiles if event.limit_hit}
    sites: dict[tuple[str, int, str], Recompile] = {}
    for event in events:
        guard, hint, rest = parse_reason(event.reason)
        frames = parse_stack_trace(rest)
        found = user_frame(frames, user)
        where = frames[found] if found is not None else event.code
        key = (where.path, where.line, guard_pattern(guard))
        seen = sites.get(key)
        if seen is not None:
            sites[key] = Recompile(**{**seen.__dict__, "count": seen.count + 1})
            continue
        sites[key] = Recompile(
            path=where.path, line=where.line, function=event.code.function, guard=guard or "unknown guard",
            reason=advice(guard, hint),
            limit_hit=event.code in limited,
        )
    return list(sites.values())
