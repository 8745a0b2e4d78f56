"""Source ranges for reported nodes, computed only in files that have findings.

libcst's PositionProvider re-generates the whole module (about two parses' worth of work). We run
it on just the top-level statements that hold findings and shift each by the statement's line,
which `ast` (16x cheaper than libcst) gives us.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from breakscan.model import Span


def locate(module: cst.Module, text: str, requests: Iterable[tuple[cst.CSTNode, cst.CSTNode]]) -> dict[int, Span]:
    """Spans keyed by `id(node)` for (node, top-level statement holding it) pairs."""
    by_statement: dict[int, list[cst.CSTNode]] = {}
    statements: dict[int, cst.CSTNode] = {}
    for node, statement in requests:
        by_statement.setdefault(id(statement), []).append(node)
        statements[id(statement)] = statement
    starts = _statement_lines(module, text)
    spans: dict[int, Span] = {}
    if starts is None:  # `ast` could not parse what libcst did: fall back to the whole module.
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        for nodes in by_statement.values():
            for node in nodes:
                spans[id(node)] = _span(positions[node], 0)
        return spans
    for key, nodes in by_statement.items():
        statement = statements[key]
        positions = MetadataWrapper(cst.Module(body=[statement]), unsafe_skip_copy=True).resolve(PositionProvider)
        offset = starts[id(statement)] - positions[statement].start.line
        for node in nodes:
            spans[id(node)] = _span(positions[node], offset)
    return spans


def _span(code_range, offset: int) -> Span:
    return Span(code_range.start.line + offset, code_range.start.column + 1,
                code_range.end.line + offset, code_range.end.column + 1)


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
