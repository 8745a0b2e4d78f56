"""Where a parsed module's nodes are, and what holds each: for the lint's reported spans and for
the fix suggesters' lookups, computed only for the top-level statements they ask about.

libcst's PositionProvider re-generates the code and builds a position object for every node (and
its MetadataWrapper walks the tree once more, and once more for the parents): about two parses'
worth of work for a module. We re-generate just the top-level statements asked about, note where
each node's code starts and ends in the generated tokens and which node generated it, and turn
only the nodes asked for into lines and columns; each statement is then shifted by its first line,
which `ast` (16x cheaper than libcst) gives us.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst
from libcst._nodes.internal import CodegenState

from breakscan.model import Span

# As libcst's position providers count lines.
_NEWLINE = re.compile(r"\r\n?|\n")


@dataclass(frozen=True)
class StatementLines:
    """A top-level statement's lines: `first` its first decorator's (else `start`), `start` its own
    first line (the `def` line of a decorated function, as libcst places it), `end` its last."""

    first: int
    start: int
    end: int


class ModulePositions:
    """Spans and parents of one parsed module's nodes, resolved one top-level statement at a time
    and kept with the module: the editor re-lints its file with the same helper modules, and the
    fix suggesters look around the nodes the lint reported."""

    def __init__(self, module: cst.Module, text: str):
        self.module = module
        self.text = text
        self._generated: dict[int, _Generated] = {}  # by id(top-level statement), or id(module)
        self._holder: dict[int, _Generated] = {}  # id(node) -> what generated it

    def locate(self, requests: Iterable[tuple[cst.CSTNode, cst.CSTNode]]) -> dict[int, Span]:
        """Spans keyed by `id(node)` for (node, top-level statement holding it) pairs."""
        spans = {}
        for node, statement in requests:
            spans[id(node)] = self.resolve(statement).span(node)
        return spans

    def resolve(self, statement: cst.CSTNode) -> _Generated:
        """Every node of a top-level statement (the whole module when `ast` could not parse what
        libcst did), generated once."""
        lines = self.statement_lines
        root = statement if lines is not None else self.module
        generated = self._generated.get(id(root))
        if generated is None:
            generated = _Generated(root, self.module, lines[id(statement)].start if lines is not None else None)
            self._generated[id(root)] = generated
            self._holder.update(dict.fromkeys(generated.recorder.extents, generated))
        return generated

    def span(self, node: cst.CSTNode) -> Span:
        """The span of a node of a statement already resolved."""
        return self._holder[id(node)].span(node)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node holding `node` (the module for a top-level statement), if its statement was resolved."""
        if node is self.module:
            return None
        generated = self._holder.get(id(node))
        return generated.parent(node) if generated is not None else None

    @functools.cached_property
    def statement_lines(self) -> dict[int, StatementLines] | None:
        """Lines of each top-level statement, by id; None when `ast` cannot parse the text."""
        return _statement_lines(self.module, self.text)


