"""One file prepared for refactoring: its libcst tree with positions and parents, and the lookups
the suggesters share (the nodes a finding's span points at, enclosing functions, indentation).

Spans from a rule point at the construct itself; a break no rule predicted (BS000) only has its
line. Lookups therefore take "nodes that start inside the span", outermost first, which serves
both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property

import libcst as cst

from breakscan.lint.names import import_bindings
from breakscan.lint.parse import parse_module
from breakscan.lint.positions import ModulePositions
from breakscan.model import Span


class SourceModule:
    """Positions and parents are resolved per top-level statement, only for the statements a
    lookup touches: a big file with one finding costs little more than its parse. Built on the
    lint's own parse of the file (its tree and positions) when there is one."""

    def __init__(self, path: str, text: str, module: cst.Module | None = None,
                 positions: ModulePositions | None = None):
        self.path = path
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.module = module if module is not None else parse_module(text)
        self.positions = positions if positions is not None else ModulePositions(self.module, text)

    # -- positions ---------------------------------------------------------------------------
    @cached_property
    def _chunks(self) -> list[tuple[int, int]]:
        """(first line, last line) of the text around each top-level statement, the lines between
        two statements (comments, blank lines) in both: the statements a range of lines may hold
        nodes of."""
        lines = self.positions.statement_lines
        if lines is None:  # all statements are resolved at once
            return [(1, len(self.lines) + 1)] * len(self.module.body)
        found = [lines[id(statement)] for statement in self.module.body]
        ends = [0] + [statement.end for statement in found]
        starts = [statement.first for statement in found[1:]] + [len(self.lines) + 2]
        return [(end + 1, start - 1) for end, start in zip(ends, starts)]

    def whole_statements(self, first: int, last: int) -> tuple[int, int]:
        """The lines of the top-level statements (and the blank or comment lines around them)
        that lines `first`..`last` touch; `last` = `first` - 1 stands for the point before `first`."""
        touched = [(start, end) for start, end in self._chunks if start <= max(first, last) and min(first, last) <= end]
        if not touched:
            return max(1, min(first, last)), min(len(self.lines), max(first, last))
        return max(1, min(start for start, _ in touched)), min(len(self.lines), max(end for _, end in touched))

    def span(self, node: cst.CSTNode) -> Span:
        if node in self.module.body:
            self.positions.resolve(node)
        return self.positions.span(node)

    def nodes_in(self, span: Span, predicate: Callable[[cst.CSTNode], bool]) -> list[cst.CSTNode]:
        """Nodes starting inside `span` that satisfy `predicate`: an exact match of the span
        first, then outermost first in source order."""
        found = []
        resolved = set()
        for statement, (first, last) in zip(self.module.body, self._chunks):
            if first <= span.end_line and span.line <= last:
                generated = self.positions.resolve(statement)
                if id(generated) in resolved:  # the whole module, generated once
                    continue
                resolved.add(id(generated))
                found += [node for node in generated.starting_in(span) if predicate(node)]
        return sorted(found, key=lambda node: self.span(node) != span)

    def first_in(self, span: Span, predicate: Callable[[cst.CSTNode], bool]) -> cst.CSTNode | None:
        found = self.nodes_in(span, predicate)
        return found[0] if found else None

    # -- structure ---------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        if node in self.module.body:
            self.positions.resolve(node)
        return self.positions.parent(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.positions.parent(node)
        while current is not None:
            yield current
            current = self.positions.parent(current)

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
