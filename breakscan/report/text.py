"""`--format text`: the terminal report, rendered with rich.

Per file: a headline (findings, how many TorchDynamo confirmed, each target's graphs and breaks,
torch and device), each target's chain of graphs and breaks as a tree, then the findings grouped
by rule, each with a frame of the user's code, the call chain from the compiled root, and its fix.
It closes with a table by rule. Without colour (`NO_COLOR`, pipes) it is plain text that reads at
80 columns.
"""

from __future__ import annotations

import functools
import io
import os

from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from breakscan.model import Finding, Fix, Report, Verification
from breakscan.notebook import location
from breakscan.report.graph import EXPORTERS, BreakNode, GraphNode, Node, TargetChain, short_label
from breakscan.report.links import gb_url
from breakscan.report.sources import frame_lines
from breakscan.report.summary import (
    Counts,
    FileSection,
    Overview,
    break_counts,
    call_chain,
    confirmations,
    delta_text,
    device_label,
    library_origin,
    overview,
    plural,
    recompile_counts,
    recompile_text,
    rule_rows,
)

_CONTEXT = 2  # lines of code shown above a finding
_CHAIN_HEAD, _CHAIN_TAIL = 12, 4  # a long chain shows its start and end
_HINTS = 2
_STATUS_STYLE = {"confirmed": "bold red", "dynamic-only": "bold magenta", "static-only": "yellow"}


def render(report: Report, options) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=options.width, force_terminal=options.color, no_color=not options.color,
                      color_system="standard" if options.color else None, highlight=False, emoji=False,
                      soft_wrap=False)
    view = overview(report)
    if not options.quiet:
        console.print(_banner(report))
    for error in report.errors:
        where = location(error.path, error.line, error.column) if error.line else error.path
        console.print(Text.assemble((where, "bold"), ": ", ("error", "bold red"), f": {error.message}"))
    if options.quiet:
        _findings_only(console, view)
        return _plain_lines(buffer)
    for section in view.sections:
        _file_section(console, view, section, options)
    if report.findings:
        console.print()
        console.print(_rule_table(report.findings, confirming=bool(report.targets)))
    if report.verification is not None:
        _verification(console, report.verification)
    if options.graph_format:
        for chain in view.chains:
            console.print(Text(f"\n{options.graph_format} graph of {chain.target.name}:", style="bold"))
            console.print(Text(EXPORTERS[options.graph_format](chain).rstrip("\n")))
    console.print(_para(Text(_closing(report), style="bold"), 0))
    return _plain_lines(buffer)


def _plain_lines(buffer: io.StringIO) -> str:
    """rich pads some lines to the full width; trailing blanks only get in the way of pipes and diffs."""
    lines = buffer.getvalue().splitlines()
    return "".join(line.rstrip() + "\n" for line in lines)


def _findings_only(console: Console, view: Overview) -> None:
    """`--quiet`: each finding with its frame and fix, under its full path; nothing else."""
    for section in view.sections:
        for group in view.groups(section, None):
            for index in group.shown:
                _finding(console, view, index, full_path=True)


def _banner(report: Report) -> Text:
    parts = [f"breakscan {report.version}"]
    if report.torch_version:
        parts.append(f"torch {report.torch_version}")
    devices = sorted({t.device for t in report.targets if t.device})
    if devices:
        parts.append("on " + ", ".join(devices))
    return Text(" · ".join(parts), style="bold")


def _closing(report: Report) -> str:
    """The last line; words about confirmation only when something was confirmed."""
    findings = plural(len(report.findings), "finding")
    if report.targets:
        counts = Counts.of(report.findings)
        library = f", {counts.in_library} in a library" if counts.in_library else ""
        findings += f" ({counts.confirmed} confirmed, {counts.missed} missed by the lint{library})"
    parts = [findings, plural(len(report.errors), "error"), plural(report.files, "file")]
    if report.targets:
        parts.append(plural(len(report.targets), "target"))
    return " · ".join(parts)


def _para(text: Text | str, indent: int = 2) -> Padding:
    """A paragraph whose wrapped lines keep its indent."""
    return Padding(text if isinstance(text, Text) else Text(text), (0, 0, 0, indent), expand=False)


