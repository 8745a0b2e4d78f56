"""`--format github`: GitHub Actions workflow commands, which the runner turns into annotations
on the pull request's diff: `::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=T::message`."""

from __future__ import annotations

from breakscan.model import Report, Span
from breakscan.report.concise import FILE_ERROR_ID, TARGET_ERROR_ID

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """As @actions/core escapes a command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """As @actions/core escapes a property value: also `:` and `,`, which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties) -> str:
    """One workflow command; properties that are None are left out."""
    given = {key: value for key, value in properties.items() if value is not None}
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in given.items())
    return f"::{kind} {rendered}::{escape_data(message)}"


def _span_properties(span: Span) -> dict:
    if span.line != span.end_line:  # GitHub uses columns only on single-line annotations
        return {"line": span.line, "endLine": span.end_line}
    return {"line": span.line, "col": span.column, "endLine": span.end_line, "endColumn": span.end_column}


def render(report: Report, options) -> str:
    lines = []
    for error in report.errors:
        lines.append(command("error", error.message, file=error.path, line=error.line, col=error.column,
                             title=f"{FILE_ERROR_ID} breakscan"))
    for finding in report.findings:
        details = [finding.message]
        if len(finding.chain) > 1:
            details.append("via " + " -> ".join(finding.chain))
        if finding.fix is not None:
            details.append(f"fix: {finding.fix.summary}")
        if finding.status != "static-only":
            details.append(f"status: {finding.status}")
        lines.append(command(_COMMANDS[finding.severity], "\n".join(details), file=finding.path,
                             **_span_properties(finding.span), title=f"{finding.rule} {finding.name}"))
    for target in report.targets:
        if target.status not in ("ok", "skipped"):
            lines.append(command("error", target.error or f"target {target.status}", file=target.path,
                                 title=f"{TARGET_ERROR_ID} target {target.name} {target.status}"))
    for warning in report.unused_suppressions:
        lines.append(command("warning", warning.message, file=warning.path, line=warning.line,
                             title="breakscan unused suppression"))
    return "\n".join(lines) + ("\n" if lines else "")
