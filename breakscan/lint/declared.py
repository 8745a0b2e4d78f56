"""What the source declares about a value without running it: annotations, defaults and the
names of parameters, as value kinds."""

from __future__ import annotations

import functools
from collections.abc import Callable

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.names import dotted_name

# Not `k` (attention's keys: `forward(self, q, k, v)`) nor `index` (scatter and gather indices,
# torch-geometric's `index`): in model code those are tensors as often as counts.
COUNT_NAMES = frozenset({"n", "i", "j", "step", "steps", "dim", "size", "num", "count"})


# Expands the type aliases an annotation's text names (`List[DataType]` with `DataType =
# Union[torch.Tensor, Boxes]` in scope) into what they stand for.
Expand = Callable[[str], str]


def annotation_kind(annotation: cst.BaseExpression, expand: Expand | None = None) -> v.Value | None:
    """The kind an annotation declares; None when it says nothing (`Any`, `object`). Read by its
    structure: `Optional[X]` and `X | None` add None to X, a `Union` joins its members, a
    container (`List[Tensor]`, `Dict[str, Tensor]`) holds tensors when a member is one."""
    if expand is not None:
        text = cst.Module(body=[]).code_for_node(annotation)
        expanded = expand(text)
        if expanded != text:
            try:
                annotation = cst.parse_expression(expanded)
            except cst.ParserSyntaxError:
                pass
    return _declared(annotation)


def _declared(node: cst.BaseExpression) -> v.Value | None:
    if isinstance(node, cst.SimpleString):  # a forward reference: `"torch.Tensor"`
        inner = node.evaluated_value
        try:
            return _declared(cst.parse_expression(inner)) if isinstance(inner, str) else v.OTHER
        except cst.ParserSyntaxError:
            return v.OTHER
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return _union([node.left, node.right])
    if isinstance(node, cst.Subscript):
        generic = (dotted_name(node.value) or "").rpartition(".")[2]
        members = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        if generic == "Optional" and members:
            return _union([*members[:1], cst.Name("None")])
        if generic == "Union":
            return _union(members)
        if generic == "Annotated" and members:
            return _declared(members[0])
        if generic in CONTAINER_GENERICS:
            return _declared_container(generic, members)
        if "Tensor" in generic:  # torchtyping's `TensorType["batch", "feature"]`
            return v.TENSOR
        if generic in _JAXTYPING_DTYPES and members and _declared(members[0]) == v.TENSOR:
            return v.MASK if generic == "Bool" else v.TENSOR  # jaxtyping's `Float[Tensor, "b n"]`
        return v.OTHER  # `Callable[...]`, `Literal[...]`, `Type[...]`, a user generic
    text = dotted_name(node)
    if text is None:
        return v.OTHER
    if text == "None":
        return v.NONE
    if text in ("Any", "typing.Any", "object"):
        return None
    if "Tensor" in text:
        return v.MASK if "BoolTensor" in text else v.TENSOR
    return _ANNOTATED_KINDS.get(text, v.OTHER)  # `int`, `bool`, `torch.dtype`, `Config`...


def _declared_container(generic: str, members: list[cst.BaseExpression]) -> v.Value:
    """`Dict[str, Tensor]`: a dict whose values are tensors (iterating it gives its keys);
    `Tuple[int, Tensor]`: a tuple of those positions; `List[Tensor]`, `Tuple[Tensor, ...]`: a
    sequence of tensors. It holds tensors when a member type is one."""
    kinds = [v.UNKNOWN if kind is None else kind for kind in map(_declared, members)]
    holds_tensors = any(kind in (v.TENSOR, v.MASK, v.MAYBE_TENSOR, v.TENSORS) for kind in kinds)
    sort = _CONTAINER_SORTS.get(generic, "")
    if sort == "dict":
        return v.container(sort=sort, holds_tensors=holds_tensors, elements=kinds[1] if len(kinds) == 2 else None)
    if sort == "tuple" and members and not (len(members) == 2 and _is_ellipsis(members[1])):
        return v.container(items=tuple(kinds), sort=sort, holds_tensors=holds_tensors)
    return v.container(sort=sort, holds_tensors=holds_tensors, elements=kinds[0] if kinds else None)


