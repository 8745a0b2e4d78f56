"""The picture of one target's run, as TorchDynamo made it: the graphs it captured in execution
order, the breaks between them, and the stretches that ran eagerly because a frame was skipped.

Built as a networkx DiGraph (one path: node -> next node) and exported as JSON (in the JSON
report), DOT and Mermaid (`--graph-format`). Graphs come in compile order, which is execution
order; breaks are merged by site (with a count) and placed where their first occurrence happened,
as the capture recorded it (`Break.graphs_before`); for a break without that record (a report
made by hand) the place is inferred from source positions along its stack (see `_relation`).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING

from breakscan.model import Break, Finding, Frame, GraphInfo, LibraryFrame, TargetResult
from breakscan.report.links import gb_url
from breakscan.report.sources import call_lines, function_at, line_text

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class GraphNode:
    id: str
    number: int  # 1-based, as shown
    op_count: int
    ops: tuple[str, ...]
    path: str | None
    lines: tuple[int, ...]
    recompiled: bool = False  # compiled again after a guard failed (the same code, another graph)

    @property
    def line_range(self) -> str:
        if not self.lines:
            return "no source lines"
        first, last = min(self.lines), max(self.lines)
        return f"line {first}" if first == last else f"lines {first}-{last}"


@dataclass(frozen=True)
class BreakNode:
    id: str
    brk: Break
    rule: str | None  # the finding that explains it (None: no finding in this report)
    finding: int | None  # its index in report.findings
    code: str  # the user's line, stripped

    @property
    def location(self) -> str:
        """`at m.py:14`; inside a library `in vqlib at codebook.py:13, reached from m.py:14`."""
        here = f"{os.path.basename(self.brk.path)}:{self.brk.line}"
        library = self.brk.library
        if library is None:
            return f"at {here}"
        return f"in {library.package} at {os.path.basename(library.path)}:{library.line}, reached from {here}"


@dataclass(frozen=True)
class EagerNode:
    """Code Dynamo did not compile: the rest of a frame it skipped after a break."""

    id: str
    path: str
    function: str
    first_line: int
    last_line: int
    why: str


Node = GraphNode | BreakNode | EagerNode


@dataclass
class TargetChain:
    target: TargetResult
    nodes: list[Node]
    digraph: nx.DiGraph

    @property
    def graphs(self) -> list[GraphNode]:
        return [n for n in self.nodes if isinstance(n, GraphNode)]

    @property
    def breaks(self) -> list[BreakNode]:
        return [n for n in self.nodes if isinstance(n, BreakNode)]


def _same_file(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and os.path.realpath(a) == os.path.realpath(b)


def _user_frames(brk: Break) -> list[Frame]:
    """The stack from the compiled frame down to the break's own line (library frames it called
    are left out)."""
    frames = list(brk.stack)
    site = next((i for i in range(len(frames) - 1, -1, -1)
                 if _same_file(frames[i].path, brk.path) and frames[i].line == brk.line), None)
    return frames[: site + 1] if site is not None else [Frame(brk.path, brk.line, "")]


def _lines_in(graph: GraphInfo, frame: Frame) -> list[int]:
    """The graph's lines inside the function `frame` is in."""
    function = function_at(frame.path, frame.line) if _same_file(frame.path, graph.path) else None
    return [line for line in graph.lines if function and function.first_line <= line <= function.last_line]


def _called_at(graph: GraphInfo, frame: Frame) -> list[int]:
    """Where the frame's function calls the function the graph's ops are in (a helper that ran
    as a frame of its own: its graph is placed at the call)."""
    if not graph.lines or not _same_file(frame.path, graph.path):
        return []
    caller, callee = function_at(frame.path, frame.line), function_at(graph.path, min(graph.lines))
    return list(call_lines(frame.path, caller, callee.name)) if caller and callee and callee != caller else []


