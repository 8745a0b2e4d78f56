"""What the source declares about a value without running it: annotations, defaults and the
names of parameters, as value kinds."""

from __future__ import annotations

import re

import libcst as cst

from breakscan.lint import values as v

# Not `k` (attention's keys: `forward(self, q, k, v)`) nor `index` (scatter and gather indices,
# torch-geometric's `index`): in model code those are tensors as often as counts.
COUNT_NAMES = frozenset({"n", "i", "j", "step", "steps", "dim", "size", "num", "count"})


def annotation_kind(annotation: cst.BaseExpression) -> v.Value | None:
    """The kind an annotation declares; None when it says nothing (`Any`, `object`)."""
    text = cst.Module(body=[]).code_for_node(annotation)
    if "Tensor" in text and _CONTAINER.match(text):
        return v.TENSORS  # `Dict[str, Tensor]`, `Optional[List[torch.Tensor]]`, `tuple[Tensor, ...] | None`
    if "Tensor" in text:
        if "Optional" in text or "None" in text:
            return v.MAYBE_TENSOR
        return v.MASK if "BoolTensor" in text else v.TENSOR
    if text in ("Any", "typing.Any", "object"):
        return None
    return _ANNOTATED_KINDS.get(text, v.OTHER)  # `int`, `bool`, `torch.dtype`, `Config`...


# An annotation whose outer type is a container (possibly optional).
_CONTAINER = re.compile(r"^(?:(?:typing\.)?Optional\[)?(?:typing\.|collections\.abc\.)?"
                        r"(?:Dict|dict|List|list|Tuple|tuple|Sequence|Mapping|MutableMapping|Iterable|Set|set"
                        r"|FrozenSet|frozenset|OrderedDict)\b")
_ANNOTATED_KINDS = {"int": v.INT, "float": v.FLOAT, "bool": v.BOOL, "str": v.STR, "torch.Size": v.SHAPE}


def parameter_kind(param: cst.Param) -> v.Value:
    """A parameter nobody passed a value to: its annotation, a count-like name, its default, else
    (unannotated, no default: a model's input) a tensor."""
    declared = annotation_kind(param.annotation.annotation) if param.annotation is not None else None
    if declared is not None:
        return declared
    if _counts_by_name(param.name.value):
        return v.INT
    if param.default is not None:
        # `mask=None` may be given a tensor; `scale=1.0` is a number.
        default = v.literal_kind(param.default)
        return v.MAYBE_TENSOR if default == v.NONE else default or v.OTHER
    return v.TENSOR


def _counts_by_name(name: str) -> bool:
    """Unannotated parameters whose names say they hold counts or sizes (`n`, `num_steps`,
    `hidden_size`): Python ints far more often than tensors."""
    return (name in COUNT_NAMES or name.startswith(("num_", "n_")) or
            name.endswith(("_size", "_dim", "_steps", "_count")))
