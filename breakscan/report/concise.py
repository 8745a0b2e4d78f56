"""`--format concise`: `path:line:col: ID message`, one per line, the shape problem matchers parse."""

from __future__ import annotations

from breakscan.model import Report
from breakscan.notebook import location

# Ids for entries that are not rule findings: a file that could not be analysed, a failed target.
FILE_ERROR_ID = "E999"
TARGET_ERROR_ID = "E998"


def one_line(text: str) -> str:
    """Reasons and tracebacks can span lines; one entry must stay on one line."""
    return " ".join(text.split())


def render(report: Report, options) -> str:
    lines = []
    for error in report.errors:
        where = location(error.path, error.line or 1, error.column or 1)
        lines.append(f"{where}: {FILE_ERROR_ID} {one_line(error.message)}")
    for finding in report.findings:
        status = "" if finding.status == "static-only" else f" [{finding.status}]"
        where = location(finding.path, finding.span.line, finding.span.column)
        lines.append(f"{where}: {finding.rule} {one_line(finding.message)}{status}")
    for target in report.targets:
        if target.status not in ("ok", "skipped"):
            detail = f": {one_line(target.error)}" if target.error else ""
            lines.append(f"{target.path}:1:1: {TARGET_ERROR_ID} target {target.name} {target.status}{detail}")
    return "\n".join(lines) + ("\n" if lines else "")