def _is_ellipsis(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Ellipsis)


def _union(members: list[cst.BaseExpression]) -> v.Value | None:
    kinds = [_declared(member) for member in members]
    if any(kind is None for kind in kinds):
        return None  # a member that says nothing leaves the union saying nothing
    known = [kind for kind in kinds if kind is not None]
    if v.TENSORS in known and v.NONE in known and not any(k in (v.TENSOR, v.MASK) for k in known):
        return v.TENSORS  # `Optional[List[Tensor]]`: an absent list of tensors
    if v.TENSOR in known and any(v.is_plain(kind) and kind != v.NONE for kind in known):
        return v.MAYBE_TENSOR  # `Union[float, Tensor]`: maybe a tensor, maybe a number
    return functools.reduce(v.join, known)


# Generic containers: a value annotated with one holds tensors when a member type is one.
CONTAINER_GENERICS = frozenset({"Dict", "dict", "List", "list", "Tuple", "tuple", "Sequence", "Mapping", "MutableMapping",
                         "Iterable", "Iterator", "Set", "set", "FrozenSet", "frozenset", "OrderedDict", "DefaultDict",
                         "defaultdict", "MutableSequence", "Collection", "Deque", "deque"})
# What iterating each one gives TorchDynamo, where the annotation says (`Sequence` may be either).
_CONTAINER_SORTS = {
    **dict.fromkeys(("Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"), "dict"),
    **dict.fromkeys(("List", "list", "MutableSequence"), "list"), **dict.fromkeys(("Tuple", "tuple"), "tuple"),
    **dict.fromkeys(("Set", "set", "FrozenSet", "frozenset"), "set"),
}
# jaxtyping's array annotations: `Float[Tensor, "batch dim"]` is a tensor of that dtype family.
_JAXTYPING_DTYPES = frozenset({"Float", "Float16", "Float32", "Float64", "BFloat16", "Int", "Int8", "Int16", "Int32",
                               "Int64", "UInt", "UInt8", "Integer", "Bool", "Num", "Real", "Inexact", "Complex",
                               "Shaped"})
_ANNOTATED_KINDS = {"int": v.INT, "float": v.FLOAT, "bool": v.BOOL, "str": v.STR, "torch.Size": v.SHAPE}


def parameter_kind(param: cst.Param, expand: Expand | None = None) -> v.Value:
    """A parameter nobody passed a value to: its annotation, a count-like name, its default, else
    (unannotated, no default: a model's input) a tensor."""
    declared = annotation_kind(param.annotation.annotation, expand) if param.annotation is not None else None
    if declared is not None:
        return declared
    if _counts_by_name(param.name.value):
        return v.INT
    if param.default is not None:
        # `mask=None` may be given a tensor; `scale=1.0` is a number.
        default = v.literal_kind(param.default)
        if default is None and isinstance(param.default, (cst.Tuple, cst.List)):  # `scale=(0.6, 1.0)`
            items = [v.literal_kind(e.value) if isinstance(e, cst.Element) else None for e in param.default.elements]
            if items and None not in items:
                return v.container(items=tuple(i for i in items if i is not None),
                                   sort="tuple" if isinstance(param.default, cst.Tuple) else "list")
        return v.MAYBE_TENSOR if default == v.NONE else default or v.OTHER
    return v.TENSOR


def _counts_by_name(name: str) -> bool:
    """Unannotated parameters whose names say they hold counts or sizes (`n`, `num_steps`,
    `hidden_size`): Python ints far more often than tensors."""
    return (name in COUNT_NAMES or name.startswith(("num_", "n_")) or
            name.endswith(("_size", "_dim", "_steps", "_count")))