def _relation(graph: GraphInfo, brk: Break) -> int | None:
    """-1 if the graph ran before the break, +1 after, 0 if all its lines are on the break's own
    line, None if its lines do not tell.

    Judged in the innermost frame whose function the graph has lines in: a graph with a line
    past the frame's line there ran after (the code after a break runs after it, or in a later
    loop turn); otherwise before. A graph of a helper the frame calls is judged by the line of
    the call. When the break made Dynamo skip its frame, only that frame's own function is
    judged: the functions it calls run, and compile as frames of their own, later.
    """
    frames = _user_frames(brk)
    judged = frames[:1] if brk.frame_skipped else frames
    for depth, frame in enumerate(reversed(judged)):
        inside = _lines_in(graph, frame)
        if inside:
            on_site = depth == 0 and min(inside) == frame.line
            return 1 if max(inside) > frame.line else (0 if on_site else -1)
    if brk.frame_skipped and any(_lines_in(graph, frame) for frame in frames[1:]):
        return 1
    for frame in reversed(judged):
        calls = _called_at(graph, frame)
        if calls:
            return 1 if min(calls) > frame.line else -1
    return None


def _position(graphs: tuple[GraphInfo, ...], brk: Break) -> int:
    """How many graphs ran before the break's first occurrence: those before the first graph
    that certainly ran after it, up to the last that certainly ran before it. Of the graphs that
    lie on the break's line alone, the first led up to the break and the others resumed after it
    (`y = x * 2 + t.item()`: the multiplication, then the addition)."""
    relations = [_relation(g, brk) for g in graphs]
    ties = [i for i, r in enumerate(relations) if r == 0]
    relations = [(-1 if i == ties[0] else 1) if r == 0 else r for i, r in enumerate(relations)]
    after = [i for i, r in enumerate(relations) if r == 1]
    first_after = min(after) if after else len(graphs)
    before = [i for i, r in enumerate(relations) if r == -1 and i < first_after]
    return max(before) + 1 if before else first_after


def _explaining_finding(findings: list[Finding], target: int, index: int) -> int | None:
    """The finding the fuser matched to this break: one naming it at its own site first, then one
    on its chain."""
    matched = [(not ref.at_site, position) for position, finding in enumerate(findings)
               for ref in finding.breaks if (ref.target, ref.index) == (target, index)]
    return min(matched)[1] if matched else None


def _eager_after(brk: Break, number: int) -> EagerNode | None:
    """A skipped frame runs eagerly: the function Dynamo was compiling (the stack's first frame)."""
    if not brk.frame_skipped:
        return None
    frame = brk.stack[0] if brk.stack else None
    function = function_at(frame.path, frame.line) if frame else None
    if function is None:
        return None
    return EagerNode(f"e{number}", frame.path, frame.function, function.first_line, function.last_line,
                     "Dynamo skipped the whole frame after this break")


def build_chain(target: TargetResult, findings: list[Finding], target_index: int) -> TargetChain:
    """`target_index`: the target's place in the report, which the findings' `breaks` refer to."""
    placed: dict[int, list[tuple[int, Break]]] = defaultdict(list)
    position = 0
    for break_index, brk in enumerate(target.breaks):  # first-seen order: positions never go back
        recorded = brk.graphs_before if brk.graphs_before is not None else _position(target.graphs, brk)
        position = max(position, min(recorded, len(target.graphs)))
        placed[position].append((break_index, brk))
    nodes: list[Node] = []
    numbers = count(1)
    for index in range(len(target.graphs) + 1):
        for break_index, brk in placed[index]:
            number, found = next(numbers), _explaining_finding(findings, target_index, break_index)
            where = (brk.library.path, brk.library.line) if brk.library else (brk.path, brk.line)
            nodes.append(BreakNode(f"b{number}", brk, findings[found].rule if found is not None else None, found,
                                   line_text(*where).strip()))
            nodes += filter(None, [_eager_after(brk, number)])
        if index < len(target.graphs):
            graph = target.graphs[index]
            nodes.append(GraphNode(f"g{index + 1}", index + 1, graph.op_count, graph.ops, graph.path, graph.lines,
                                   graph.recompiled))
    import networkx as nx  # only where targets ran: a static report never needs it

    digraph = nx.DiGraph(name=target.name)
    for node in nodes:
        digraph.add_node(node.id, node=node)
    nx.add_path(digraph, [n.id for n in nodes])
    return TargetChain(target, nodes, digraph)


