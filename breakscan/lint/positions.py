"""Source ranges for reported nodes, computed only in files that have findings.

libcst's PositionProvider re-generates the code and builds a position object for every node (and
its MetadataWrapper walks the tree once more): about two parses' worth of work for a module. We
re-generate just the top-level statements that hold findings, note where each node's code starts
and ends in the generated tokens, and turn only the requested ones into lines and columns; each
statement is then shifted by its first line, which `ast` (16x cheaper than libcst) gives us.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import re
from collections.abc import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState

from breakscan.model import Span

# As libcst's position providers count lines.
_NEWLINE = re.compile(r"\r\n?|\n")


class ModulePositions:
    """Spans of one parsed module's nodes, computed on demand and kept with the module: the editor
    re-lints its file with the same helper modules, whose spans do not change."""

    def __init__(self, module: cst.Module, text: str):
        self.module = module
        self.text = text
        self._spans: dict[int, Span] = {}  # by id(node): the module keeps its nodes alive

    def locate(self, requests: Iterable[tuple[cst.CSTNode, cst.CSTNode]]) -> dict[int, Span]:
        """Spans keyed by `id(node)` (the requested ones among them) for (node, top-level statement
        holding it) pairs."""
        pending: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] = {}
        for node, statement in requests:
            if id(node) not in self._spans:
                pending.setdefault(id(statement), (statement, []))[1].append(node)
        if pending and self._statement_starts is None:  # `ast` could not parse what libcst did
            nodes = [node for _, in_statement in pending.values() for node in in_statement]
            self._spans.update(_generated(self.module, self.module).spans(nodes, 0))
            return self._spans
        for statement, nodes in pending.values():
            ranges = _generated(statement, self.module)
            offset = self._statement_starts[id(statement)] - ranges.spans([statement], 0)[id(statement)].line
            self._spans.update(ranges.spans(nodes, offset))
        return self._spans

    @functools.cached_property
    def _statement_starts(self) -> dict[int, int] | None:
        return _statement_lines(self.module, self.text)


def _generated(node: cst.CSTNode, module: cst.Module) -> _RangeRecorder:
    """The extents of `node` and of the nodes under it in its code, generated as part of `module`."""
    ranges = _RangeRecorder(module)
    node._codegen(ranges)
    return ranges


class _RangeRecorder(CodegenState):
    """Code generation that notes, for every node, the tokens of its code, as libcst's
    PositionProvider delimits it: the node's syntactic extent where its code generation records
    one, else everything it generated (whitespace included)."""

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.extents: dict[int, tuple[int, int]] = {}  # id(node) -> (first token, token after its last)
        self._starts: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        self.extents.setdefault(id(node), (start, len(self.tokens)))

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> _SyntacticExtent:
        return _SyntacticExtent(self, node, start_node, end_node)

    def spans(self, nodes: Iterable[cst.CSTNode], line_offset: int) -> dict[int, Span]:
        """The nodes' spans in the generated code, moved down `line_offset` lines."""
        text = "".join(self.tokens)
        ends = list(itertools.accumulate(map(len, self.tokens), initial=0))  # token index -> offset in text
        if "\r" in text:  # a "\r" token then a "\n" one count as two line breaks, as libcst counts
            to_position = functools.partial(_position_by_token, self.tokens)
        else:
            to_position = functools.partial(_position_in_text, [m.end() for m in _NEWLINE.finditer(text)], ends)
        spans = {}
        for node in nodes:
            first, after = self.extents[id(node)]
            (line, column), (end_line, end_column) = to_position(first), to_position(after)
            spans[id(node)] = Span(line + line_offset, column + 1, end_line + line_offset, end_column + 1)
        return spans


class _SyntacticExtent:
    """`with state.record_syntactic_position(node)`: the node's extent is what its body generates,
    or runs from `start_node`'s start / to `end_node`'s end."""

    __slots__ = ("recorder", "node", "start_node", "end_node", "start")

    def __init__(self, recorder: _RangeRecorder, node: cst.CSTNode, start_node: cst.CSTNode | None,
                 end_node: cst.CSTNode | None):
        self.recorder, self.node, self.start_node, self.end_node = recorder, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = len(self.recorder.tokens)

    def __exit__(self, *exception) -> None:
        extents = self.recorder.extents
        start = extents[id(self.start_node)][0] if self.start_node is not None else self.start
        end = extents[id(self.end_node)][1] if self.end_node is not None else len(self.recorder.tokens)
        extents[id(self.node)] = (start, end)


def _position_in_text(newline_ends: list[int], token_offsets: list[int], token: int) -> tuple[int, int]:
    """(1-based line, 0-based column) where token number `token` starts."""
    offset = token_offsets[token]
    breaks = bisect.bisect_right(newline_ends, offset)
    return breaks + 1, offset - (newline_ends[breaks - 1] if breaks else 0)


def _position_by_token(tokens: list[str], token: int) -> tuple[int, int]:
    line, column = 1, 0
    for value in tokens[:token]:
        segments = _NEWLINE.split(value)
        if len(segments) == 1:
            column += len(value)
        else:
            line, column = line + len(segments) - 1, len(segments[-1])
    return line, column


def _statement_lines(module: cst.Module, text: str) -> dict[int, int] | None:
    """First line of each libcst top-level statement (the `def` line for decorated ones)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    statements = iter(tree.body)
    starts: dict[int, int] = {}
    try:
        for statement in module.body:
            first = next(statements)
            if isinstance(statement, cst.SimpleStatementLine):
                for _ in statement.body[1:]:
                    next(statements)
            starts[id(statement)] = first.lineno
    except StopIteration:
        return None
    return starts
