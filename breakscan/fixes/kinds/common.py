"""Shared by the suggesters: resolving names through the file's imports, referring to torch, and
module-level config switches."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.edits import insert_at
from breakscan.fixes.rewrite import Rewrite
from breakscan.fixes.source import SourceModule
from breakscan.lint.names import dotted_name
from breakscan.model import Edit, Finding

ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)


def qualified(src: SourceModule, node: cst.BaseExpression) -> str | None:
    """`nn.Linear` -> `torch.nn.Linear` after `from torch import nn`; builtins stay as they are."""
    name = dotted_name(node)
    if name is None:
        return None
    head, _, rest = name.partition(".")
    bound = src.bindings.get(head)
    if bound is None:
        return name
    return f"{bound}.{rest}" if rest else bound


def atom(src: SourceModule, node: cst.BaseExpression) -> str:
    """The node's code, parenthesised unless it already binds tighter than `.attribute`."""
    code = src.code(node)
    tight = isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or (node.lpar and code.startswith("("))
    return code if tight else f"({code})"


def call_name(src: SourceModule, node: cst.CSTNode) -> str | None:
    return qualified(src, node.func) if isinstance(node, cst.Call) else None


def torch_name(src: SourceModule) -> str | None:
    """The name `torch` is bound to at module level (`import torch as T` -> "T")."""
    return next((local for local, full in src.bindings.items() if full == "torch"), None)


def after_imports(src: SourceModule) -> int:
    """The line after the leading docstring, `__future__` imports and other imports."""
    line = 1
    for statement in src.module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        docstring = isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
        if not (docstring or isinstance(small, (cst.Import, cst.ImportFrom))):
            break
        line = src.span(statement).end_line + 1
    return line


def torch_ref(src: SourceModule) -> tuple[str, tuple[Edit, ...]]:
    """How to write `torch` in this file, and the import to add when it has none."""
    name = torch_name(src)
    if name is not None:
        return name, ()
    return "torch", (insert_at(after_imports(src), "import torch\n"),)


def config_switch(src: SourceModule, setting: str, summary: str) -> Rewrite | None:
    """`torch._dynamo.config.<setting> = True` after the imports; None when already there."""
    if f"config.{setting} = True" in src.text:
        return None
    torch, imports = torch_ref(src)
    lines = f"# torch.compile setting (for the whole process)\n{torch}._dynamo.config.{setting} = True\n"
    return Rewrite(summary, (*imports, insert_at(after_imports(src), lines)))


def in_arithmetic(src: SourceModule, node: cst.CSTNode) -> tuple[cst.CSTNode, bool]:
    """Climb from `node` through arithmetic: (the outermost arithmetic expression, whether any
    operand met on the way is something other than a number literal)."""
    mixed = False
    current = node
    while True:
        parent = src.parent(current)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, ARITHMETIC):
            other = parent.right if parent.left is current else parent.left
            mixed = mixed or not isinstance(other, (cst.Integer, cst.Float))
        elif not (isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus))):
            return current, mixed
        current = parent


def used_as_tensor(src: SourceModule, node: cst.CSTNode) -> bool:
    """Whether every use of the value combines it arithmetically with other (tensor) operands,
    directly or through one local variable: then a 0-d tensor gives the same result. (Passing it
    to a function is not enough: `torch.zeros(n)` needs a Python int.)"""
    top, mixed = in_arithmetic(src, node)
    if mixed:
        return True
    assign = src.parent(top)
    function = src.function(top)
    if not (isinstance(assign, cst.Assign) and assign.value is top and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and function is not None):
        return False
    name = assign.targets[0].target.value
    end = src.span(assign)
    uses = [n for n in src.nodes_in(src.span(function), lambda n: isinstance(n, cst.Name) and n.value == name)
            if (src.span(n).line, src.span(n).column) >= (end.end_line, end.end_column)]
    if not uses or any(isinstance(src.parent(n), (cst.AssignTarget, cst.AugAssign)) for n in uses):
        return False
    return all(in_arithmetic(src, use)[1] for use in uses)


# Kinds (breakscan.lint.values) that `torch.where` and `torch.cond` cannot take as operands.
_NOT_OPERANDS = frozenset({"none", "maybe-tensor", "str", "other", "shape", "tensors", "module"})
_NUMBERS = frozenset({"int", "float", "bool"})
_LITERALS = {cst.Integer: "int", cst.Float: "float", cst.SimpleString: "str", cst.FormattedString: "str",
             cst.Tuple: "other", cst.List: "other", cst.Dict: "other", cst.Set: "other", cst.Lambda: "other"}
_CONSTANTS = {"None": "none", "True": "bool", "False": "bool"}


def expression_kind(src: SourceModule, finding: Finding, node: cst.BaseExpression) -> str:
    """The value kind of an expression at the finding, from what the lint recorded there
    (`Finding.kinds`): a literal's, a name's, the reported construct's; an expression over names
    is a tensor if one of them is, a number if all are numbers; else "unknown"."""
    known = dict(finding.kinds)
    if isinstance(node, cst.Name):  # possibly made here, with no position
        return known.get(node.value) or _CONSTANTS.get(node.value, "unknown")
    code = src.code(node)
    if code in known:
        return known[code]
    for literal, kind in _LITERALS.items():
        if isinstance(node, literal):
            return kind
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Call, cst.Subscript, cst.Attribute)):
        names = [n for n in src.nodes_in(src.span(node), lambda n: isinstance(n, cst.Name))
                 if not isinstance(src.parent(n), cst.Attribute) or src.parent(n).value is n]
        kinds = {known.get(n.value, "unknown") for n in names}
        if "tensor" in kinds:
            return "tensor"
        if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)) and kinds <= _NUMBERS:
            return "int"
    return "unknown"


def where_operands_ok(src: SourceModule, finding: Finding, sides: list[cst.BaseExpression]) -> bool:
    """`torch.where(c, a, b)` runs and keeps the result's type: no side is None, a container or
    another non-number Python value, and not every side is a Python number (the result would turn
    from a number into a tensor)."""
    kinds = [expression_kind(src, finding, side) for side in sides]
    return not any(kind in _NOT_OPERANDS for kind in kinds) and not all(kind in _NUMBERS for kind in kinds)


def tensor_predicate(src: SourceModule, finding: Finding, test: cst.BaseExpression) -> bool:
    """`test` can be a `torch.cond` predicate: not a comparison of tuples or lists (Python
    compares those element by element), not `and`/`or`/`not` (Python takes each operand's truth,
    which is the break, and gives back one operand: `x.numel() > 0 and x.max() > 1` is a bool
    or a tensor), and not known to be a Python value."""
    if isinstance(test, cst.BooleanOperation) or (isinstance(test, cst.UnaryOperation)
                                                   and isinstance(test.operator, cst.Not)):
        return False
    if isinstance(test, cst.Comparison) and any(
            isinstance(part, (cst.Tuple, cst.List)) for part in (test.left, *(c.comparator for c in test.comparisons))):
        return False
    return expression_kind(src, finding, test) in ("tensor", "unknown")