def build_chains(targets: list[TargetResult], findings: list[Finding]) -> list[TargetChain]:
    return [build_chain(t, findings, index) for index, t in enumerate(targets)]


# -- export ----------------------------------------------------------------------------------
def node_dict(node: Node) -> dict:
    if isinstance(node, GraphNode):
        return {"id": node.id, "kind": "graph", "number": node.number, "op_count": node.op_count,
                "ops": list(node.ops), "path": node.path, "lines": list(node.lines)}
    if isinstance(node, BreakNode):
        brk = node.brk
        return {"id": node.id, "kind": "break", "path": brk.path, "line": brk.line, "gb_id": brk.gb_id,
                "gb_type": brk.gb_type, "url": gb_url(brk.gb_id), "rule": node.rule, "finding": node.finding,
                "count": brk.count, "frame_skipped": brk.frame_skipped, "reason": brk.reason, "code": node.code,
                "library": library_dict(brk.library)}
    return {"id": node.id, "kind": "eager", "path": node.path, "function": node.function,
            "first_line": node.first_line, "last_line": node.last_line, "why": node.why}


def library_dict(library: LibraryFrame | None) -> dict | None:
    if library is None:
        return None
    return {"package": library.package, "path": library.path, "line": library.line, "function": library.function}


def chain_dict(chain: TargetChain) -> dict:
    return {"nodes": [node_dict(n) for n in chain.nodes], "edges": [list(edge) for edge in chain.digraph.edges]}


def short_label(node: Node) -> str:
    """One line per node, shared by the DOT, Mermaid and terminal pictures."""
    if isinstance(node, GraphNode):
        ops = "1 op" if node.op_count == 1 else f"{node.op_count} ops"
        again = "recompiled, " if node.recompiled else ""
        return f"Graph {node.number} ({again}{ops}, {node.line_range})"
    if isinstance(node, BreakNode):
        parts = [p for p in (node.brk.gb_id, f"×{node.brk.count}" if node.brk.count > 1 else None) if p]
        rule = f"{node.rule} " if node.rule else ""
        return f"✗ {rule}{node.location}" + (f" ({', '.join(parts)})" if parts else "")
    return f"eager: {node.function} (lines {node.first_line}-{node.last_line})"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(chain: TargetChain) -> str:
    lines = [f'digraph "{_dot_text(chain.target.name)}" {{', "  rankdir=TB;", '  node [fontname="Helvetica"];']
    for node in chain.nodes:
        if isinstance(node, GraphNode):
            style = "shape=box, style=rounded"
        elif isinstance(node, BreakNode):
            style = "shape=octagon, color=red, fontcolor=red"
        else:
            style = "shape=note, style=dashed"
        lines.append(f'  {node.id} [{style}, label="{_dot_text(short_label(node))}"];')
    lines += [f"  {a} -> {b};" for a, b in chain.digraph.edges]
    return "\n".join(lines + ["}"]) + "\n"


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;")


def to_mermaid(chain: TargetChain) -> str:
    lines = ["flowchart TD"]
    for node in chain.nodes:
        label = _mermaid_text(short_label(node))
        shape = {GraphNode: '["{}"]', BreakNode: '{{{{"{}"}}}}', EagerNode: '[/"{}"/]'}[type(node)]
        lines.append(f"  {node.id}{shape.format(label)}")
    lines += [f"  {a} --> {b}" for a, b in chain.digraph.edges]
    return "\n".join(lines) + "\n"


EXPORTERS = {"dot": to_dot, "mermaid": to_mermaid}