# -- one file --------------------------------------------------------------------------------
def _file_section(console: Console, view: Overview, section: FileSection, options) -> None:
    console.print()
    console.rule(Text(section.path, style="bold"), align="left", characters="─")
    counts = view.counts(section)
    if counts.findings and view.report.targets:
        console.print(_para(f"{plural(counts.findings, 'finding')}: {counts.confirmation()}", 0))
    elif counts.findings:
        console.print(_para(plural(counts.findings, "finding"), 0))
    for chain in section.chains:
        console.print(_para(_target_headline(chain), 0))
        if chain.nodes:
            console.print(_chain_tree(chain))
        for item in chain.target.recompiles:
            console.print(_para(Text.assemble(("↻ ", "bold yellow"), recompile_text(item)), 2))
            console.print(_para(Text(item.reason, style="dim"), 4))
    findings = view.report.findings
    for group in view.groups(section, options.max_per_rule):
        console.print()
        total = len(group.shown) + len(group.hidden)
        console.print(Text.assemble((f"{group.rule} {group.name}", "bold"), f" · {plural(total, 'finding')}"))
        for index in group.shown:
            _finding(console, view, index)
        if group.hidden:
            lines = ", ".join(str(findings[i].line) for i in group.hidden[:12])
            more = ", …" if len(group.hidden) > 12 else ""
            console.print(Text(f"  … {len(group.hidden)} more at lines {lines}{more} "
                               "(raise --max-per-rule to see them)", style="dim"))


def _target_headline(chain: TargetChain) -> Text:
    target = chain.target
    text = Text.assemble(("target ", "dim"), (target.name, "bold"), ": ")
    if target.status != "ok":
        return text.append(f"{target.status}: {target.error or 'no details'}", style="bold red")
    text.append(break_counts(target))
    details = [recompile_counts(target), device_label(target),
               f"torch {target.torch_version}" if target.torch_version else None, f"{target.wall_time:.1f} s"]
    return text.append("".join(f" · {d}" for d in details if d), style="dim")


def _chain_tree(chain: TargetChain) -> Tree:
    tree = Tree(Text(chain.target.name, style="bold"), guide_style="dim")
    nodes = chain.nodes
    if len(nodes) > _CHAIN_HEAD + _CHAIN_TAIL + 1:
        skipped = nodes[_CHAIN_HEAD:-_CHAIN_TAIL]
        graphs = sum(isinstance(n, GraphNode) for n in skipped)
        breaks = sum(isinstance(n, BreakNode) for n in skipped)
        gap = Text(f"… {plural(graphs, 'more graph')} and {plural(breaks, 'more break')} …", style="dim")
        shown: list[Node | Text] = [*nodes[:_CHAIN_HEAD], gap, *nodes[-_CHAIN_TAIL:]]
    else:
        shown = list(nodes)
    for node in shown:
        tree.add(node if isinstance(node, Text) else _node_label(node))
    return tree


def _node_label(node) -> Text:
    if isinstance(node, GraphNode):
        label = Text(short_label(node), style="green")
        if node.ops:
            shown = ", ".join(node.ops[:6]) + (", …" if len(node.ops) > 6 else "")
            label.append(f"  {shown}", style="dim")
        return label
    if isinstance(node, BreakNode):
        label = Text(short_label(node), style="bold red")
        if node.code:
            label.append(f"  {node.code}", style="dim")
        return label
    return Text(short_label(node) + f": {node.why}", style="magenta")


# -- one finding -----------------------------------------------------------------------------
def _finding(console: Console, view: Overview, index: int, full_path: bool = False) -> None:
    finding = view.report.findings[index]
    head = Text("  ")
    shown = finding.path if full_path else os.path.basename(finding.path)
    head.append(location(finding.path, finding.span.line, finding.span.column, name=shown), style="bold")
    if full_path:  # no rule heading above it
        head.append(f"  {finding.rule} {finding.name}", style="bold")
    head.append(f"  {finding.severity}")
    if view.report.targets:  # the status says what confirmation made of it
        head.append(", ")
        head.append(finding.status, style=_STATUS_STYLE[finding.status])
    if finding.breaks:
        head.append(f" {confirmations(view.report, finding)}", style="dim")
    _write(console, head)  # a location stays on one line, however long
    # The rest as lines made here, each wrapped or cut to the width: rich's cost is per
    # renderable, and printing them as they are costs nothing more.
    wrap = functools.partial(_wrapped, console.width)
    lines = wrap(finding.message)
    brk = view.breaks.get(index)
    chain = call_chain(finding, brk)
    origin = library_origin(finding)
    if origin:
        lines += wrap(Text(origin, style="dim"))
    if chain:
        lines += wrap(Text("chain: " + chain, style="dim"))
    lines += _code_frame(finding)
    for gb_id in finding.gb_ids or ((brk.gb_id,) if brk and brk.gb_id else ()):
        lines += wrap(Text(f"{gb_id}: {gb_url(gb_id)}", style="dim"))
    if brk and finding.status == "dynamic-only":  # no rule explains it: Dynamo's own words
        if brk.explanation:
            lines += wrap(f"why: {brk.explanation}")
        for hint in brk.hints[:_HINTS]:
            lines += wrap(f"hint: {hint}")
    if finding.fix is not None:
        lines += _fix(finding.fix, wrap)
    for line in lines:
        line.truncate(console.width, overflow="ellipsis")  # a long line of code ends at the edge
    _write(console, Text("\n").join(lines))


