"""The parent <-> worker protocol: one JSON object per line, jobs on the worker's stdin and
messages on its stdout (both kept private from the user's code by the worker). Message lines carry
a sentinel prefix, so that nothing else that reaches the pipe can be mistaken for a message.

Messages: {"event": "ready", "torch": version, "cuda": bool} once, then per job any number of
{"event": "phase", "phase": "importing" | "compiling" | "running"} (what the worker is doing, for
the progress display) and one {"event": "result", "results": [...]} (a target job gives one
result; a script job gives one per compiled region).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from breakscan.confirm.locate import ModuleSite
from breakscan.model import Break, Frame, GraphInfo, LibraryFrame, OutputCheck, Recompile, TargetResult, TargetSpec

SENTINEL = "\x1ebreakscan\x1f"


def encode(message: dict[str, Any]) -> str:
    return SENTINEL + json.dumps(message) + "\n"


def decode(line: str) -> dict[str, Any] | None:
    """The message on a line, or None for a line that is not one."""
    if not line.startswith(SENTINEL):
        return None
    try:
        return json.loads(line[len(SENTINEL):])
    except ValueError:
        return None


def target_job(spec: TargetSpec, device: str, site: ModuleSite) -> dict[str, Any]:
    return {"kind": "target", "spec": asdict(spec), "device": device, "module": asdict(site)}


def script_job(script: str, args: list[str], device: str, module: ModuleSite | None = None) -> dict[str, Any]:
    """A script run as `python script` or, with `module`, as `python -m module.name`."""
    return {"kind": "script", "script": script, "args": list(args), "device": device,
            "module": asdict(module) if module else None}


def site_from_json(data: dict[str, Any]) -> ModuleSite:
    return ModuleSite(data["name"], data["package"], tuple(data["search_path"]))


def result_to_json(result: TargetResult) -> dict[str, Any]:
    return asdict(result)


def result_from_json(data: dict[str, Any]) -> TargetResult:
    breaks = tuple(
        Break(**{**b, "hints": tuple(b["hints"]), "stack": tuple(Frame(**f) for f in b["stack"]),
                 "library": LibraryFrame(**b["library"]) if b["library"] else None})
        for b in data["breaks"]
    )
    graphs = tuple(
        GraphInfo(**{**g, "ops": tuple(g["ops"]), "lines": tuple(g["lines"])}) for g in data["graphs"]
    )
    recompiles = tuple(Recompile(**r) for r in data["recompiles"])
    check = OutputCheck(**data["output_check"]) if data["output_check"] else None
    return TargetResult(**{**data, "breaks": breaks, "graphs": graphs, "recompiles": recompiles,
                           "output_check": check})
