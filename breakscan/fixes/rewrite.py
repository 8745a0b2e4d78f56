"""What a suggester returns, and how it becomes a `Fix`: the edits applied to the user's text,
checked to still parse, and shown as a unified diff."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from breakscan.fixes.edits import apply_edits, common_ends, unified_diff
from breakscan.fixes.source import SourceModule
from breakscan.model import Applicability, Edit, Fix


@dataclass(frozen=True)
class Rewrite:
    summary: str
    edits: tuple[Edit, ...]
    # "safe": keeps every value and type the code computes (deleting an explicit break, making a
    # helper run eagerly); "unsafe": can change them at edge cases (a Python number kept as a 0-d
    # tensor, both sides of a branch computed, a process-wide setting, a layer built once).
    applicability: Applicability = "unsafe"


def to_fix(src: SourceModule, rewrite: Rewrite) -> Fix | None:
    before = src.text if src.text.endswith("\n") else src.text + "\n"
    after = apply_edits(src.text, rewrite.edits)
    after = after if after.endswith("\n") else after + "\n"
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    same_head, same_tail = common_ends(old, new)
    # Only the top-level statements the edits touched can have stopped parsing: check those.
    first, last = src.whole_statements(same_head + 1, len(old) - same_tail)
    try:
        ast.parse("".join(new[first - 1:last + len(new) - len(old)]))
    except SyntaxError:  # a suggester's bug must not reach the user as a broken diff
        return None
    diff = unified_diff(src.path, before, after, lines=(old, new, same_head, same_tail))
    return Fix(rewrite.summary, diff, rewrite.edits, rewrite.applicability, src.path)


def replace_node(src: SourceModule, node: cst.CSTNode, text: str) -> Edit:
    return Edit(src.span(node), text)


def replace_lines(src: SourceModule, node: cst.CSTNode, text: str) -> Edit:
    """Replace the whole lines of `node` (a statement) by `text` (whole lines, newline-ended)."""
    return Edit(src.line_range(node), text)


def remove_statement(src: SourceModule, statement: cst.BaseStatement) -> Edit:
    """Delete a statement's lines; a block left empty gets `pass`."""
    block = src.parent(statement)
    alone = isinstance(block, cst.IndentedBlock) and len(block.body) == 1
    line = src.span(statement).line
    return replace_lines(src, statement, f"{src.indent(line)}pass\n" if alone else "")


def indented(lines: list[str], indent: str) -> str:
    return "".join(f"{indent}{line}\n" if line else "\n" for line in lines)
