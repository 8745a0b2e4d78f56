"""Logging and printing in compiled code: skip it while compiling (eager runs still log), or keep
it and let Dynamo defer it (the reorderable-logging config)."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.kinds.common import call_name, torch_ref
from breakscan.fixes.rewrite import Rewrite, replace_lines
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding

_LEVELS = {"debug", "info", "warning", "warn", "error", "exception", "critical"}
_OUTPUT = {"print", "warnings.warn", "sys.stdout.write", "sys.stderr.write"}


def _logging_call(src: SourceModule, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = call_name(src, node) or ""
    logger_method = isinstance(node.func, cst.Attribute) and node.func.attr.value in _LEVELS
    return name in _OUTPUT or logger_method


def _alternative(src: SourceModule, call: cst.Call) -> str:
    name = call_name(src, call) or ""
    if name == "print":
        return ("to keep the output under torch.compile instead, let Dynamo print after the graph (tensor and "
                "constant arguments): `torch._dynamo.config.reorderable_logging_functions.add(print)`")
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _LEVELS and not name.startswith("logging."):
        # The logger's own method: TorchDynamo 2.13 does not honour `logging.Logger.<level>` in the set.
        method = src.module.code_for_node(call.func)
        return f"or have Dynamo drop these calls while tracing: `torch._dynamo.config.ignore_logging_functions.add({method})`"
    return "or delete the call if it was only for debugging"


def guard_logging(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = src.first_in(finding.span, lambda n: _logging_call(src, n))
    statement = src.statement(call) if call is not None else None
    alone = isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
    expression = statement.body[0] if alone else None
    if not (isinstance(expression, cst.Expr) and expression.value is call):
        return None  # only a call that is a statement of its own can be wrapped
    indent = src.indent(src.span(statement).line)
    body = src.reindented(statement, indent + src.indent_unit)
    if body is None:
        return None
    torch, imports = torch_ref(src)
    text = f"{indent}if not {torch}.compiler.is_compiling():\n{body}"
    summary = ("run the call only outside torch.compile (`torch.compiler.is_compiling()` is constant while "
               f"tracing, so Dynamo drops the branch): eager runs still log; {_alternative(src, call)}")
    return Rewrite(summary, (*imports, replace_lines(src, statement, text)))
