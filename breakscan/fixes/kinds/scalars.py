"""Scalars pulled out of tensors (`.item()`, `float(t)`, `math.sqrt(t)`): keep them as 0-d tensors,
or let Dynamo capture them (`capture_scalar_outputs`)."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.kinds.branches import branch_testing, where_rewrite
from breakscan.fixes.kinds.common import atom, call_name, config_switch, in_arithmetic, torch_ref, used_as_tensor
from breakscan.fixes.rewrite import Rewrite, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding

_CONVERSIONS = ("float", "int", "bool")
# math functions on a tensor, and the torch function that keeps the result a tensor.
_MATH = {"math.sqrt": "sqrt", "math.exp": "exp", "math.log": "log", "math.log2": "log2", "math.log10": "log10",
         "math.sin": "sin", "math.cos": "cos", "math.tan": "tan", "math.tanh": "tanh", "math.fabs": "abs"}


def _extraction(src: SourceModule, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item":
        return not node.args
    name = call_name(src, node)
    one_arg = len(node.args) == 1 and not node.args[0].keyword and not node.args[0].star
    return one_arg and (name in _CONVERSIONS or name in _MATH)


def _as_tensor(src: SourceModule, call: cst.Call, torch: str) -> str:
    """The expression that keeps the value as a tensor, detached from autograd as the Python
    number was (gradients do not flow through it, in training as before). A converted value
    goes through `torch.as_tensor`: it may be a number on some paths (a loop's first pass)."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "item":
        return f"{atom(src, call.func.value)}.detach()"
    argument = call.args[0].value
    value = f"{torch}.as_tensor({src.code(argument)}).detach()"
    name = call_name(src, call)
    if name == "int":  # int() truncates toward zero; so does trunc(), keeping the tensor
        return f"{value}.trunc()"
    if name == "bool":
        return f"({value} != 0)"
    return value if name in _CONVERSIONS else f"{torch}.{_MATH[name]}({value})"


def keep_as_tensor(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = src.first_in(finding.span, lambda n: _extraction(src, n))
    if call is None or not used_as_tensor(src, call):
        return None
    torch, imports = torch_ref(src)
    tensor = _as_tensor(src, call, torch)
    imports = imports if f"{torch}." in tensor else ()
    summary = (f"keep the value as a 0-d tensor: `{tensor}` instead of `{src.code(call)}`; it is only used "
               "in arithmetic, where a 0-d tensor gives the same values and stays in the graph (detached, "
               "as the number was, so gradients do not change)")
    return Rewrite(summary, (*imports, replace_node(src, call, tensor)))


def compare_as_tensor(src: SourceModule, finding: Finding) -> Rewrite | None:
    """`if t.item() > 2:` -> compare the 0-d tensor, and select with `torch.where`."""
    call = src.first_in(finding.span, lambda n: _extraction(src, n))
    branch = branch_testing(src, call) if call is not None else None
    if branch is None:
        return None
    top = in_arithmetic(src, call)[0]
    test, inner = src.span(branch.test), src.span(call)
    compared = isinstance(src.parent(top), cst.Comparison) or top is branch.test
    if not compared or test.line != test.end_line or inner.line != test.line:
        return None
    torch, _ = torch_ref(src)
    code = src.code(branch.test)
    start, end = inner.column - test.column, inner.end_column - test.column
    rewrite = where_rewrite(src, finding, branch, code[:start] + _as_tensor(src, call, torch) + code[end:])
    if rewrite is None:
        return None
    summary = (f"compare the 0-d tensor instead of the Python number from `{src.code(call)}`, and "
               f"{rewrite.summary}")
    return Rewrite(summary, rewrite.edits)


def _argmax_index(src: SourceModule, node: cst.CSTNode) -> bool:
    """`t[t.argmax()]`: indexing with a 0-d index tensor taken from the tensor itself."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return False
    index = node.slice[0].slice.value
    return (isinstance(index, cst.Call) and not index.args and isinstance(index.func, cst.Attribute)
            and index.func.attr.value in ("argmax", "argmin") and src.code(index.func.value) == src.code(node.value))


def index_without_scalar(src: SourceModule, finding: Finding) -> Rewrite | None:
    subscript = src.first_in(finding.span, lambda n: _argmax_index(src, n))
    if subscript is None:
        return None
    index = src.code(subscript.slice[0].slice.value)
    text = f"{atom(src, subscript.value)}.index_select(0, {index}.reshape(1)).squeeze(0)"
    summary = (f"select with `index_select` on the index tensor instead of indexing with it: `{src.code(subscript)}` "
               "needs the index as a Python number, `index_select` does not (same result)")
    return Rewrite(summary, (replace_node(src, subscript, text),), applicability="safe")


def _tensor_list(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "tolist"


def capture_scalars(src: SourceModule, finding: Finding) -> Rewrite | None:
    """Capture scalars: for `.item()`-like extractions, and for `.tolist()` only when the run showed
    an integer tensor (GB0033; a float one is GB0109, which capturing does not remove)."""
    extraction = src.first_in(finding.span, lambda n: _extraction(src, n))
    integer_list = set(finding.gb_ids) == {"GB0033"} and src.first_in(finding.span, _tensor_list)
    if extraction is None and not integer_list:
        return None
    return config_switch(
        src, "capture_scalar_outputs",
        "let Dynamo capture the Python scalar as a symbolic value instead of breaking "
        "(`capture_scalar_outputs`); a later `if` on that value still breaks (GB0170)",
    )
