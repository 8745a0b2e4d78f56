"""`--format json`: the object described in CLI-CONTRACT.md, plus a few documented extra fields."""

from __future__ import annotations

import json

from breakscan.model import Break, FileError, Finding, Report, TargetResult


def finding_dict(finding: Finding) -> dict:
    fix = None
    if finding.fix is not None:
        fix = {"summary": finding.fix.summary, "diff": finding.fix.diff}
    return {
        "rule": finding.rule,
        "name": finding.name,
        "path": finding.path,
        "line": finding.span.line,
        "column": finding.span.column,
        "end_line": finding.span.end_line,
        "end_column": finding.span.end_column,
        "message": finding.message,
        "gb_ids": list(finding.gb_ids),
        "severity": finding.severity,
        "chain": list(finding.chain),
        "status": finding.status,
        "fix": fix,
        "count": finding.count,
        "target": finding.target,
    }


def break_dict(item: Break) -> dict:
    return {
        "path": item.path,
        "line": item.line,
        "gb_id": item.gb_id,
        "gb_type": item.gb_type,
        "reason": item.reason,
        "explanation": item.explanation,
        "hints": list(item.hints),
        "stack": [{"path": f.path, "line": f.line, "function": f.function} for f in item.stack],
        "count": item.count,
    }


def target_dict(target: TargetResult) -> dict:
    return {
        "name": target.name,
        "path": target.path,
        "status": target.status,
        "error": target.error,
        "device": target.device,
        "graph_count": target.graph_count,
        "graph_break_count": target.graph_break_count,
        "graphs": [{"index": g.index, "op_count": g.op_count, "ops": list(g.ops), "lines": list(g.lines)}
                   for g in target.graphs],
        "breaks": [break_dict(b) for b in target.breaks],
        "wall_time": round(target.wall_time, 3),
        "torch": target.torch_version,
    }


def error_dict(error: FileError) -> dict:
    return {"path": error.path, "message": error.message, "line": error.line, "column": error.column}


def report_dict(report: Report) -> dict:
    return {
        "breakscan": report.version,
        "torch": report.torch_version,
        "findings": [finding_dict(f) for f in report.findings],
        "targets": [target_dict(t) for t in report.targets],
        "errors": [error_dict(e) for e in report.errors],
        "warnings": [error_dict(w) for w in report.unused_suppressions],
        "summary": {
            "files": report.files,
            "findings": len(report.findings),
            "errors": len(report.errors),
            "targets": len(report.targets),
        },
    }


def render(report: Report, options) -> str:
    return json.dumps(report_dict(report), indent=2) + "\n"
