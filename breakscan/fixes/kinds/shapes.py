"""Ops whose output shape depends on data (`x[x > 0]`, `nonzero`, `unique`): a static-shape
formulation when the result is reduced anyway, else let Dynamo capture them
(`capture_dynamic_output_shape_ops`)."""

from __future__ import annotations

import libcst as cst

from breakscan.fixes.kinds.common import call_name, config_switch, torch_ref
from breakscan.fixes.rewrite import Rewrite, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding

_DYNAMIC = {"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount",
            "repeat_interleave"}
_REDUCTIONS = ("sum", "mean")


def _mask(node: cst.BaseExpression) -> bool:
    """An elementwise boolean expression (comparisons joined by `&`, `|`, `~`)."""
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr)):
        return _mask(node.left) and _mask(node.right)
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert) and _mask(node.operand)


def _masked(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(tensor, mask) of a boolean-mask read `t[mask]`."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return None
    mask = node.slice[0].slice.value
    return (node.value, mask) if _mask(mask) else None


def _elementwise(src: SourceModule, node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """`t[mask]` where the mask only compares `t` itself, so it has t's shape (not a row mask)."""
    found = _masked(node)
    if found is None:
        return None
    tensor, mask = found
    comparisons = src.nodes_in(src.span(mask), lambda n: isinstance(n, cst.Comparison))
    return found if all(src.code(c.left) == src.code(tensor) for c in comparisons) else None


def _reduced_mask(src: SourceModule, node: cst.CSTNode) -> bool:
    return (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _REDUCTIONS and _elementwise(src, node.func.value) is not None)


def reduce_without_indexing(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = src.first_in(finding.span, lambda n: _reduced_mask(src, n))
    if call is None:
        return None
    tensor, mask = _elementwise(src, call.func.value)
    torch, imports = torch_ref(src)
    kept = f"{torch}.where({src.code(mask)}, {src.code(tensor)}, 0)"
    reduction = call.func.attr.value
    text = f"{kept}.sum()" if reduction == "sum" else f"{kept}.sum() / ({src.code(mask)}).sum()"
    summary = (f"reduce over the masked-out values set to zero instead of indexing with the mask: the "
               f"shape stays static and the {reduction} is the same")
    return Rewrite(summary, (*imports, replace_node(src, call, text)), applicability="safe")


def _dynamic_op(src: SourceModule, node: cst.CSTNode) -> bool:
    if _masked(node) is not None:
        return True
    if not isinstance(node, cst.Call):
        return False
    name = call_name(src, node) or ""
    method = isinstance(node.func, cst.Attribute) and node.func.attr.value in _DYNAMIC
    one_arg_where = name == "torch.where" and len(node.args) == 1
    return method or name.removeprefix("torch.") in _DYNAMIC or one_arg_where


def capture_dynamic_shapes(src: SourceModule, finding: Finding) -> Rewrite | None:
    """For a dynamic-shape op seen in the code, or reported by Dynamo (GB0036) where the code
    does not show it (a mask held in a variable: `x[keep]`)."""
    node = src.first_in(finding.span, lambda n: _dynamic_op(src, n))
    if node is None and "GB0036" not in finding.gb_ids:
        return None
    static = ""
    if isinstance(node, cst.Call) and "nonzero" in src.code(node.func):
        static = "; or, when the count has a known bound, `torch.nonzero_static(x, size=N)` keeps shapes static"
    return config_switch(
        src, "capture_dynamic_output_shape_ops",
        "let Dynamo trace ops whose output shape depends on the data (`capture_dynamic_output_shape_ops`); "
        f"the backend must support unbacked sizes (inductor and eager do){static}",
    )
