"""The kinds of value the lint tracks inside compiled code.

Tensors (`TENSOR`; `TENSORS`, a container of them; `MAYBE_TENSOR`, a tensor or None such as
`mask=None`: operations on it give tensors, but testing the bare name is a None check, not a
data-dependent branch), Python values known not to be tensors (`INT`, `FLOAT`, `BOOL`, `STR`,
`NONE`, `SHAPE` for a torch.Size, `OTHER` for any other object), nn.Module instances with the
classes they may be (to resolve `layer(x)`), and `UNKNOWN`: what code the analysis cannot read
returns. Unknown is never taken for a tensor.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst

from breakscan.lint import catalogue


@dataclass(frozen=True, eq=False)
class Kind:
    name: str
    # A refinement's family (MASK is a tensor): kinds of one family are equal, so every question
    # about tensors holds for a mask; what the refinement adds is read with its own predicate.
    family: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Kind) and (self.family or self.name) == (other.family or other.name)

    def __hash__(self) -> int:
        return hash(self.family or self.name)

    def __repr__(self) -> str:
        return self.name


TENSOR = Kind("tensor")
# A tensor of dtype bool: a comparison, `~m`, `m & n`, `isnan(x)`, `.bool()`, `dtype=torch.bool`...
MASK = Kind("mask", family="tensor")
# A 0-d float array an elementwise NumPy function made from Python numbers (`np.ceil(h / p)`):
# TorchDynamo traces it as data (trace_numpy), so branching on it breaks as on a tensor, but
# `int()`/`float()`/`bool()` of it do not break (probed; they do on an integer result, and on a
# reduction such as `np.prod(shape)`).
NUMPY_FLOAT = Kind("numpy-float", family="tensor")
TENSORS = Kind("tensors")  # a tuple/list/dict of tensors
# A sparse tensor (`adj.to_sparse()`, `torch.sparse_coo_tensor(...)`): TorchDynamo 2.13 cannot wrap
# one, so a frame breaks where it first reads it (GB0015), and runs eagerly (probed).
SPARSE = Kind("sparse", family="tensor")
# A tensor (or a container of tensors) after the branches of one path and a Python value after
# another's (`d = [2] * n` in one branch, `d = list(np.prod(...))` in the other): a construct on it
# breaks only where the tensor's path was taken, so a finding resting on it is a warning.
SOME_PATHS_TENSOR = Kind("tensor-on-some-paths", family="tensor")
SOME_PATHS_TENSORS = Kind("tensors-on-some-paths", family="tensors")
# A compiled function's untyped parameter other than its input (`reg` in `solve(C, reg)`): taken
# for a tensor, as often a Python number. Passed on, it stays what the root assumed, so a helper
# treats it as the root does (see semantics.scalars.is_number_like).
ASSUMED_TENSOR = Kind("assumed-tensor", family="tensor")
MAYBE_TENSOR = Kind("maybe-tensor")
# Such a parameter defaulting to None (`unbalanced=None`): an optional tensor only by assumption;
# not None, it is an ASSUMED_TENSOR.
ASSUMED_OPTIONAL = Kind("assumed-optional", family="maybe-tensor")
OTHER = Kind("other")  # a Python object known not to be a tensor (a dtype, a device, a config...)
INT = Kind("int")
FLOAT = Kind("float")
BOOL = Kind("bool")
STR = Kind("str")
# `True` or `False` written out in the code, or a helper's parameter that every call site leaves at
# such a default or passes one: TorchDynamo specialises Python bools, so it traces only the
# branch a test of it takes. Never a root's parameter: a caller outside the code may pass either.
TRUE = Kind("true", family="bool")
FALSE = Kind("false", family="bool")
# Text formatted from a tensor's value (`f"{loss}"`, `"{:.3f}".format(loss)`): TorchDynamo keeps it
# as a lazy format it cannot read, so returning or nesting it is fine, but using it as a string
# (`len()`, `+`, `==`, `in`, indexing, a method, a dict key) breaks (probed).
TENSOR_TEXT = Kind("tensor-text", family="str")
# A root's str parameter that the calls BREAKSCAN_TARGETS declares give different strings
# (`reduction="mean"`, then "sum"): TorchDynamo guards on a string's value where it is first used,
# so each new one recompiles.
VARYING_STR = Kind("varying-str", family="str")
# The same for a root's int or float parameter the declared calls give different numbers
# (BR002, BR007): guarded where the code first uses it, in a helper it is passed to too.
VARYING_INT = Kind("varying-int", family="int")
# One they give three or more ints: after the second, automatic dynamic shapes make it dynamic,
# unless a use specialises it again (a loop count), and then every new value recompiles.
VARYING_INTS = Kind("varying-ints", family="int")
VARYING_FLOAT = Kind("varying-float", family="float")
# A root's bool parameter the declared calls give both values (`output_attentions=False`, then
# True): TorchDynamo specialises bools (never dynamic), so each value compiles once (BR018).
VARYING_BOOL = Kind("varying-bool", family="bool")
# A root's parameter the declared calls give different objects they name (`F.silu`, then
# `F.gelu`; `torch.float16`, then `torch.bfloat16`): guarded by identity, never dynamic (BR018).
VARYING_OBJECT = Kind("varying-object", family="other")
# A root's parameter the declared calls give other literal containers (`["sentiment"]`, then
# `["sentiment", "topic"]`): TorchDynamo guards a list's length and constant items where it is first
# used, so each other one recompiles (BR018).
VARYING_LITERAL = Kind("varying-literal", family="other")
# A root's parameter the declared calls give lists (or tuples) of tensors of other lengths
# (`[bag(), bag()]`, then three): TorchDynamo guards the length where it is first used (BR018).
VARYING_LENGTH = Kind("varying-length", family="tensors")
# A root's parameter the declared calls give a tensor on some calls and None on others (an
# optional mask): TorchDynamo guards `mask is None` where it is first used (BR018).
VARYING_OPTIONAL = Kind("varying-optional", family="maybe-tensor")
# A number `random.uniform/randint/randrange` draws (or those methods and `random()` of a
# `random.Random`): TorchDynamo records the draw in the graph, a fresh one per call, so the number is
# not known while tracing. Tensor arithmetic with it is traced; using it as a Python number breaks
# (BS503). Python arithmetic on it gives a plain number (the code after that break has a constant).
DRAWN_FLOAT = Kind("drawn-float", family="float")
DRAWN_INT = Kind("drawn-int", family="int")
# A module's `training` flag (`self.training`), passed on as a bool: TorchDynamo guards the mode
# where the code first uses it (in a helper it is given to: `drop_path(x, p, self.training)`).
MODE = Kind("training-mode", family="bool")
# Values TorchDynamo cannot know before the data is there, made where the graph breaks (when the
# settings do not capture them): a Python number read out of a tensor (`.item()`, `float(t)`, the
# elements of `.tolist()`), and a tensor whose size the data decides (`nonzero`, `unique`...), and
# what is computed from either. The code after the break is given them by the eager run, so they
# differ from call to call as the data does: that code guards a number where it first uses it,
# and a tensor's size where it resumes (BR013).
DATA_INT = Kind("data-int", family="int")
DATA_FLOAT = Kind("data-float", family="float")
DATA_SIZED = Kind("data-sized", family="tensor")
# A 0-d tensor every call the file declares gives a compiled function (`torch.tensor(50)`, a
# diffusion timestep): TorchDynamo reads an input's value where it is used as an index, and
# guards it (`t.item() == 50`: each value recompiles); one computed from it in the graph (`t - 10`,
# ZERO_DIM) has no value to read while tracing, so indexing with it breaks (GB0033; probed).
ZERO_DIM_INPUT = Kind("zero-dim-input", family="tensor")
ZERO_DIM = Kind("zero-dim-tensor", family="tensor")
# A tensor of one dimension (`torch.arange(n)`, `x.flatten()`, an input every declared call makes
# with one size): an element of it (`t[0]`, what iterating it gives) is a ZERO_DIM tensor.
VECTOR = Kind("vector", family="tensor")
# Torch functions whose result has one dimension.
VECTOR_FACTORIES = frozenset({"torch.arange", "torch.randperm", "torch.linspace", "torch.logspace"})
# A tensor the module holds (a registered buffer or parameter), or one computed from such tensors
# and Python values only: the same on every call, so nothing read from it varies with the data.
STATE = Kind("module-state", family="tensor")
NONE = Kind("none")
# An attribute that is None as the object was built (`self.cache = None` in `__init__`), read: the
# compiled code may have set it on an earlier call, so a copy of it (`cache = self.cache`) is not
# known to be None where it is tested, as the attribute itself is not.
NONE_ATTRIBUTE = Kind("none-attribute", family="none")
SHAPE = Kind("shape")  # a torch.Size, or a slice of one: a tuple of ints
# What a call into code the analysis cannot see returns (an import it cannot find, a package not
# followed): not known to be a tensor, so nothing is reported on the strength of it.
UNKNOWN = Kind("unknown")
SELF = Kind("self")
# Module containers whose elements are Parameters (tensors), not modules.
PARAMETER_CONTAINERS = frozenset({"torch.nn.ParameterList", "torch.nn.ParameterDict",
                                  "torch.nn.modules.container.ParameterList",
                                  "torch.nn.modules.container.ParameterDict"})
# Module containers: iterating one steps an iterator over its dict of modules (or a generator).
MODULE_CONTAINERS = PARAMETER_CONTAINERS | frozenset(
    f"torch.nn.{where}{name}" for where in ("", "modules.container.") for name in ("ModuleList", "ModuleDict", "Sequential"))
# Python values known not to be tensors.
PLAIN = frozenset({OTHER, INT, FLOAT, BOOL, STR, NONE, SHAPE})
NUMBERS = frozenset({INT, FLOAT, BOOL})


@dataclass(frozen=True)
class ModuleValue:
    """An nn.Module instance, or an object of another scanned class; `classes` are qualified class
    names it may be built from. `fresh`: built by the function that holds it (there, or in a call
    that returned it), not passed in or read from an attribute: TorchDynamo cannot rebuild a
    method bound to it to resume after a break inside that method."""

    classes: frozenset[str]
    fresh: bool = False
    # Named by an annotation (`cache: Cache`): any class deriving from it, so a method many of them
    # inherit runs as its own class has it, once, not once per class.
    declared: bool = False
    # Attributes known from where the object was built: what its constructor was given for them
    # (`Output(loss=x.mean())`: `loss` is a tensor).
    fields: tuple[tuple[str, "Value"], ...] = ()

    def field(self, name: str) -> "Value | None":
        return next((value for known, value in self.fields if known == name), None)


# A `torch.Generator` the code builds: an object of that class, as an attribute set to one is.
GENERATOR = ModuleValue(frozenset({"torch.Generator"}))
# nn.Module hook registrations (tensor hooks, `tensor.register_hook`, are traced), and the handle
# each gives: an object TorchDynamo cannot represent, made where the registration broke.
MODULE_HOOK_METHODS = frozenset(
    {
        "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
        "register_full_backward_pre_hook", "register_backward_hook", "register_state_dict_pre_hook",
        "register_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
    }
)
HOOK_HANDLE = ModuleValue(frozenset({"torch.utils.hooks.RemovableHandle"}))


@dataclass(frozen=True)
class MethodValue:
    """Methods of an object, not called yet: `self.loss = self.mat_loss if m else self.pair_loss`,
    `getattr(self, f"{kind}_reduction")`. `classes` are what the object may be built from;
    `names` the methods' names, or shell-style patterns of them (`*_reduction`)."""

    classes: frozenset[str]
    names: frozenset[str]


