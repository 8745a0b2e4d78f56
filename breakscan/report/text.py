"""`--format text`: the terminal report, rendered with rich."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from breakscan.model import Report


def render(report: Report, options) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=options.width, force_terminal=options.color, no_color=not options.color,
                      highlight=False, soft_wrap=False)
    for error in report.errors:
        where = f"{error.path}:{error.line}:{error.column}" if error.line else error.path
        console.print(Text.assemble((where, "bold"), ": ", ("error", "bold red"), f": {error.message}"))
    for finding in report.findings:
        head = Text.assemble(
            (f"{finding.path}:{finding.span.line}:{finding.span.column}", "bold"), " ",
            (finding.rule, "bold red" if finding.severity == "error" else "bold yellow"), " ",
            finding.message, (f"  [{finding.status}]", "dim"),
        )
        console.print(head)
        if len(finding.chain) > 1:
            console.print(Text("  via " + " → ".join(finding.chain), style="dim"))
        if finding.fix is not None:
            console.print(Text(f"  fix: {finding.fix.summary}", style="green"))
    console.print(Text(f"{len(report.findings)} finding(s), {len(report.errors)} error(s) in {report.files} file(s)",
                       style="bold"))
    return buffer.getvalue()