class _Generated:
    """One top-level statement's (or the module's) code, generated, with where each node's code is."""

    def __init__(self, root: cst.CSTNode, module: cst.Module, start_line: int | None):
        self.root = root
        self.module = module
        self.recorder = _RangeRecorder(module)
        root._codegen(self.recorder)
        self._spans: dict[int, Span] = {}
        self._offset = start_line - self.recorder.extent(root)[0][0] if start_line is not None else 0

    def span(self, node: cst.CSTNode) -> Span:
        found = self._spans.get(id(node))
        if found is None:
            (line, column), (end_line, end_column) = self.recorder.extent(node)
            found = self._spans[id(node)] = Span(line + self._offset, column + 1, end_line + self._offset, end_column + 1)
        return found

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.recorder.parents.get(id(node), self.module if node is self.root else None)

    def starting_in(self, span: Span) -> list[cst.CSTNode]:
        """The nodes (the module itself aside) starting inside `span`, in source order, the outer
        of two starting together first, as libcst's positions sort them. Only those nodes are
        placed: the tokens they start at are found by bisection, as positions grow with tokens."""
        position = self._token_position
        tokens = range(len(self.recorder.tokens) + 1)
        low = bisect.bisect_left(tokens, (span.line, span.column), key=position)
        high = bisect.bisect_left(tokens, (span.end_line, span.end_column), key=position)
        firsts, order = self._by_first_token
        found = order[bisect.bisect_left(firsts, low):bisect.bisect_left(firsts, high)]
        nodes = self.recorder.nodes
        found.sort(key=lambda number: (self._order(nodes[number]), number))  # ties: in libcst's order
        return [nodes[number] for number in found if nodes[number] is not self.module]

    def _token_position(self, token: int) -> tuple[int, int]:
        """Where token number `token` starts, as a span gives it: (line, 1-based column)."""
        line, column = self.recorder.position(token)
        return line + self._offset, column + 1

    @functools.cached_property
    def _by_first_token(self) -> tuple[list[int], list[int]]:
        """The nodes' numbers (in libcst's order) sorted by the token they start at, and those tokens."""
        extents = self.recorder.extents
        firsts = [extents[id(node)][0] for node in self.recorder.nodes]
        order = sorted(range(len(firsts)), key=firsts.__getitem__)
        return [firsts[number] for number in order], order

    def _order(self, node: cst.CSTNode) -> tuple[int, int, int, int]:
        span = self.span(node)
        return span.line, span.column, -span.end_line, -span.end_column


class _RangeRecorder(CodegenState):
    """Code generation that notes, for every node, the tokens of its code, as libcst's
    PositionProvider delimits it (the node's syntactic extent where its code generation records
    one, else everything it generated, whitespace included), and the node that generated it, as
    libcst's ParentNodeProvider links them."""

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        # id(node) -> (first token, token after its last), in the order libcst's positions are made.
        self.extents: dict[int, tuple[int, int]] = {}
        self.nodes: list[cst.CSTNode] = []  # in the order of `extents`
        self.parents: dict[int, cst.CSTNode] = {}
        self._open: list[tuple[cst.CSTNode, int]] = []  # nodes being generated, and their first token

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self._open:
            self.parents[id(node)] = self._open[-1][0]
        self._open.append((node, len(self.tokens)))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._open.pop()[1]
        if id(node) not in self.extents:
            self.extents[id(node)] = (start, len(self.tokens))
            self.nodes.append(node)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None,
                                  end_node: cst.CSTNode | None = None) -> _SyntacticExtent:
        return _SyntacticExtent(self, node, start_node, end_node)

    def extent(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        """Where the node's code starts and ends in the generated code: (1-based line, 0-based column)."""
        first, after = self.extents[id(node)]
        return self.position(first), self.position(after)

    @functools.cached_property
    def position(self) -> Callable[[int], tuple[int, int]]:
        """Where token number `token` starts in the generated code: (1-based line, 0-based column)."""
        text = "".join(self.tokens)
        if "\r" in text:  # a "\r" token then a "\n" one count as two line breaks, as libcst counts
            return functools.partial(_position_by_token, self.tokens)
        ends = list(itertools.accumulate(map(len, self.tokens), initial=0))  # token index -> offset in text
        return functools.partial(_position_in_text, [m.end() for m in _NEWLINE.finditer(text)], ends)


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
        if id(self.node) not in extents:
            self.recorder.nodes.append(self.node)
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


def _statement_lines(module: cst.Module, text: str) -> dict[int, StatementLines] | None:
    """The lines of each libcst top-level statement."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    statements = iter(tree.body)
    found: dict[int, StatementLines] = {}
    try:
        for statement in module.body:
            first = last = next(statements)
            if isinstance(statement, cst.SimpleStatementLine):
                for _ in statement.body[1:]:
                    last = next(statements)
            decorators = getattr(first, "decorator_list", None)
            found[id(statement)] = StatementLines(decorators[0].lineno if decorators else first.lineno, first.lineno,
                                                  last.end_lineno or last.lineno)
    except StopIteration:
        return None
    return found
