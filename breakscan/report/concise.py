"""`--format concise`: `path:line:col: ID message`, one per line, the shape problem matchers parse."""

from __future__ import annotations

from breakscan.model import Report


def render(report: Report, options) -> str:
    lines = []
    for error in report.errors:
        where = f"{error.path}:{error.line or 1}:{error.column or 1}"
        lines.append(f"{where}: E999 {error.message}")
    for finding in report.findings:
        status = "" if finding.status == "static-only" else f" [{finding.status}]"
        lines.append(f"{finding.path}:{finding.span.line}:{finding.span.column}: {finding.rule} {finding.message}{status}")
    for target in report.targets:
        if target.status not in ("ok", "skipped"):
            lines.append(f"{target.path}:1:1: E998 target {target.name} {target.status}: {target.error}")
    return "\n".join(lines) + ("\n" if lines else "")