Value = Kind | ModuleValue | MethodValue


@dataclass(frozen=True, eq=False)
class Container(Kind):
    """A tuple, list or dict built in the code, with what each position (`items`) or constant
    string key (`keys`) holds. As a kind it is TENSORS when it holds a tensor, else OTHER (and
    equal to that kind), so questions about containers hold for it too."""

    items: tuple[Value, ...] | None = None
    keys: tuple[tuple[str, Value], ...] | None = None
    sort: str = ""  # "list", "tuple", "dict", "set" or "generator" when known: what iterating it gives TorchDynamo
    # What any element (a dict's any value) may be where positions and keys are not tracked: a
    # list grown by `append`, a comprehension. None: not tracked.
    elements: Value | None = None


@dataclass(frozen=True, eq=False)
class Callables(Kind):
    """Scanned functions or classes themselves, not called yet: `spline_fn = rational_spline`,
    `Euler`, or what `select(method)` returns when each of its `return`s names one. As a kind it
    is OTHER (and equal to it): a Python value; calling it runs one of `names` (qualified), or
    builds an object of it."""

    names: frozenset[str] = frozenset()


def callables(names: frozenset[str]) -> Callables:
    return Callables(OTHER.name, names=names)


def container(items: tuple[Value, ...] | None = None, keys: tuple[tuple[str, Value], ...] | None = None,
              sort: str = "", holds_tensors: bool = False, elements: Value | None = None) -> Container:
    held = [*(items or ()), *(value for _, value in keys or ()), *([elements] if elements is not None else [])]
    tensors = [value for value in held if value in (TENSOR, TENSORS)]
    if tensors and all(on_some_paths(value) for value in tensors) and not holds_tensors:
        # It holds tensors only where they were reached on some paths.
        return Container(SOME_PATHS_TENSORS.name, family=TENSORS.name, items=items, keys=keys, sort=sort,
                         elements=elements)
    return Container((TENSORS if holds_tensors or tensors else OTHER).name, items=items, keys=keys, sort=sort,
                     elements=elements)


