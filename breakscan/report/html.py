"""`--format html`: one self-contained page (inline CSS, inline SVG, no script, nothing fetched).

Per file: the headline, each target's chain of graphs and breaks drawn as SVG (break boxes link
to their findings), the ops of each graph, the findings with code frames, GB-id links and fixes
as diffs, and the file's source with break lines marked and linked to their findings.
"""

from __future__ import annotations

import os
import re
from html import escape

from breakscan.model import Finding, Report, TargetResult, Verification
from breakscan.report.graph import EXPORTERS, BreakNode, GraphNode, TargetChain, short_label
from breakscan.report.html_style import CSS
from breakscan.report.links import gb_url
from breakscan.report.sources import frame_lines, source_lines
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
    rule_rows,
)

_SVG_WIDTH, _BOX_HEIGHT, _GAP = 760, 46, 24
_SVG_NODES = 80  # a longer chain shows its start and end
_OPS_SHOWN = 120  # characters of an op list shown before it folds
_SOURCE_LINES = 3000  # a longer file shows only the lines around its findings
_WINDOW = 6
_HINTS = 2  # Dynamo's own hints shown for a break no rule explains


def render(report: Report, options) -> str:
    view = overview(report)
    main = [f'<p class="status-confirmed">{escape(_where(e))}: {escape(e.message)}</p>' for e in report.errors]
    main += [_section(view, section, number, options) for number, section in enumerate(view.sections, 1)]
    if report.findings:
        main.append(_rule_table(report.findings))
    if report.verification is not None:
        main.append(_verification(report.verification))
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>breakscan report</title><style>{CSS}</style></head>\n<body>\n{_header(report)}\n"
            + "<main>\n" + "\n".join(main) + "\n</main>\n</body></html>\n")


