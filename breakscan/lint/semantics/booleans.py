"""Which expressions are boolean tensors (masks), tracked through local names in source order.

Precision matters more than reach: an expression counts as a mask only when its construction
says so (a comparison, `~`, `&`/`|`/`^` with a mask, `isnan`, `.bool()`, `dtype=torch.bool`, ...).
An integer index tensor (`x[idx]`) has a static result shape and must never count.
"""

from __future__ import annotations

import libcst as cst

from breakscan.lint.traverse import subtree_ids

# torch functions / tensor methods whose result is always a boolean tensor.
BOOL_RESULT = frozenset(
    {
        "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isin", "isclose", "signbit",
        "logical_and", "logical_or", "logical_not", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge",
        "greater", "less", "greater_equal", "less_equal", "not_equal", "any", "all", "bool",
    }
)
# Operations that keep their first input's dtype: a mask in, a mask out.
DTYPE_PRESERVING = frozenset(
    {
        "view", "view_as", "reshape", "reshape_as", "unsqueeze", "squeeze", "flatten", "unflatten", "expand",
        "expand_as", "broadcast_to", "t", "transpose", "permute", "movedim", "contiguous", "clone", "detach",
        "cpu", "cuda", "repeat", "flip", "roll", "narrow", "select", "tril", "triu", "index_select", "gather",
        "squeeze_", "unsqueeze_", "masked_fill", "cat", "concat", "stack",
    }
)
TORCH_BOOL = frozenset({"torch.bool", "builtins.bool"})
COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
LOGICAL = (cst.BitAnd, cst.BitOr, cst.BitXor)


class MaskTracker:
    """Names holding masks in the function being walked.

    Handlers run when a node is entered, before its children, so a new binding made by
    `mask = x[mask]` must not hide the old `mask` while the right-hand side is still being
    visited: it is kept pending until a handler calls `at()` with a node outside that right-hand side.
    """

    def __init__(self) -> None:
        self._ctx = None
        self._masks: set[str] = set()
        self._pending: tuple[set[int], dict[str, bool]] | None = None

    # -- state -----------------------------------------------------------------------------
    def _sync(self, ctx) -> None:
        if self._ctx is ctx:
            return
        self._ctx = ctx  # one context per walked function: a new one starts a fresh scope
        self._pending = None
        self._masks = {p.name.value for p in _params(ctx.function.node.params) if _annotated_bool(p)}

    def at(self, node: cst.CSTNode, ctx) -> None:
        """Bring the state up to `node`, the node the walker has just entered."""
        self._sync(ctx)
        if self._pending is not None and id(node) not in self._pending[0]:
            self._apply()

    def _apply(self) -> None:
        if self._pending is not None:
            for name, is_mask in self._pending[1].items():
                (self._masks.add if is_mask else self._masks.discard)(name)
            self._pending = None

    def bind(self, targets: list[cst.BaseExpression], is_mask: bool, value: cst.BaseExpression | None, ctx) -> None:
        """Record an assignment of a mask (or not) to `targets`; `value` is the right-hand side still to be visited."""
        self._sync(ctx)
        self._apply()
        inside = subtree_ids(value) if value is not None else set()
        self._pending = (inside, {name: is_mask for target in targets for name in _names(target)})

    # -- the predicate ---------------------------------------------------------------------
    def is_mask(self, node: cst.BaseExpression, ctx) -> bool:
        """Whether `node` is a boolean tensor, given the bindings made before the current statement."""
        self._sync(ctx)
        return self._is_mask(node, ctx)

    def _is_mask(self, node: cst.BaseExpression, ctx) -> bool:
        if isinstance(node, cst.Name):
            return node.value in self._masks
        if isinstance(node, cst.Comparison):
            return (len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, COMPARISONS)
                    and ctx.is_tensor(node))
        if isinstance(node, cst.UnaryOperation):
            # `~` on a tensor is logical negation in model code; bitwise tricks on index tensors are rare.
            return isinstance(node.operator, cst.BitInvert) and (self._is_mask(node.expression, ctx)
                                                                 or ctx.is_tensor(node.expression))
        if isinstance(node, cst.BinaryOperation):
            return isinstance(node.operator, LOGICAL) and (self._is_mask(node.left, ctx)
                                                           or self._is_mask(node.right, ctx))
        if isinstance(node, cst.Subscript):
            return self._is_mask(node.value, ctx)
        if isinstance(node, cst.NamedExpr):
            return self._is_mask(node.value, ctx)
        if isinstance(node, cst.IfExp):
            return self._is_mask(node.body, ctx) and self._is_mask(node.orelse, ctx)
        if isinstance(node, cst.Call):
            return self._call_is_mask(node, ctx)
        return False

    def _call_is_mask(self, node: cst.Call, ctx) -> bool:
        func = node.func
        qualified = ctx.qualname(func)
        if qualified is not None:
            if not qualified.startswith("torch."):
                return False
            name = qualified.rpartition(".")[2]
            first = node.args[0].value if node.args else None
        elif isinstance(func, cst.Attribute) and ctx.is_tensor(func.value):
            name = func.attr.value
            first = func.value
        else:
            return False
        dtype = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if dtype is not None:
            return ctx.qualname(dtype) in TORCH_BOOL
        if name in BOOL_RESULT:
            return True
        if name in ("to", "type"):
            dtypes = [ctx.qualname(a.value) for a in node.args]
            if any(d in TORCH_BOOL for d in dtypes):
                return True
            if any(d is not None and d.startswith("torch.") for d in dtypes):
                return False  # `.to(torch.float32)`
            return first is not None and self._is_mask(first, ctx)  # `.to(device)` keeps the dtype
        if name in ("tensor", "as_tensor") and first is not None:
            return _all_bool_literals(first)
        if name in DTYPE_PRESERVING and first is not None:
            if isinstance(first, (cst.List, cst.Tuple)):  # torch.cat([m1, m2])
                return bool(first.elements) and all(self._is_mask(e.value, ctx) for e in first.elements)
            return self._is_mask(first, ctx)
        return False


def _names(target: cst.BaseExpression):
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)


def _params(params: cst.Parameters) -> list[cst.Param]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params]


def _annotated_bool(param: cst.Param) -> bool:
    if param.annotation is None:
        return False
    return "BoolTensor" in cst.Module(body=[]).code_for_node(param.annotation.annotation)


def _all_bool_literals(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False")
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(_all_bool_literals(e.value) for e in node.elements)
    return False
