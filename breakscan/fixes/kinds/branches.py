"""Data-dependent branches (`if t.sum() > 0:`): select with `torch.where` when each side is one
expression, branch with `torch.cond` when the sides are blocks of assignments."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.kinds.common import (
    atom,
    call_name,
    expression_kind,
    tensor_predicate,
    torch_ref,
    used_as_tensor,
    where_operands_ok,
)
from breakscan.fixes.rewrite import Rewrite, indented, replace_lines, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Edit, Finding, Span

_WHERE_NOTE = "both sides are computed and must broadcast to one shape"


def branch_testing(src: SourceModule, node: cst.CSTNode) -> cst.If | cst.IfExp | None:
    """The `if` (not an `elif`) or conditional expression whose test is or holds `node`."""
    for inner, outer in zip([node, *src.ancestors(node)], src.ancestors(node)):
        if isinstance(outer, (cst.If, cst.IfExp)) and outer.test is inner:
            return None if isinstance(outer, cst.If) and isinstance(src.parent(outer), cst.If) else outer
        if isinstance(outer, cst.BaseStatement) and not isinstance(outer, cst.If):
            return None
    return None


def _branch(src: SourceModule, finding: Finding) -> cst.If | cst.IfExp | None:
    """The branch whose test is at the finding."""
    def is_test(node: cst.CSTNode) -> bool:
        parent = src.parent(node)
        return isinstance(parent, (cst.If, cst.IfExp)) and parent.test is node

    test = src.first_in(finding.span, is_test)
    if test is None:  # the finding is on the tensor operand of a test (`flag and t.any()`)
        test = src.first_in(finding.span, lambda node: isinstance(node, cst.BaseExpression))
    return branch_testing(src, test) if test is not None else None


def _statements(block: cst.CSTNode | None) -> tuple[cst.BaseStatement, ...]:
    """The statements of an indented block or an `else:` (none for a one-line suite)."""
    if isinstance(block, cst.Else):
        block = block.body
    return tuple(block.body) if isinstance(block, cst.IndentedBlock) else ()


def _single(block: cst.CSTNode | None) -> cst.BaseSmallStatement | None:
    """The one simple statement of a block, if that is all it holds."""
    body = _statements(block)
    if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        return body[0].body[0]
    return None


def _assigned(src: SourceModule, statement: cst.BaseSmallStatement | None
              ) -> tuple[str, str, cst.BaseExpression] | None:
    """(name, value, the expression that decides its kind) for `name = value` or `name op= value`
    (as `name op (value)`, a tensor if the name is)."""
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
        target = statement.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, src.code(statement.value), statement.value
    if isinstance(statement, cst.AugAssign) and isinstance(statement.target, cst.Name):
        operator = cst.Module([]).code_for_node(statement.operator).strip().removesuffix("=")
        code = f"{statement.target.value} {operator} ({src.code(statement.value)})"
        return statement.target.value, code, statement.target
    return None


def _following_return(src: SourceModule, branch: cst.If) -> cst.SimpleStatementLine | None:
    block = src.parent(branch)
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    index = body.index(branch) + 1 if branch in body else len(body)
    after = body[index] if index < len(body) else None
    if isinstance(after, cst.SimpleStatementLine) and isinstance(after.body[0], cst.Return):
        return after
    return None


def select_with_where(src: SourceModule, finding: Finding) -> Rewrite | None:
    branch = _branch(src, finding)
    if branch is None or not tensor_predicate(src, finding, branch.test):
        return None
    return where_rewrite(src, finding, branch, src.code(branch.test))


def where_rewrite(src: SourceModule, finding: Finding, branch: cst.If | cst.IfExp, test: str) -> Rewrite | None:
    """`branch` as one `torch.where(test, ...)`, when each side is one value that `torch.where`
    takes (see `where_operands_ok`)."""
    torch, imports = torch_ref(src)
    where = f"{torch}.where({{test}}, {{true}}, {{false}})"
    if isinstance(branch, cst.IfExp):
        if not where_operands_ok(src, finding, [branch.body, branch.orelse]):
            return None
        text = where.format(test=test, true=src.code(branch.body), false=src.code(branch.orelse))
        summary = f"select with `torch.where` instead of branching in Python ({_WHERE_NOTE})"
        return Rewrite(summary, (*imports, replace_node(src, branch, text)))
    indent = src.indent(src.span(branch).line)
    body, orelse = _single(branch.body), _single(branch.orelse) if branch.orelse else None
    if isinstance(body, cst.Return) and body.value is not None:
        later = _following_return(src, branch) if branch.orelse is None else None
        other = orelse if branch.orelse is not None else (later.body[0] if later else None)
        if not (isinstance(other, cst.Return) and other.value is not None
                and where_operands_ok(src, finding, [body.value, other.value])):
            return None
        text = where.format(test=test, true=src.code(body.value), false=src.code(other.value))
        end = src.span(later).end_line if later else src.span(branch).end_line
        edit = Edit(Span(src.span(branch).line, 1, end + 1, 1), f"{indent}return {text}\n")
        return Rewrite(f"return one value selected with `torch.where` ({_WHERE_NOTE})", (*imports, edit))
    true, false = _assigned(src, body), _assigned(src, orelse) if branch.orelse is not None else None
    if true is None or (branch.orelse is not None and (false is None or false[0] != true[0])):
        return None
    name = true[0]
    sides = [true[2], false[2] if false else cst.Name(name)]
    if not where_operands_ok(src, finding, sides):
        return None
    text = where.format(test=test, true=true[1], false=false[1] if false else name)
    summary = f"assign `{name}` once, selected with `torch.where` ({_WHERE_NOTE})"
    return Rewrite(summary, (*imports, replace_lines(src, branch, f"{indent}{name} = {text}\n")))


def _plain_assignment(small: cst.BaseSmallStatement) -> bool:
    return isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name) for t in small.targets)


def _block_lines(src: SourceModule, block: cst.CSTNode) -> list[str] | None:
    """The lines of a block of `name = value` statements (verbatim), or None if it holds anything
    else (a side effect or a return has no place in a `torch.cond` branch)."""
    statements = _statements(block)
    for statement in statements:
        if not (isinstance(statement, cst.SimpleStatementLine) and all(map(_plain_assignment, statement.body))):
            return None
    if not statements:
        return None  # a one-line suite (`if t: x = 1`)
    first, last = src.span(statements[0]).line, src.span(statements[-1]).end_line
    return [line.rstrip("\n") for line in src.lines[first - 1:last]]


def _names_assigned(block: cst.CSTNode | None) -> list[str]:
    names: list[str] = []
    for statement in _statements(block):
        for small in statement.body:
            for target in getattr(small, "targets", ()):
                if isinstance(target.target, cst.Name) and target.target.value not in names:
                    names.append(target.target.value)
    return names


def branch_with_cond(src: SourceModule, finding: Finding) -> Rewrite | None:
    branch = _branch(src, finding)
    if not isinstance(branch, cst.If) or isinstance(branch.orelse, cst.If):
        return None
    true_lines = _block_lines(src, branch.body)
    false_lines = _block_lines(src, branch.orelse) if branch.orelse is not None else []
    function = src.function(branch)
    if true_lines is None or false_lines is None or function is None or not tensor_predicate(src, finding, branch.test):
        return None
    span = src.span(branch)
    names = [(n.value, src.span(n).line) for n in src.nodes_in(src.span(function), lambda n: isinstance(n, cst.Name))]
    before = {name for name, line in names if line < span.line}
    after = {name for name, line in names if line > span.end_line}
    in_true, in_false = _names_assigned(branch.body), _names_assigned(branch.orelse)
    # What the branches must return: the names they set that are read later (not temporaries).
    outputs = [n for n in dict.fromkeys(in_true + in_false) if n in after]
    if not outputs or any(n not in before and not (n in in_true and n in in_false) for n in outputs):
        return None  # a side would have to return a value it never had
    operands = [n for n in outputs if n in before]
    if any(expression_kind(src, finding, cst.Name(n)) not in ("tensor", "unknown") for n in operands):
        return None  # torch.cond passes only tensors to its branches
    torch, imports = torch_ref(src)
    indent, unit = src.indent(span.line), src.indent_unit
    parameters, result = ", ".join(operands), ", ".join(outputs)
    lines = []
    for label, body in (("true", true_lines), ("false", false_lines)):
        lines += [f"def _{label}_branch({parameters}):", *[line.removeprefix(indent) for line in body],
                  f"{unit}return {result}"]
    packed = f"({parameters},)" if len(operands) == 1 else f"({parameters})"
    lines.append(f"{result} = {torch}.cond({src.code(branch.test)}, _true_branch, _false_branch, {packed})")
    summary = ("branch inside the graph with `torch.cond`: each side becomes a function returning what it "
               f"changes ({result}); both must return tensors of the same shape and dtype and must not "
               "mutate their inputs")
    return Rewrite(summary, (*imports, replace_lines(src, branch, indented(lines, indent))))


def _builtin_reduction(src: SourceModule, node: cst.CSTNode) -> bool:
    """`any(t)` / `all(t)` over one tensor expression (not a generator of several)."""
    return (isinstance(node, cst.Call) and call_name(src, node) in ("any", "all") and len(node.args) == 1
            and not node.args[0].keyword and not node.args[0].star
            and not isinstance(node.args[0].value, (cst.GeneratorExp, cst.ListComp)))


def reduce_with_tensor_method(src: SourceModule, finding: Finding) -> Rewrite | None:
    """`any(x < 0)` iterates the tensor in Python and tests each element; `(x < 0).any()` is one op."""
    call = src.first_in(finding.span, lambda n: _builtin_reduction(src, n))
    if call is None or not used_as_tensor(src, call):
        return None
    name = call_name(src, call)
    text = f"{atom(src, call.args[0].value)}.{name}()"
    summary = (f"reduce with the tensor method `{text}` instead of the builtin `{name}()`, which tests each "
               "element in Python; the 0-d result is only combined with tensors")
    return Rewrite(summary, (replace_node(src, call, text),))
