"""One `TargetResult` from a capture: shared by the worker and the in-process API."""

from __future__ import annotations

from collections.abc import Sequence

from breakscan.confirm.attribute import UserFiles, graph_infos, merge_breaks
from breakscan.confirm.capture import BreakEvent, CompileEvent, GraphEvent, RecompileEvent
from breakscan.confirm.recompiles import merge_recompiles
from breakscan.confirm.registry import load_registry
from breakscan.model import OutputCheck, TargetResult, TargetStatus


def build_result(
    name: str,
    path: str,
    breaks: Sequence[BreakEvent],
    graphs: Sequence[GraphEvent],
    user: UserFiles,
    *,
    status: TargetStatus = "ok",
    error: str | None = None,
    device: str | None = None,
    torch_version: str | None = None,
    wall_time: float = 0.0,
    recompiles: Sequence[RecompileEvent] = (),
    compiles: Sequence[CompileEvent] = (),
    calls: int = 1,
    output_check: OutputCheck | None = None,
) -> TargetResult:
    merged = merge_breaks(breaks, user, load_registry(), graphs)
    infos = graph_infos(graphs, user, compiles)
    return TargetResult(
        name=name, path=path, status=status, error=error, device=device,
        graph_count=len(infos), graph_break_count=sum(b.count for b in merged),
        graphs=tuple(infos), breaks=tuple(merged), wall_time=round(wall_time, 3),
        torch_version=torch_version, recompiles=tuple(merge_recompiles(recompiles, compiles, user)),
        compile_count=len(compiles), compile_time=round(sum(c.seconds for c in compiles), 3), calls=calls,
        output_check=output_check,
    )
