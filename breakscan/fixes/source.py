"""One file prepared for refactoring: its libcst tree with positions and parents, and the lookups
the suggesters share (the nodes a finding's span points at, enclosing functions, indentation).

Spans from a rule point at the construct itself; a break no rule predicted (BS000) only has its
line. Lookups therefore take "nodes that start inside the span", outermost first, which serves
both.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from breakscan.lint.names import import_bindings
from breakscan.model import Span


class SourceModule:
    """Positions and parents are resolved per top-level statement, only for the statements a
    lookup touches: a big file with one finding costs little more than its parse."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.module = cst.parse_module(text)
        self._positions: dict[cst.CSTNode, Span] = {}
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._indexes: dict[int, tuple[list[tuple[int, int]], list[cst.CSTNode]]] = {}
        # (first line, last line) of each top-level statement's text, leading comments included.
        self._chunks: list[tuple[int, int]] = []
        line = 1 + len(self.module.header)
        for statement in self.module.body:
            size = self.module.code_for_node(statement).count("\n")
            self._chunks.append((line, line + max(size, 1) - 1))
            line += size

    # -- positions ---------------------------------------------------------------------------
    def _resolve(self, number: int) -> tuple[list[tuple[int, int]], list[cst.CSTNode]]:
        """Positions and parents of one top-level statement's nodes, and its nodes by start."""
        if number not in self._indexes:
            statement = self.module.body[number]
            alone = self.module.with_changes(body=[statement], header=[], footer=[])
            wrapper = MetadataWrapper(alone, unsafe_skip_copy=True)
            offset = self._chunks[number][0] - 1
            for node, code_range in wrapper.resolve(PositionProvider).items():
                self._positions[node] = Span(code_range.start.line + offset, code_range.start.column + 1,
                                             code_range.end.line + offset, code_range.end.column + 1)
            for node, parent in wrapper.resolve(ParentNodeProvider).items():
                self._parents[node] = self.module if parent is alone else parent
            nodes = sorted((n for n in wrapper.resolve(PositionProvider) if n is not alone), key=self._order)
            self._indexes[number] = ([(self._positions[n].line, self._positions[n].column) for n in nodes], nodes)
        return self._indexes[number]

    def _order(self, node: cst.CSTNode) -> tuple:
        """Source order, the outer of two nodes starting together first."""
        span = self._positions[node]
        return span.line, span.column, -span.end_line, -span.end_column

    def span(self, node: cst.CSTNode) -> Span:
        if node not in self._positions and node in self.module.body:
            self._resolve(self.module.body.index(node))
        return self._positions[node]

    def nodes_in(self, span: Span, predicate: Callable[[cst.CSTNode], bool]) -> list[cst.CSTNode]:
        """Nodes starting inside `span` that satisfy `predicate`: an exact match of the span
        first, then outermost first in source order."""
        found = []
        for number, (first, last) in enumerate(self._chunks):
            if first <= span.end_line and span.line <= last:
                starts, nodes = self._resolve(number)
                low = bisect.bisect_left(starts, (span.line, span.column))
                high = bisect.bisect_right(starts, (span.end_line, span.end_column - 1))
                found += [node for node in nodes[low:high] if predicate(node)]
        return sorted(found, key=lambda node: self.span(node) != span)

    def first_in(self, span: Span, predicate: Callable[[cst.CSTNode], bool]) -> cst.CSTNode | None:
        found = self.nodes_in(span, predicate)
        return found[0] if found else None

    # -- structure ---------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        if node not in self._parents and node in self.module.body:
            self._resolve(self.module.body.index(node))
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def enclosing(self, node: cst.CSTNode, kind: type | tuple[type, ...]) -> cst.CSTNode | None:
        return next((a for a in self.ancestors(node) if isinstance(a, kind)), None)

    def statement(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement holding `node` (the node itself when it is one)."""
        if isinstance(node, cst.BaseStatement):
            return node
        return self.enclosing(node, cst.BaseStatement)

    def function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return self.enclosing(node, cst.FunctionDef)

    def method_of(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class `function` is a method of, if it is one (not a function nested in one)."""
        parent = self.parent(function)
        parent = self.parent(parent) if isinstance(parent, cst.IndentedBlock) else parent
        return parent if isinstance(parent, cst.ClassDef) else None

    def is_top_level(self, statement: cst.CSTNode) -> bool:
        return statement in self.module.body

    @cached_property
    def bindings(self) -> dict[str, str]:
        """Local name -> qualified name, from the module's top-level imports."""
        found: dict[str, str] = {}
        for statement in self.module.body:
            for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    found.update(import_bindings(small, ""))
        return found

    # -- text --------------------------------------------------------------------------------
    def code(self, node: cst.CSTNode) -> str:
        """The node's own source text (a statement's without its leading comments)."""
        span = self.span(node)
        if span.line == span.end_line:
            return self.lines[span.line - 1][span.column - 1:span.end_column - 1]
        head = self.lines[span.line - 1][span.column - 1:]
        middle = self.lines[span.line:span.end_line - 1]
        tail = self.lines[span.end_line - 1][:span.end_column - 1]
        return head + "".join(middle) + tail

    def indent(self, line: int) -> str:
        text = self.lines[line - 1]
        return text[: len(text) - len(text.lstrip(" \t"))]

    @property
    def indent_unit(self) -> str:
        return self.module.default_indent

    def reindented(self, statement: cst.CSTNode, indent: str) -> str | None:
        """The statement's lines moved to `indent`; None when a string spans lines (re-indenting
        would change its value)."""
        span = self.span(statement)
        strings = self.nodes_in(span, lambda n: isinstance(n, (cst.SimpleString, cst.FormattedString)))
        if any(self.span(s).line != self.span(s).end_line for s in strings):
            return None
        old = self.indent(span.line)
        lines = self.lines[span.line - 1:span.end_line]
        return "".join(indent + line.removeprefix(old) if line.strip() else line for line in lines)

    def line_range(self, node: cst.CSTNode) -> Span:
        """Whole lines holding `node`, newline included: replacing it replaces those lines."""
        span = self.span(node)
        return Span(span.line, 1, span.end_line + 1, 1)