def _prose(text: str) -> str:
    """Escaped text with `backticked` spans as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def _where(error) -> str:
    return f"{error.path}:{error.line}" if error.line else error.path


def _header(report: Report) -> str:
    parts = [f"breakscan {report.version}"]
    if report.torch_version:
        parts.append(f"torch {report.torch_version}")
    devices = sorted({t.device for t in report.targets if t.device})
    parts += [f"on {', '.join(devices)}"] if devices else []
    confirmed = Counts.of(report.findings).confirmed
    parts.append(f"{plural(len(report.findings), 'finding')}, {confirmed} confirmed, {plural(report.files, 'file')}, "
                 f"{plural(len(report.targets), 'target')}")
    return f'<header><h1>Graph breaks</h1><p class="meta">{escape(" · ".join(parts))}</p></header>'


# -- one file --------------------------------------------------------------------------------
def _section(view: Overview, section: FileSection, number: int, options) -> str:
    counts = view.counts(section)
    parts = [f'<section class="file" id="file{number}"><h2>{escape(section.path)}</h2>']
    if counts.findings:
        parts.append(f"<p>{plural(counts.findings, 'finding')}: {escape(counts.confirmation())}</p>")
    parts += [_target(chain, f"{number}-{index}", options) for index, chain in enumerate(section.chains, 1)]
    for group in view.groups(section, options.max_per_rule):
        total = len(group.shown) + len(group.hidden)
        parts.append(f"<h3>{escape(group.rule)} {escape(group.name)} · {plural(total, 'finding')}</h3>")
        parts += [_finding(view, index, number) for index in group.shown]
        if group.hidden:  # still in the page (the source links to them), folded away
            parts += [f"<details><summary>{len(group.hidden)} more</summary>",
                      *[_finding(view, index, number) for index in group.hidden], "</details>"]
    parts.append(_source(view, section, number))
    return "\n".join(parts + ["</section>"])


def _target(chain: TargetChain, key: str, options) -> str:
    target = chain.target
    head = f"<h3>target <code>{escape(target.name)}</code>: "
    if target.status != "ok":
        return head + f'<span class="status-confirmed">{escape(target.status)}</span></h3>' \
                      f"<pre>{escape(target.error or 'no details')}</pre>"
    details = " · ".join(d for d in (recompile_counts(target), device_label(target),
                                     f"torch {target.torch_version}" if target.torch_version else "",
                                     f"{target.wall_time:.1f} s") if d)
    head += f'{escape(break_counts(target))} <span class="muted">· {escape(details)}</span></h3>'
    parts = [head, _svg(chain, key)] if chain.nodes else [head]
    if chain.graphs:
        rows = "".join(f"<tr><td>Graph {g.number}</td><td class=\"num\">{g.op_count}</td><td>{escape(g.line_range)}"
                       f"</td><td class=\"ops\">{_ops_cell(g.ops)}</td></tr>" for g in chain.graphs)
        parts.append(f"<details><summary>ops per graph</summary><table><tr><th>graph</th><th class=\"num\">ops</th>"
                     f"<th>source</th><th>ops, in order</th></tr>{rows}</table></details>")
    if target.recompiles or any(g.recompiled for g in target.graphs):
        parts.append(_recompile_timeline(target))
    if options.graph_format:
        picture = EXPORTERS[options.graph_format](chain)
        parts.append(f"<details><summary>{options.graph_format}</summary><pre>{escape(picture)}</pre></details>")
    return "\n".join(parts)


def _recompile_timeline(target: TargetResult) -> str:
    """The graphs in the order they were compiled, recompilations marked, each with its compile
    time; then each guard that made the target recompile, with what to do about it."""
    steps = "".join(
        f'<li class="{"recompiled" if g.recompiled else "compiled"}">{"↻ " if g.recompiled else ""}Graph {g.index + 1}'
        f' <span class="muted">{g.compile_time:.2f} s</span></li>' for g in target.graphs)
    guards = "".join(
        f"<tr><td>{escape(os.path.basename(r.path))}:{r.line}</td><td><code>{escape(r.guard)}</code></td>"
        f'<td class="num">{r.count}</td><td>{"limit hit: runs eagerly" if r.limit_hit else ""}</td>'
        f"<td>{escape(r.reason)}</td></tr>" for r in target.recompiles)
    table = (f"<table><tr><th>guarded line</th><th>guard that failed</th><th class=\"num\">recompiles</th>"
             f"<th></th><th>what to do</th></tr>{guards}</table>") if guards else ""
    return (f'<details open><summary>compile timeline ({target.compile_count} compiles, '
            f'{target.compile_time:.2f} s)</summary><ol class="timeline">{steps}</ol>{table}</details>')


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def op_summary(ops: tuple[str, ...] | list[str], size: int) -> str:
    """`linear, gelu, … +41 more`: as many whole op names as fit in `size` characters, then how many
    are left out; never an op cut in the middle."""
    text = ", ".join(ops)
    if len(text) <= size:
        return text
    shown: list[str] = []
    for count, op in enumerate(ops):
        rest = f", … +{len(ops) - count - 1} more" if count < len(ops) - 1 else ""
        if len(", ".join([*shown, op]) + rest) > size:
            break
        shown.append(op)
    return f"{', '.join(shown)}, … +{len(ops) - len(shown)} more" if shown else f"… {len(ops)} ops"


def _ops_cell(ops: tuple[str, ...]) -> str:
    """The ops of a graph in the table: all of them, folded behind a summary when they are many."""
    summary = op_summary(ops, _OPS_SHOWN)
    if summary == ", ".join(ops):
        return escape(summary)
    return f"<details><summary>{escape(summary)}</summary>{escape(', '.join(ops))}</details>"


def _svg(chain: TargetChain, key: str) -> str:
    nodes: list = list(chain.nodes)
    if len(nodes) > _SVG_NODES:
        hidden = nodes[_SVG_NODES - 10:-10]
        nodes = [*nodes[:_SVG_NODES - 10], f"… {len(hidden)} more graphs and breaks …", *nodes[-10:]]
    step = _BOX_HEIGHT + _GAP
    height = len(nodes) * step - _GAP + 4
    parts = [f'<svg class="chain" xmlns="http://www.w3.org/2000/svg" width="{_SVG_WIDTH}" height="{height}" '
             f'viewBox="0 0 {_SVG_WIDTH} {height}" role="img" aria-label="graphs and breaks of '
             f'{escape(chain.target.name)}">',
             f'<defs><marker id="arrow{key}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8a949e"/></marker></defs>']
    for position, node in enumerate(nodes):
        top = 2 + position * step
        if position:
            parts.append(f'<line x1="{_SVG_WIDTH // 2}" y1="{top - _GAP}" x2="{_SVG_WIDTH // 2}" y2="{top - 2}" '
                         f'stroke="#8a949e" stroke-width="1.5" marker-end="url(#arrow{key})"/>')
        parts.append(_svg_node(node, top))
    return "\n".join(parts + ["</svg>"])


def _svg_node(node, top: int) -> str:
    width = _SVG_WIDTH - 4
    if isinstance(node, str):
        return (f'<g class="gap"><text x="{_SVG_WIDTH // 2}" y="{top + 27}" text-anchor="middle">'
                f"{escape(node)}</text></g>")
    if isinstance(node, GraphNode):
        kind, title, detail = "graph", short_label(node), op_summary(node.ops, 96)
    elif isinstance(node, BreakNode):
        kind, title, detail = "break", short_label(node), node.code
    else:
        kind, title, detail = "eager", short_label(node), node.why
    box = (f'<g class="{kind}"><rect x="2" y="{top}" width="{width}" height="{_BOX_HEIGHT}" rx="8"/>'
           f'<text x="14" y="{top + 19}" font-weight="600">{escape(_clip(title, 92))}</text>'
           f'<text x="14" y="{top + 37}" fill="#5f6b76">{escape(_clip(detail, 96))}</text></g>')
    if isinstance(node, BreakNode) and node.finding is not None:
        return f'<a href="#f{node.finding}">{box}</a>'
    return box


def _finding(view: Overview, index: int, file_number: int) -> str:
    finding = view.report.findings[index]
    brk = view.breaks.get(index)
    target = f' <span class="muted">{escape(confirmations(view.report, finding))}</span>' if finding.breaks else ""
    line_link = f"#s{file_number}-L{finding.line}"
    parts = [f'<article class="finding {finding.status}" id="f{index}">',
             f'<h4><a href="{line_link}">{escape(os.path.basename(finding.path))}:{finding.line}:'
             f'{finding.span.column}</a> {escape(finding.rule)} {escape(finding.name)} · '
             f'<span class="status-{finding.status}">{finding.status}</span>{target}</h4>',
             f"<p>{_prose(finding.message)}</p>"]
    origin = library_origin(finding)
    if origin:
        parts.append(f'<p class="muted">{escape(origin)}</p>')
    chain = call_chain(finding, brk)
    if chain:
        parts.append(f'<p class="muted">chain: {escape(chain)}</p>')
    parts.append(_frame(finding))
    gb_ids = finding.gb_ids or ((brk.gb_id,) if brk and brk.gb_id else ())
    links = " ".join(f'<a href="{escape(gb_url(g) or "")}">{escape(g)}</a>' for g in gb_ids if gb_url(g))
    if links:
        parts.append(f"<p>PyTorch graph-break registry: {links}</p>")
    if brk and finding.status == "dynamic-only":
        parts += [f"<p>why: {_prose(brk.explanation)}</p>"] if brk.explanation else []
        parts += [f"<p>hint: {_prose(hint)}</p>" for hint in brk.hints[:_HINTS]]
    if finding.fix is not None:
        parts.append(f'<div class="fix"><p><strong>fix:</strong> {_prose(finding.fix.summary)}</p>'
                     f"{_diff(finding.fix.diff) if finding.fix.diff else ''}</div>")
    return "\n".join(parts + ["</article>"])


def _frame(finding: Finding) -> str:
    span = finding.span
    first = max(1, span.line - 2)
    count, lines = frame_lines(finding.path, first, min(span.end_line, span.line + 6))
    last = min(count, span.end_line, span.line + 6)
    rows = []
    for number in range(first, last + 1):
        hit = ' class="hit"' if span.line <= number <= span.end_line else ""
        rows.append(f"<span{hit}>{number:>5}  {escape(lines[number - first])}</span>")
    return f'<pre class="frame">{chr(10).join(rows)}</pre>' if rows else ""


def _diff(diff: str) -> str:
    rows = []
    for line in diff.splitlines():
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
        kind = "" if line.startswith(("+++", "---")) else kind
        rows.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line))
    return f'<pre class="diff">{chr(10).join(rows)}</pre>'


def _source(view: Overview, section: FileSection, number: int) -> str:
    lines = source_lines(section.path)
    if not lines:
        return ""
    findings = view.report.findings
    marks: dict[int, list[int]] = {}
    for index in section.findings:
        marks.setdefault(findings[index].line, []).append(index)
    graphs: dict[int, list[str]] = {}
    # With several targets, each graph mark names its target (T1, T2... listed in the summary).
    several = len(section.chains) > 1
    for position, chain in enumerate(section.chains, 1):
        for graph in chain.graphs:
            if graph.path and os.path.realpath(graph.path) == os.path.realpath(section.path):
                for line in graph.lines:
                    graphs.setdefault(line, []).append(f"T{position}:G{graph.number}" if several
                                                       else f"G{graph.number}")
    shown = range(1, len(lines) + 1)
    if len(lines) > _SOURCE_LINES:
        shown = sorted({n for line in marks for n in range(line - _WINDOW, line + _WINDOW + 1) if 1 <= n <= len(lines)})
    rows, previous = [], 0
    for line in shown:
        if line != previous + 1:
            rows.append('<span class="row muted">     …</span>')
        previous = line
        rows.append(_source_row(line, lines[line - 1], marks.get(line, []), graphs.get(line, []), findings, number))
    legend = "G<i>n</i> marks lines that graph <i>n</i> computes"
    if several:
        targets = ", ".join(f"T{n} = {escape(chain.target.name)}" for n, chain in enumerate(section.chains, 1))
        legend = f"T<i>t</i>:G<i>n</i> marks lines that graph <i>n</i> of target <i>t</i> computes; {targets}"
    return (f"<details open><summary>source of {escape(os.path.basename(section.path))} (✗ marks a finding; "
            f"{legend})</summary><pre class=\"source\">" + "".join(rows) + "</pre></details>")


def _source_row(line: int, text: str, hits: list[int], graphs: list[str], findings: list[Finding],
                file_number: int) -> str:
    if hits:
        statuses = {findings[i].status for i in hits}
        status = "confirmed" if "confirmed" in statuses else sorted(statuses)[0]
        tag = " ".join(f'<a href="#f{i}" title="{escape(findings[i].rule)}">✗{escape(findings[i].rule)}</a>'
                       for i in hits[:2])
        css = f"row hit {status}"
    else:
        tag, css = escape(" ".join(dict.fromkeys(graphs))), "row"
    return (f'<span class="{css}" id="s{file_number}-L{line}"><span class="ln">{line}</span>'
            f'<span class="tag">{tag}</span>{escape(text)}</span>')


def _rule_table(findings: list[Finding]) -> str:
    rows = rule_rows(findings)
    library = any(r.in_library for r in rows)
    cells = "".join(f"<tr><td>{escape(r.rule)}</td><td>{escape(r.name)}</td><td class=\"num\">{r.confirmed}</td>"
                    f"<td class=\"num\">{r.lint_only}</td><td class=\"num\">{r.missed}</td>"
                    + (f"<td class=\"num\">{r.in_library}</td>" if library else "") + "</tr>" for r in rows)
    return ('<section class="box"><h2>Findings by rule</h2><table><tr><th>rule</th><th>name</th>'
            '<th class="num">confirmed</th><th class="num">lint-only</th><th class="num">missed</th>'
            + ('<th class="num">in a library</th>' if library else "") + f"</tr>{cells}</table></section>")


def _verification(verification: Verification) -> str:
    parts = [f'<section class="box"><h2>Changes since {escape(verification.baseline)}</h2>',
             f"<p>findings: {verification.findings_before} → {verification.findings_after}</p>"]
    for delta in verification.targets:
        before = "-" if delta.graphs_before is None else delta.graphs_before
        after = "-" if delta.graphs_after is None else delta.graphs_after
        parts.append(f"<h3><code>{escape(delta.name)}</code>: graphs {before} → {after}, "
                     f"breaks {delta.breaks_before} → {delta.breaks_after}</h3><table>")
        for label, css, items in (("fixed", "add", delta.fixed), ("new", "del", delta.new),
                                  ("still", "", delta.remaining)):
            parts += [f'<tr><td class="{css}">{label}</td><td>{escape(delta_text(i))}</td></tr>' for i in items]
        parts.append("</table>")
    return "\n".join(parts + ["</section>"])
