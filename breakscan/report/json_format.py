"""`--format json`: the object described in CLI-CONTRACT.md, plus a few documented extra fields."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict

from breakscan.model import Break, Edit, FileError, Finding, Frame, Report, TargetResult, Verification
from breakscan.notebook import cell_position
from breakscan.report.graph import EXPORTERS, build_chain, chain_dict, library_dict


def finding_dict(finding: Finding) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {"summary": finding.fix.summary, "diff": finding.fix.diff, "applicability": finding.fix.applicability,
               "path": finding.fix.path, "kind": finding.fix.kind, "edits": [edit_dict(e) for e in finding.fix.edits]}
    return {
        "rule": finding.rule,
        "name": finding.name,
        "path": finding.path,
        "line": finding.span.line,
        "column": finding.span.column,
        "end_line": finding.span.end_line,
        "end_column": finding.span.end_column,
        **cell_dict(finding),
        "message": finding.message,
        "gb_ids": list(finding.gb_ids),
        "severity": finding.severity,
        "chain": list(finding.chain),
        "status": finding.status,
        "fix": fix,
        "count": finding.count,
        "target": finding.target,
        "confirmed_by": [{"target": ref.target, "break": ref.index} for ref in finding.breaks],
        "call_sites": [frame_dict(f) for f in finding.call_sites],
        "library": None if finding.library is None else {
            "package": finding.library.package,
            "reached_from": None if finding.library.reached_from is None else frame_dict(finding.library.reached_from)},
    }


def cell_dict(finding: Finding) -> dict:
    """In a notebook: the code cell holding the finding and its line there (null elsewhere)."""
    cell = cell_position(finding.path, finding.span.line)
    return {"cell": cell[0] if cell else None, "cell_line": cell[1] if cell else None}


def frame_dict(frame: Frame) -> dict:
    return {"path": frame.path, "line": frame.line, "function": frame.function}


def edit_dict(edit: Edit) -> dict:
    span = edit.span
    return {"line": span.line, "column": span.column, "end_line": span.end_line, "end_column": span.end_column,
            "replacement": edit.replacement}


def break_dict(item: Break) -> dict:
    return {
        "path": item.path,
        "line": item.line,
        "gb_id": item.gb_id,
        "gb_type": item.gb_type,
        "reason": item.reason,
        "explanation": item.explanation,
        "hints": list(item.hints),
        "stack": [frame_dict(f) for f in item.stack],
        "count": item.count,
        "library": library_dict(item.library),
        "graphs_before": item.graphs_before,
    }


def target_dict(target: TargetResult, index: int, findings: Sequence[Finding] = (),
                graph_format: str | None = None) -> dict:
    """`graph`: the target's chain of graphs and breaks (see report/graph.py); with a graph
    format, also that picture as text under the format's name. `index`: its place in the report."""
    chain = build_chain(target, list(findings), index)
    graph = chain_dict(chain)
    if graph_format:
        graph[graph_format] = EXPORTERS[graph_format](chain)
    return {
        "name": target.name,
        "path": target.path,
        "status": target.status,
        "error": target.error,
        "device": target.device,
        "device_fallback": target.device_fallback,
        "graph_count": target.graph_count,
        "graph_break_count": target.graph_break_count,
        "graphs": [{"index": g.index, "op_count": g.op_count, "ops": list(g.ops), "lines": list(g.lines),
                    "compile_time": g.compile_time, "recompiled": g.recompiled}
                   for g in target.graphs],
        "breaks": [break_dict(b) for b in target.breaks],
        "recompiles": [asdict(r) for r in target.recompiles],
        "calls": target.calls,
        "compile_count": target.compile_count,
        "compile_time": target.compile_time,
        "wall_time": round(target.wall_time, 3),
        "torch": target.torch_version,
        "graph": graph,
    }


def error_dict(error: FileError) -> dict:
    return {"path": error.path, "message": error.message, "line": error.line, "column": error.column}


def verification_dict(verification: Verification) -> dict:
    targets = [{**asdict(t), "breaks_before": t.breaks_before, "breaks_after": t.breaks_after}
               for t in verification.targets]
    return {**asdict(verification), "targets": targets}


def report_dict(report: Report, graph_format: str | None = None) -> dict:
    data = {
        "breakscan": report.version,
        "torch": report.torch_version,
        "findings": [finding_dict(f) for f in report.findings],
        "targets": [target_dict(t, i, report.findings, graph_format) for i, t in enumerate(report.targets)],
        "errors": [error_dict(e) for e in report.errors],
        "warnings": [error_dict(w) for w in report.unused_suppressions],
        "summary": {
            "files": report.files,
            "findings": len(report.findings),
            "errors": len(report.errors),
            "targets": len(report.targets),
        },
    }
    if report.verification is not None:
        data["verify"] = verification_dict(report.verification)
    return data


def render(report: Report, options) -> str:
    return json.dumps(report_dict(report, options.graph_format), indent=2) + "\n"