def _write(console: Console, text: Text) -> None:
    """Lines printed as they are (wrapped or cut already): without colour, straight to the file."""
    if console.no_color:
        console.file.write(text.plain + "\n")
    else:
        console.print(text, soft_wrap=True)


# A paragraph's words are wrapped by rich (its `Text.wrap`, cell-aware), with this console only.
_MEASURE = Console(width=80, color_system=None, highlight=False, emoji=False)


def _wrapped(width: int, text: Text | str, indent: int = 2) -> list[Text]:
    """A paragraph wrapped to `width`, its lines indented, as `_para` prints it."""
    paragraph = text if isinstance(text, Text) else Text(text)
    return [Text(" " * indent) + line for line in paragraph.wrap(_MEASURE, max(1, width - indent))]


def _code_frame(finding: Finding) -> list[Text]:
    """The finding's lines with two above; a one-line span underlined. Not wrapped: long lines
    end in an ellipsis at the edge."""
    span = finding.span
    first = max(1, span.line - _CONTEXT)
    count, lines = frame_lines(finding.path, first, min(span.end_line, span.line + 6))
    last = min(count, span.end_line, span.line + 6)
    width = len(str(last))
    rows = []
    for number in range(first, last + 1):
        code, marked = lines[number - first], span.line <= number <= span.end_line
        gutter = Text(f"  {'❱' if marked else ' '} {number:>{width}} │ ", style="bold red" if marked else "dim")
        rows.append(gutter + Text(code, style="" if marked else "dim"))
        start = max(span.column, len(code) - len(code.lstrip()) + 1)  # a whole-line span: from the code
        if marked and span.line == span.end_line and span.end_column > start:
            carets = " " * (start - 1) + "^" * (span.end_column - start)
            rows.append(Text(f"    {' ' * width} │ ", style="dim") + Text(carets, style="bold red"))
    return rows


def _fix(fix: Fix, wrap) -> list[Text]:
    summary = wrap(Text.assemble(("fix: ", "bold green"), fix.summary))
    if not fix.diff:
        return summary
    return summary + [Text(f"    {line}", style={"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "dim"))
                      for line in fix.diff.splitlines()[2:]]  # the ---/+++ header names the file shown above


def _verification(console: Console, verification: Verification) -> None:
    console.print()
    console.rule(Text(f"changes since {verification.baseline}", style="bold"), align="left", characters="─")
    console.print(Text(f"findings: {verification.findings_before} → {verification.findings_after}"))
    for delta in verification.targets:
        head = Text(delta.name, style="bold")
        if delta.graphs_before is None:
            head.append(" (new target)", style="dim")
        elif delta.graphs_after is None:
            head.append(" (not run this time)", style="dim")
        before = sum(b.before for b in delta.fixed + delta.remaining)
        after = sum(b.after for b in delta.new + delta.remaining)
        head.append(f": graphs {_count(delta.graphs_before)} → {_count(delta.graphs_after)}, "
                    f"breaks {delta.breaks_before} → {delta.breaks_after} (occurrences {before} → {after})")
        console.print(head)
        for label, style, items in (("fixed", "green", delta.fixed), ("new", "bold red", delta.new),
                                    ("still", "yellow", delta.remaining)):
            for item in items:
                console.print(Text(f"  {label:<5} ", style=style) + Text(delta_text(item)))


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _rule_table(findings: list[Finding], confirming: bool) -> Table:
    """Findings per rule; split by what confirmation made of them when something was confirmed."""
    table = Table(title="findings by rule", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  show_edge=False)
    table.add_column("rule")
    table.add_column("name", overflow="fold")
    rows = rule_rows(findings)
    library = any(row.in_library for row in rows)
    columns = ("confirmed", "lint-only", "missed", *(["in a library"] if library else [])) if confirming \
        else ("findings",)
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        counts = (row.confirmed, row.lint_only, row.missed, *([row.in_library] if library else [])) if confirming \
            else (row.confirmed + row.lint_only,)
        table.add_row(row.rule, row.name, *map(str, counts))
    return table
