"""Breaks asked for in the code (`torch._dynamo.graph_break()`): delete the call."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.kinds.common import call_name
from breakscan.fixes.rewrite import Rewrite, remove_statement
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding

_EXPLICIT = {"torch._dynamo.graph_break", "torch.compiler.graph_break"}


def drop_graph_break(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = src.first_in(finding.span, lambda n: call_name(src, n) in _EXPLICIT)
    statement = src.statement(call) if call is not None else None
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call):
        return None
    summary = "delete the explicit graph break: it computes nothing, so the result is unchanged"
    return Rewrite(summary, (remove_statement(src, statement),), applicability="safe")
