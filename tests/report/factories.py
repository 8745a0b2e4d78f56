"""A hand-made report over a small model file, shaped like what lint + confirmation + fixes give:
one module target with a break in forward and one in a helper (two occurrences), one function
target whose frame Dynamo skipped, and findings of every status."""

from __future__ import annotations

from pathlib import Path

from breakscan.fixes import attach_fixes
from breakscan.model import Break, BreakRef, Finding, Frame, GraphInfo, Recompile, Report, Span, TargetResult

MODEL = '''import torch


def helper(h):
    s = h.sum().item()
    return h * s


class M(torch.nn.Module):
    def forward(self, x):
        x = x + 1
        print("x", x.shape)
        x = helper(x)
        if x.shape[0] > 99:
            x = x - x.mean().item()
        return x * 2


def looped(x):
    for _ in range(2):
        torch._dynamo.graph_break()
    return x
'''


def finding(path: str, rule: str, line: int, column: int, end_column: int, status: str, **extra) -> Finding:
    names = {"BS101": "tensor-item", "BS401": "print-call", "BS000": "unpredicted-break"}
    gb_ids = {"BS101": ("GB0124",), "BS401": ("GB0059",), "BS000": ("GB7000",)}
    return Finding(rule=rule, name=names[rule], path=path, span=Span(line, column, line, end_column),
                   message=extra.pop("message", f"{names[rule]} breaks the graph"), gb_ids=gb_ids[rule],
                   severity="error", status=status, **extra)


def model_targets(path: str) -> list[TargetResult]:
    forward, helper = Frame(path, 12, "M.forward"), Frame(path, 13, "M.forward")
    module = TargetResult(
        name="M()", path=path, status="ok", device="cpu", graph_count=4, graph_break_count=3,
        graphs=(GraphInfo(0, 1, ("add",), (11,), path), GraphInfo(1, 1, ("sum",), (5,), path),
                GraphInfo(2, 1, ("mul",), (6,), path), GraphInfo(3, 1, ("mul",), (16,), path)),
        breaks=(Break(path, 12, "GB0059", "Failed to trace builtin operator", "Failed to trace builtin operator",
                      stack=(forward,)),
                Break(path, 5, "GB0124", "Unsupported Tensor.item() call", "Unsupported Tensor.item() call",
                      stack=(helper, Frame(path, 5, "helper")), count=2)),
        wall_time=1.25, torch_version="2.13.0+cpu")
    looped = TargetResult(
        name="looped", path=path, status="ok", device="cpu", graph_count=0, graph_break_count=1,
        recompiles=(Recompile(path, 20, "looped", "len(xs) == 1", "the length of a list or tuple changed "
                              "between calls: each length compiles a graph of its own", count=2),),
        calls=3, compile_count=3, compile_time=0.12,
        breaks=(Break(path, 21, "GB7000", "graph break in loop", "graph break in loop",
                      stack=(Frame(path, 21, "looped"),),
                      frame_skipped=True, explanation="A graph break inside a loop skips the whole frame.",
                      hints=("Move the graph break out of the loop.",)),),
        torch_version="2.13.0+cpu")
    return [module, looped]


def model_report(tmp_path: Path, fixes: bool = True) -> Report:
    source = tmp_path / "model.py"
    source.write_text(MODEL)
    path = str(source)
    findings = [
        finding(path, "BS101", 5, 9, 23, "confirmed", chain=("M.forward", "helper"), count=2, target="M()",
                breaks=(BreakRef(0, 1),)),
        finding(path, "BS401", 12, 9, 28, "confirmed", chain=("M.forward",), count=1, target="M()",
                breaks=(BreakRef(0, 0),)),
        finding(path, "BS101", 15, 21, 37, "static-only", chain=("M.forward",)),
        finding(path, "BS000", 21, 1, 36, "dynamic-only", chain=("looped",), count=1, target="looped",
                message="graph break no rule predicted: graph break in loop", breaks=(BreakRef(1, 0),)),
    ]
    return Report(version="0.1.0", files=1, findings=attach_fixes(findings) if fixes else findings,
                  targets=model_targets(path), torch_version="2.13.0+cpu")