def held(value: Value) -> Value | None:
    """What any element (a dict's any value) of a container built in the code may be; None when
    that is not tracked."""
    if not isinstance(value, Container):
        return None
    parts = [*(value.items or ()), *(part for _, part in value.keys or ())]
    if value.elements is not None:
        parts.append(value.elements)
    if not parts:
        return None
    return functools.reduce(join, parts)


def join_held(a: Value | None, b: Value | None) -> Value | None:
    """`join` of what two containers hold; what one of them does not track stays untracked, but
    for a value the analysis cannot tell, which is kept."""
    if a is None or b is None:
        known = a if b is None else b
        return known if known == UNKNOWN else None
    return join(a, b)


def sort_of(value: Value) -> str:
    return value.sort if isinstance(value, Container) else ""


def item(value: Value, index: int | str) -> Value | None:
    """What a container built in the code holds at a constant index or key; None if not known."""
    if not isinstance(value, Container):
        return None
    if isinstance(index, str):
        return dict(value.keys or ()).get(index)
    items = value.items or ()
    return items[index] if -len(items) <= index < len(items) else None


def _join_containers(a: Value, b: Value) -> Value:
    """Position by position where both are containers of the same shape, else the plain kind."""
    if isinstance(a, Container) and isinstance(b, Container):
        sort = a.sort if a.sort == b.sort else ""
        # What either holds beyond its tracked positions and keys (`{}` before a loop, and what the
        # loop stored in it under keys not known).
        others = [e for e in (a.elements, b.elements) if e is not None]
        elements = functools.reduce(join, others) if others else None
        if a.items is not None and b.items is not None and len(a.items) == len(b.items):
            return container(items=tuple(join(x, y) for x, y in zip(a.items, b.items)), sort=sort, elements=elements)
        if a.keys is not None and b.keys is not None and [k for k, _ in a.keys] == [k for k, _ in b.keys]:
            return container(keys=tuple((k, join(x, y)) for (k, x), (_, y) in zip(a.keys, b.keys)), sort=sort,
                             elements=elements)
        if sort == "dict" and (a.keys is not None or b.keys is not None):
            # Dicts of other keys (`**kwargs` from two callers): each key holds what either gave it,
            # and any other key what either's untracked keys hold.
            keys = dict(a.keys or ())
            for key, value in b.keys or ():
                keys[key] = join(keys[key], value) if key in keys else value
            return container(keys=tuple(keys.items()), sort=sort, elements=elements)
        if sort:
            # `candidates = []` before a loop that extends it: what the loop put in it (the empty
            # one holds nothing to join).
            elements = held(b) if _known_empty(a) else held(a) if _known_empty(b) else join_held(held(a), held(b))
            return container(sort=sort, holds_tensors=TENSORS in (a, b), elements=elements)
    return TENSORS if TENSORS in (a, b) else OTHER


def _known_empty(value: Container) -> bool:
    return value.elements is None and (value.items == () or value.keys == ())

_RANK = {UNKNOWN: 1, MAYBE_TENSOR: 2, TENSORS: 3, TENSOR: 4}


def identical(a: object, b: object) -> bool:
    """Equal, refinements included (`==` takes a mask for a tensor): for telling whether a value a
    walk learned differs from what an earlier walk saw. Also compares tuples and dicts of values."""
    return _exact(a) == _exact(b)


def _exact(value: object) -> object:
    if isinstance(value, Container):
        return (value.name, value.sort, _exact(value.items), _exact(value.keys), _exact(value.elements))
    if isinstance(value, Kind):
        return value.name
    if isinstance(value, tuple):
        return tuple(map(_exact, value))
    if isinstance(value, dict):
        return {key: _exact(item) for key, item in value.items()}
    return value


def is_assumed_tensor(value: Value) -> bool:
    """A root's untyped parameter, or a value computed from it as from a Python number, taken for
    a tensor (or, ASSUMED_OPTIONAL, an optional one) only by assumption."""
    return isinstance(value, Kind) and value.name in (ASSUMED_TENSOR.name, ASSUMED_OPTIONAL.name)


def is_tensor_text(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == TENSOR_TEXT.name


def is_mode(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == MODE.name


_GUARDED = {VARYING_INT.name: INT, VARYING_INTS.name: INT, VARYING_FLOAT.name: FLOAT, VARYING_STR.name: STR, VARYING_BOOL.name: BOOL,
            VARYING_OBJECT.name: OTHER, VARYING_OPTIONAL.name: MAYBE_TENSOR, VARYING_LITERAL.name: OTHER,
            VARYING_LENGTH.name: TENSORS}


def is_varying_str(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == VARYING_STR.name


def varying_constant(value: Value) -> str | None:
    """"bool", "object", "optional", "literal" or "length" for a bool, a named object, a tensor or
    None, a literal container, or a list of tensors of some length, that the declared calls vary
    (BR018)."""
    names = {VARYING_BOOL.name: "bool", VARYING_OBJECT.name: "object", VARYING_OPTIONAL.name: "optional",
             VARYING_LITERAL.name: "literal", VARYING_LENGTH.name: "length"}
    return names.get(value.name) if isinstance(value, Kind) else None


def guarded(value: Value) -> Value:
    """What a value the declared calls vary is once the frame has read it: TorchDynamo guarded it
    there, and each compiled version holds one constant."""
    if isinstance(value, Kind):
        return _GUARDED.get(value.name, value)
    return value


def varying_number(value: Value) -> str | None:
    """"int" or "float" for a number the declared calls vary, else None."""
    if isinstance(value, Kind) and value.name in (VARYING_INT.name, VARYING_INTS.name, VARYING_FLOAT.name):
        return value.family
    return None


def is_many_varying_ints(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == VARYING_INTS.name


def data_held(value: Value) -> str | None:
    """"size" for a tensor whose size the data decides, "number" for a number read from data (see
    DATA_SIZED), in the value or in a container it is; else None."""
    if isinstance(value, Container):
        parts = [*(value.items or ()), *(part for _, part in value.keys or ()),
                 *([value.elements] if value.elements is not None else [])]
        found = {data_held(part) for part in parts} - {None}
        return "size" if "size" in found else found.pop() if found else None
    if isinstance(value, Kind):
        if value.name == DATA_SIZED.name:
            return "size"
        if value.name in (DATA_INT.name, DATA_FLOAT.name):
            return "number"
    return None


def is_state(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == STATE.name


def as_data(value: Value) -> Value:
    """A plain tensor, tensors, int or float, as one the data decides (what else it is, kept)."""
    if isinstance(value, Kind) and not isinstance(value, Container):
        if value.name == TENSOR.name:
            return DATA_SIZED
        if value.name == TENSORS.name:
            return container(sort="tuple", elements=DATA_SIZED)
        if value.name == INT.name:
            return DATA_INT
        if value.name == FLOAT.name:
            return DATA_FLOAT
    return value


def is_sparse(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == SPARSE.name


# Tensor methods and torch functions whose result is a sparse tensor.
SPARSE_METHODS = frozenset({"to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                            "to_sparse_bsc"})
# Methods of a sparse tensor whose result is sparse too (`torch.sparse_coo_tensor(i, v, s).coalesce()`).
SPARSE_KEEPING_METHODS = frozenset({"coalesce", "clone", "detach", "to", "cpu", "cuda", "float", "double", "half",
                                    "t", "transpose", "requires_grad_"})
SPARSE_FACTORIES = frozenset(f"torch.{name}" for name in (
    "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor",
    "sparse_compressed_tensor"))


def is_zero_dim(value: Value) -> bool:
    """A 0-d tensor computed in the graph (see ZERO_DIM)."""
    return isinstance(value, Kind) and value.name == ZERO_DIM.name


def is_vector(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == VECTOR.name


def is_zero_dim_input(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == ZERO_DIM_INPUT.name


def is_drawn(value: Value) -> bool:
    """A number the `random` module draws inside the graph (DRAWN_FLOAT, DRAWN_INT)."""
    return isinstance(value, Kind) and value.name in (DRAWN_FLOAT.name, DRAWN_INT.name)


def is_mask(value: Value) -> bool:
    """A tensor known to hold booleans."""
    return isinstance(value, Kind) and value.name == MASK.name


def is_numpy_float(value: Value) -> bool:
    return isinstance(value, Kind) and value.name == NUMPY_FLOAT.name


# Elementwise NumPy functions whose result on Python numbers is a float whatever the inputs, and
# those whose result is a float only when an input is.
_NUMPY_FLOAT_RESULTS = frozenset({
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "hypot",
    "deg2rad", "rad2deg", "radians", "degrees", "divide", "true_divide", "float16", "float32", "float64",
    "double", "single",
})
_NUMPY_DTYPE_PRESERVING = frozenset({
    "ceil", "floor", "trunc", "rint", "round", "around", "fix", "abs", "absolute", "fabs", "maximum",
    "minimum", "fmax", "fmin", "clip", "power", "add", "subtract", "multiply", "negative", "positive", "sign",
    "square", "array", "asarray",
})


# Python types as a NumPy dtype that torch has no dtype for: an array of them holds Python
# objects, which TorchDynamo does not trace (probed: GB0055); `int`, `float`, `bool` map to torch dtypes.
NUMPY_OBJECT_DTYPES = frozenset(f"builtins.{name}" for name in ("object", "str", "bytes", "complex"))


def numpy_call_value(function: str, arguments: list[Value]) -> Kind:
    """What `numpy.<function>(*arguments)` is under trace_numpy: data (a tensor), refined to
    NUMPY_FLOAT when no argument is a tensor and the result is a float."""
    if arguments and all(argument in PLAIN for argument in arguments) and (
            function in _NUMPY_FLOAT_RESULTS
            or (function in _NUMPY_DTYPE_PRESERVING and any(argument == FLOAT for argument in arguments))):
        return NUMPY_FLOAT
    return TENSOR


def as_passed(value: Value) -> Value:
    """A value as the function it is passed to holds it: an object is not built there."""
    return dataclasses.replace(value, fresh=False) if isinstance(value, ModuleValue) and value.fresh else value


def is_plain(value: Value) -> bool:
    """A Python value known not to be a tensor."""
    return value in PLAIN


def join(a: Value, b: Value) -> Value:
    """What a value may be after two paths meet (branches, call sites, returns): the more
    tensor-like of the two; a tensor or None is an optional tensor; two kinds of Python value are
    a Python value (numbers stay numbers)."""
    if isinstance(a, Container) or isinstance(b, Container):
        if (a in (TENSORS, OTHER)) and (b in (TENSORS, OTHER)):
            return _join_containers(a, b)
        a, b = (Kind(a.name) if isinstance(a, Container) else a), (Kind(b.name) if isinstance(b, Container) else b)
    if isinstance(a, Callables) or isinstance(b, Callables):
        if isinstance(a, Callables) and isinstance(b, Callables):
            return callables(a.names | b.names)
        a, b = (Kind(a.name) if isinstance(a, Callables) else a), (Kind(b.name) if isinstance(b, Callables) else b)
    if a == b:
        # A mask and a tensor of another dtype: a tensor.
        if not isinstance(a, Kind) or not isinstance(b, Kind) or a.name == b.name:
            return a
        if a == STR:
            return STR  # tensor text (or a varying string) on one path only: not known to be it
        if is_drawn(a) or is_drawn(b):
            return a if is_drawn(a) else b  # a draw on one path (training's crop start): used as a number, it breaks there
        for plain in (BOOL, INT, FLOAT):
            if a == plain:
                return plain  # the training mode, a varying number, on one path only
        if a == MAYBE_TENSOR:
            return MAYBE_TENSOR
        if a == OTHER:
            return OTHER  # a varying object or literal on one path only: an object
        if a == NONE:
            return NONE_ATTRIBUTE  # None as built on one path: not decided None
        if {a.name, b.name} == {ZERO_DIM.name, ZERO_DIM_INPUT.name}:
            return ZERO_DIM  # the input on one call, one computed from it on another: 0-d, computed on some
        return TENSORS if a == TENSORS else TENSOR
    if isinstance(a, ModuleValue) and isinstance(b, ModuleValue):
        fields = tuple((name, join(value, other)) for name, value in a.fields
                       if (other := b.field(name)) is not None)  # what both paths built it with
        return ModuleValue(a.classes | b.classes, a.fresh and b.fresh, a.declared or b.declared, fields)
    if isinstance(a, MethodValue) and isinstance(b, MethodValue):
        return MethodValue(a.classes | b.classes, a.names | b.names)
    if isinstance(a, (ModuleValue, MethodValue)) or isinstance(b, (ModuleValue, MethodValue)):
        obj, other = (a, b) if isinstance(a, (ModuleValue, MethodValue)) else (b, a)
        if other in (TENSOR, TENSORS) or isinstance(other, (ModuleValue, MethodValue)):
            return other
        # The object on some paths only: not one this function certainly built.
        return dataclasses.replace(obj, fresh=False) if isinstance(obj, ModuleValue) and obj.fresh else obj
    if (is_drawn(a) and b == UNKNOWN) or (is_drawn(b) and a == UNKNOWN):
        return a if is_drawn(a) else b  # a draw on one path: a Python use of it breaks there
    if {a, b} == {TENSOR, NONE} or {a, b} == {TENSOR, MAYBE_TENSOR}:
        # A tensor, or a value that may be None: it may be None (an assumed one stays assumed).
        return ASSUMED_OPTIONAL if all(is_assumed_tensor(k) for k in (a, b) if k != NONE) else MAYBE_TENSOR
    if is_plain(a) and is_plain(b):
        if is_drawn(a) or is_drawn(b):
            return a if is_drawn(a) else b  # a draw on one path: a Python use of it breaks there
        if a in NUMBERS and b in NUMBERS:
            return FLOAT if FLOAT in (a, b) else INT
        return OTHER
    return a if _RANK.get(a, 0) >= _RANK.get(b, 0) else b


def join_branches(a: Value, b: Value) -> Value:
    """`join` for one name's values after two branches: a tensor on one and a Python value on the
    other is a tensor on some paths only."""
    joined = join(a, b)
    if joined in (TENSOR, TENSORS) and (is_plain(a) or is_plain(b)):
        if is_assumed_tensor(joined if joined == TENSOR else held(joined) or TENSORS):
            return joined  # a tensor only by assumption on the other path: a number on both
        return SOME_PATHS_TENSOR if joined == TENSOR else SOME_PATHS_TENSORS
    return joined


def on_some_paths(value: Value) -> bool:
    return isinstance(value, Kind) and value.name in (SOME_PATHS_TENSOR.name, SOME_PATHS_TENSORS.name)


def on_some_paths_only(value: Value) -> Value:
    """A tensor (or tensors) derived from values that are tensors on some paths only."""
    if isinstance(value, Container):
        return value if value != TENSORS else Container(SOME_PATHS_TENSORS.name, family=TENSORS.name, items=value.items,
                                                        keys=value.keys, sort=value.sort, elements=value.elements)
    return SOME_PATHS_TENSOR if value == TENSOR else SOME_PATHS_TENSORS if value == TENSORS else value


def literal_kind(node: cst.BaseExpression) -> Kind | None:
    """The kind of a literal expression (`3`, `0.5`, `"a"`, `True`, `None`), else None."""
    if isinstance(node, cst.Integer):
        return INT
    if isinstance(node, cst.Float):
        return FLOAT
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return STR
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return BOOL
    if isinstance(node, cst.Name) and node.value == "None":
        return NONE
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return literal_kind(node.expression)
    return None


def written_bool(node: cst.BaseExpression) -> Kind | None:
    """TRUE or FALSE for the literal `True` / `False`, else None."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return TRUE if node.value == "True" else FALSE
    return None


def known_truth(value: Value) -> bool | None:
    """True/False for a bool known to be that (see TRUE), else None."""
    if not isinstance(value, Kind):
        return None
    return True if value.name == TRUE.name else False if value.name == FALSE.name else None


def is_tensorish(value: Value) -> bool:
    return value in (TENSOR, MAYBE_TENSOR)


# Tensor attributes and methods whose results are Python metadata, not tensor data.
METADATA_ATTRIBUTES = frozenset(
    {
        "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "is_mps", "requires_grad", "layout",
        "is_leaf", "is_sparse", "is_quantized", "is_meta", "is_nested", "names", "grad_fn", "itemsize",
        "nbytes", "training", "output_nr", "_version",
    }
)
METADATA_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset",
        "is_contiguous", "is_floating_point", "is_complex", "get_device", "data_ptr", "item", "tolist",
        "__len__", "untyped_storage", "storage", "is_pinned", "is_shared", "dim_order", "has_names",
        "is_signed", "is_inference", "type", "is_set_to", "parameters", "named_parameters",
        "buffers", "children", "modules", "state_dict", "keys", "__class__",
    }
)
# Methods that change a list or dict in place: those that add to it, and those that add nothing.
CONTAINER_ADDING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "__setitem__"})
CONTAINER_REMOVING_METHODS = frozenset({"pop", "remove", "clear", "sort", "reverse", "popitem"})
# Methods torch.Tensor does not have: whatever was inferred, their receiver is a list, dict or str.
CONTAINER_METHODS = frozenset(
    {
        "copy", "pop", "append", "extend", "insert", "remove", "clear", "count", "reverse", "items", "get",
        "update", "setdefault", "popitem", "startswith", "endswith", "join", "format", "lower", "upper",
        "strip", "encode", "decode",
    }
)
# nn.Module's own methods, and those of Python's containers, strings and numbers: names too general
# to tell, from a call of one, which scanned class the receiver is (torch.Tensor's are in the catalogue).
GENERAL_METHOD_NAMES = frozenset({
    "forward", "train", "eval", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "to_empty", "apply",
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "register_buffer", "register_parameter", "add_module", "register_module", "get_submodule",
    "get_parameter", "get_buffer", "state_dict", "load_state_dict", "zero_grad", "requires_grad_", "extra_repr",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "compile", "type",
}) | frozenset(name for kind in (dict, list, tuple, set, str, bytes, int, float) for name in dir(kind))
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})
# What tensor metadata attributes and methods give, where it is a known Python kind.
TENSOR_METADATA_KINDS: dict[str, Kind] = {
    "shape": SHAPE, "ndim": INT, "itemsize": INT, "nbytes": INT, "output_nr": INT, "_version": INT,
    "dim": INT, "ndimension": INT, "numel": INT, "nelement": INT, "element_size": INT, "storage_offset": INT,
    "get_device": INT, "__len__": INT, "count": INT,
    **{name: BOOL for name in (
        "is_cuda", "is_cpu", "is_mps", "requires_grad", "is_leaf", "is_sparse", "is_quantized", "is_meta",
        "is_nested", "is_contiguous", "is_floating_point", "is_complex", "is_pinned", "is_shared", "is_signed",
        "is_inference", "is_set_to", "has_names", "training")},
}
SPLITTING_METHODS = frozenset({"chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "unflatten_"})
SPLITTING_FUNCTIONS = frozenset(
    {
        "torch.chunk", "torch.split", "torch.unbind", "torch.tensor_split", "torch.meshgrid",
        "torch.broadcast_tensors", "torch.autograd.grad", "torch.sort", "torch.topk", "torch.mode",
        "torch.kthvalue", "torch.std_mean", "torch.var_mean",
        "torch.unique", "torch.linalg.eigh", "torch.linalg.qr", "torch.linalg.svd", "torch.histogram",
    }
)
# torch callables that return Python metadata or objects, not tensors.
NON_TENSOR_TORCH = frozenset(
    {
        "torch.is_tensor", "torch.is_storage", "torch.is_floating_point", "torch.is_complex", "torch.numel",
        "torch.is_grad_enabled", "torch.is_inference_mode_enabled", "torch.get_default_dtype",
        "torch.get_default_device", "torch.finfo", "torch.iinfo", "torch.device", "torch.promote_types",
        "torch.result_type", "torch.can_cast", "torch.broadcast_shapes", "torch.typename",
        "torch.is_autocast_enabled", "torch.get_autocast_dtype", "torch.get_autocast_gpu_dtype",
        "torch.are_deterministic_algorithms_enabled", "torch.is_anomaly_enabled", "torch.get_num_threads",
        "torch.nn.functional._canonical_mask", "torch.overrides.has_torch_function",
        "torch.overrides.has_torch_function_unary", "torch.overrides.has_torch_function_variadic",
    }
)
NON_TENSOR_TORCH_PREFIXES = (
    "torch.cuda.", "torch.cpu.", "torch.xpu.", "torch.mps.", "torch.mtia.", "torch.accelerator.", "torch.backends.",
    "torch.compiler.", "torch._dynamo.", "torch.jit.", "torch.distributed.", "torch.utils.", "torch.version", "torch.onnx.", "torch.fx.", "torch._C.", "torch._utils.",
    "torch.nn.init.calculate", "torch.library.",
)
NON_TENSOR_BUILTINS = frozenset(
    {
        "builtins.len", "builtins.isinstance", "builtins.issubclass", "builtins.hasattr", "builtins.int",
        "builtins.float", "builtins.bool", "builtins.str", "builtins.repr", "builtins.range",
        "builtins.enumerate", "builtins.zip", "builtins.type", "builtins.id", "builtins.hash",
        "builtins.callable", "builtins.format", "builtins.print", "builtins.dict", "builtins.set",
        "builtins.frozenset", "builtins.super", "builtins.object", "builtins.any", "builtins.all",
        "builtins.vars", "builtins.dir", "builtins.open", "builtins.iter", "builtins.next", "builtins.ord",
        "builtins.chr",
    }
)
BUILTIN_RESULT_KINDS: dict[str, Kind] = {
    "builtins.len": INT, "builtins.int": INT, "builtins.id": INT, "builtins.hash": INT, "builtins.ord": INT,
    "builtins.float": FLOAT,
    "builtins.bool": BOOL, "builtins.isinstance": BOOL, "builtins.issubclass": BOOL, "builtins.hasattr": BOOL,
    "builtins.callable": BOOL, "builtins.any": BOOL, "builtins.all": BOOL,
    "builtins.str": STR, "builtins.repr": STR, "builtins.format": STR, "builtins.chr": STR,
    "builtins.print": NONE,
}
CONTAINER_BUILTINS = frozenset({"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.reversed", "builtins.map", "builtins.filter"})
# What these builtins build, when it is a list or a dict.
BUILT_SORT = {"builtins.list": "list", "builtins.sorted": "list", "builtins.dict": "dict"}


def torch_call_value(qualified: str) -> Value:
    """The kind of value a call to a torch callable returns: what torch declares, else by name."""
    if qualified in NON_TENSOR_TORCH or qualified.startswith(NON_TENSOR_TORCH_PREFIXES):
        return OTHER
    declared = declared_kind(qualified)
    if declared is not None:
        return declared
    if qualified in SPLITTING_FUNCTIONS:
        return TENSORS
    last = qualified.rsplit(".", 1)[-1]
    if last[:1].isupper():
        return ModuleValue(frozenset({qualified})) if qualified.startswith("torch.nn.") else OTHER
    return TENSOR


# What the probed results are, as kinds. An ndarray counts as a tensor: TorchDynamo traces NumPy
# (its `if arr.sum() > 0` breaks as a tensor's would).
_RESULT_KINDS: dict[str, Kind] = {
    "tensor": TENSOR, "ndarray": TENSOR, "int": INT, "float": FLOAT, "bool": BOOL, "size": SHAPE, "str": STR,
    "none": NONE, "dict": OTHER, "other": OTHER,
}
# A probe's parameters are its tensor inputs.
_PROBE_PARAMETERS = re.compile(r"def probe\(([^)]*)\)")


@dataclass(frozen=True)
class _Form:
    """One probed way of calling something: which positional arguments were tensors, which keywords."""

    positional: tuple[bool, ...]
    keywords: frozenset[str]
    kind: Kind


@functools.lru_cache(maxsize=4096)
def _forms(key: str) -> tuple[_Form, ...]:
    forms = []
    for entry in catalogue.entries(key):
        if entry.status != "ok" or entry.result in ("error", "unknown"):
            continue
        try:
            call = ast.parse(entry.call, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call):
            continue
        found = _PROBE_PARAMETERS.search(entry.source)
        tensors = {name.strip() for name in found.group(1).split(",")} if found else set()
        positional = tuple(isinstance(a, ast.Name) and a.id in tensors for a in call.args)
        keywords = frozenset(k.arg for k in call.keywords if k.arg)
        forms.append(_Form(positional, keywords, _result_kind(entry.result, entry.items)))
    return tuple(forms)


def uniform_result(key: str) -> Kind | None:
    """The Python kind every probe of `key` returned, whatever it was given (`json.dumps`: a str);
    None when the probes differ, returned something else, or there are none."""
    kinds = {form.kind.name: form.kind for form in _forms(key)}
    kind = kinds.popitem()[1] if len(kinds) == 1 else None
    return kind if kind is not None and is_plain(kind) else None


def declared_kind(qualified: str) -> Kind | None:
    """What torch declares a function or tensor method ("torch.Tensor.is_contiguous") returns."""
    result = catalogue.declared_result(qualified)
    if result is None:
        return None
    return TENSORS if result == "tensors" else _result_kind(result, None)


def _result_kind(result: str, items: str | None) -> Kind:
    if result in ("tuple", "list"):
        return TENSORS if items == "tensor" else OTHER
    return _RESULT_KINDS.get(result, OTHER)


def probed_kind(key: str, positional: list[Value], keywords: Mapping[str, Value] | None = None) -> Kind | None:
    """What a call of `key` ("torch.Tensor.max", "torch.where") returns, from the catalogue's probe
    most like this call: same keywords and number of arguments, then the same arguments tensors.
    Keyword arguments no probe passed by name are matched as the positional ones they stand for
    (`x.max(dim=-1)` as `x.max(-1)`, a named tuple); None when nothing like it was probed."""
    forms = _forms(key)
    if not forms:
        return None
    keywords = keywords or {}
    tensors = tuple(value in (TENSOR, MAYBE_TENSOR, TENSORS) for value in positional)
    alike = [f for f in forms if f.keywords == frozenset(keywords) and len(f.positional) == len(tensors)]
    if not alike and keywords:
        tensors += tuple(value in (TENSOR, MAYBE_TENSOR, TENSORS) for value in keywords.values())
        alike = [f for f in forms if not f.keywords and len(f.positional) == len(tensors)]
    exact = [f for f in alike if f.positional == tensors]
    chosen = (exact or alike)[:1]
    if not chosen:
        return forms[0].kind if len(forms) == 1 and not keywords and not positional else None
    return chosen[0].kind


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
BOOL_DTYPES = frozenset({"torch.bool", "builtins.bool"})


# What calling a library function builds, where the catalogue probed the methods of such an object
# built outside the compiled code: `np.random.default_rng(seed)` a NumPy `Generator`, `iter(xs)` an
# iterator, `open(path, "w")` a file, `zip(a, b)`, the other iterator classes and the classes probed
# so (`random.Random(0)`, `queue.Queue()`, `csv.writer(stream)`) an object of their own class.
OBJECT_FACTORIES = {
    "numpy.random.default_rng": "numpy.random.Generator",
    "builtins.iter": "builtins.iterator",
    "builtins.open": "io.TextIOWrapper",
    **{name: name for name in ("builtins.zip", "builtins.map", "builtins.enumerate", "builtins.filter",
                               "builtins.reversed", "itertools.cycle", "itertools.count", "itertools.chain",
                               "itertools.islice", "itertools.repeat", "numpy.random.RandomState",
                               "numpy.random.Generator", "random.Random", "queue.Queue", "threading.Lock",
                               "csv.writer", "io.StringIO", "io.BytesIO")},
}
