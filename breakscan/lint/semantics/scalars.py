"""What the scalar-extraction and control-flow rules ask about an expression beyond the walker's
value kinds: whether it surely holds tensor data (`holds_tensor_data`: not an optional tensor, not
arithmetic on a root's untyped parameter such as Swin's `H`), whether it is a 0-d tensor made in
the graph (`is_scalar_tensor`), and whether a size use of it is the one that breaks (`first_size_use`).
"""

from __future__ import annotations

import weakref

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.traverse import find_nodes

# Methods (and torch functions) that reduce every element to a 0-d tensor when given no dim.
FULL_REDUCTIONS = frozenset(
    {
        "sum", "mean", "max", "min", "argmax", "argmin", "prod", "amax", "amin", "all", "any", "norm",
        "std", "var", "median", "nansum", "nanmean", "count_nonzero",
    }
)
# Methods that keep a 0-d tensor 0-d.
SHAPE_PRESERVING = frozenset(
    {
        "long", "int", "float", "double", "half", "bool", "to", "type_as", "clamp", "clip", "clamp_min",
        "clamp_max", "detach", "abs", "neg", "round", "floor", "ceil", "trunc", "add", "sub", "mul", "div",
        "remainder", "fmod", "pow",
    }
)
_DIM_KEYWORDS = frozenset({"dim", "axis"})


# Per walk of a function, the local names already used as a size or an index (see `first_size_use`).
_SIZE_USES: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()


def _bindings(ctx) -> "_Bindings":
    return ctx.memoised(_collect_bindings, ctx.function.node)


def _collect_bindings(function: cst.FunctionDef) -> "_Bindings":
    found = _Bindings(function)
    for node in find_nodes(function.body, _Bindings.BINDING_NODES):
        found.add(node)
    return found


class _Bindings:
    """Every way a name is bound in one function, nested functions and lambdas included:
    `assigned[name]` lists the right-hand sides of plain `name = value` bindings (None for any
    other binding: unpacking, `+=`, loop targets, `with ... as`, imports)."""

    BINDING_NODES = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.AsName,
                     cst.FunctionDef, cst.Lambda)

    def __init__(self, function: cst.FunctionDef):
        self.assigned: dict[str, list[cst.BaseExpression | None]] = {}
        # name -> what each of its bindings takes an element of: the iterable of a loop target,
        # the tensor of `t[i]` (None for any other binding)
        self.elements: dict[str, list[cst.BaseExpression | None]] = {}
        self.positional = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        self.parameters = {p.name.value for p in _parameters(function.params)}
        self.nested_parameters: set[str] = set()

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None,
              element_of: cst.BaseExpression | None = None) -> None:
        if isinstance(target, cst.Name):
            self.assigned.setdefault(target.value, []).append(value)
            if element_of is None and isinstance(value, cst.Subscript) and _single_index(value):
                element_of = value.value
            self.elements.setdefault(target.value, []).append(element_of)
        elif isinstance(target, (cst.Tuple, cst.List)):
            # Not taken for elements of a tensor: what is unpacked is as often a tuple of tensors
            # the analysis took for one (`a1, p, a2, n = indices_tuple`, `values, order = t.sort(0)`).
            for element in target.elements:
                self._bind(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)

    def add(self, node: cst.CSTNode) -> None:
        """Record the names one of the `BINDING_NODES` binds."""
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind(target.target, node.value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self._bind(node.target, node.value)
        elif isinstance(node, cst.NamedExpr):
            self._bind(node.target, node.value)
        elif isinstance(node, (cst.For, cst.CompFor)):
            if isinstance(node.target, cst.Name):
                self._bind(node.target, None, node.iter)
            else:
                self._bind(node.target, None)
        elif isinstance(node, cst.AugAssign):
            self._bind(node.target, None)
        elif isinstance(node, cst.AsName):
            self._bind(node.name, None)
        else:  # a nested function or lambda
            self.nested_parameters.update(p.name.value for p in _parameters(node.params))


# torch functions and tensor methods that give a tuple of tensors (some only with arguments).
_GIVE_TUPLES = frozenset({
    "sort", "topk", "max", "min", "median", "mode", "kthvalue", "aminmax", "std_mean", "var_mean", "chunk", "split",
    "tensor_split", "unbind", "where", "nonzero", "unique", "unique_consecutive", "frexp", "histogram", "slogdet",
    "lu", "qr", "svd", "eig", "eigh", "lstsq", "meshgrid", "broadcast_tensors", "cummax", "cummin",
})


def _single_index(subscript: cst.Subscript) -> bool:
    """`t[i]`: one index, not a slice."""
    return len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)


def tensor_element(node: cst.BaseExpression, ctx) -> cst.BaseExpression | None:
    """The tensor a local name is always an element of (`for idx in perm`, `idx = perm[i]` with a
    Python index): 0-d when that tensor has one dimension, which the lint cannot tell. None for
    anything else."""
    if not isinstance(node, cst.Name):
        return None
    sources = _bindings(ctx).elements.get(node.value)
    if not sources or any(source is None or not _made_tensor(source, ctx) for source in sources):
        return None
    for value in assigned_values(node.value, ctx):
        if isinstance(value, cst.Subscript) and not v.is_plain(ctx.value(value.slice[0].slice.value)):
            return None  # `perm[k]` with a tensor `k`: advanced indexing, any shape
    return sources[0]


def _made_tensor(node: cst.BaseExpression, ctx, seen: frozenset[str] = frozenset()) -> bool:
    """A tensor the code makes (a torch call, a tensor method) or a module keeps (a buffer, a
    parameter), an input of the compiled function, or a local only ever bound to one: not a value
    a helper is passed, which the analysis may take for a tensor when it is a tuple of them
    (`a1, p, a2, n = indices_tuple`)."""
    if ctx.value(node) != v.TENSOR:
        return False
    if isinstance(node, cst.Attribute):
        return True
    if isinstance(node, cst.Call):  # torch's own, which the analysis knows to give one tensor
        qualified = ctx.qualname(node.func)
        name = qualified.rpartition(".")[2] if qualified else (
            node.func.attr.value if isinstance(node.func, cst.Attribute) and ctx.value(node.func.value) == v.TENSOR
            else None)
        return name is not None and (qualified is None or qualified.startswith("torch.")) and name not in _GIVE_TUPLES
    if not isinstance(node, cst.Name) or node.value in seen:
        return False
    if ctx.is_passed_in(node):
        return ctx.is_root  # the compiled function's own inputs
    values = assigned_values(node.value, ctx)
    return bool(values) and all(value is not None and _made_tensor(value, ctx, seen | {node.value}) for value in values)


def assigned_values(name: str, ctx) -> list[cst.BaseExpression | None]:
    """The right-hand sides bound to `name` in the function being walked (None: not a plain `=`)."""
    return _bindings(ctx).assigned.get(name, [])


def _parameters(params: cst.Parameters) -> list[cst.Param]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    kwargs = [params.star_kwarg] if params.star_kwarg is not None else []
    return [*params.posonly_params, *params.params, *star, *params.kwonly_params, *kwargs]


def _is_unknown_parameter(node: cst.Name, ctx) -> bool:
    """A parameter whose kind nobody passed in, never rebound: a root's untyped parameter other than
    its input (`H` and `W` in `forward(self, x, H, W)`) when no scanned code calls it, or a closure's. The walker assumes a
    tensor; it is as often a Python number."""
    bindings = _bindings(ctx)
    if bindings.assigned.get(node.value):
        return False
    if node.value in bindings.parameters:
        if v.is_assumed_tensor(ctx.value(node)):  # a root's, passed on as it was assumed
            return True
        function = ctx.function
        method = function.class_name is not None and not any(d.endswith("staticmethod") for d in function.decorators)
        inputs = bindings.positional[1:2] if method else bindings.positional[:1]
        declared = function.module.declared_arguments.get(function.qualname, ())
        if node.value in bindings.positional and (position := bindings.positional.index(node.value)) < len(declared) and (
                declared[position] is not None):
            return False  # what the calls BREAKSCAN_TARGETS declares pass it: known, not assumed
        return ctx.is_root and not ctx.is_called and node.value not in inputs
    return node.value in bindings.nested_parameters


def is_number_like(node: cst.BaseExpression, ctx, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether the expression is a tensor only because such a parameter is assumed to be one:
    `H`, `(ws - W % ws) % ws`, `np.ceil(H / ws)`, `pad_r > 0 or pad_b > 0`. Any tensor method or
    torch function in it (`x.sum()`, `torch.sum(H)`) says it really is a tensor."""
    if v.is_assumed_tensor(ctx.value(node)):
        return True  # computed from such a parameter as from a number, in this function or a caller
    if isinstance(node, cst.Name):
        if node.value in _seen:
            return False
        if _is_unknown_parameter(node, ctx):
            return True
        values = assigned_values(node.value, ctx)
        return bool(values) and all(
            value is not None and is_number_like(value, ctx, _seen | {node.value}) for value in values
        )
    if isinstance(node, cst.BinaryOperation):
        parts = [node.left, node.right]
    elif isinstance(node, cst.Comparison):
        parts = [node.left, *(c.comparator for c in node.comparisons)]
    elif isinstance(node, cst.BooleanOperation):
        parts = [node.left, node.right]
    elif isinstance(node, cst.UnaryOperation):
        parts = [node.expression]
    elif isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
        qualified = ctx.qualname(node.func)
        if qualified is None or qualified.startswith("torch."):
            return False  # a method of the value itself, or a torch function
        parts = [a.value for a in node.args]
    else:
        return False
    sources = [part for part in parts if not v.is_plain(ctx.value(part))]
    return bool(sources) and all(is_number_like(part, ctx, _seen) for part in sources)


def holds_tensor_data(node: cst.BaseExpression, ctx) -> bool:
    """A tensor whose data a Python conversion would need: not an optional tensor, and not a
    number-like expression of parameters only assumed to be tensors (`is_number_like`)."""
    return ctx.is_bool_tested_tensor(node) and not is_number_like(node, ctx)


def converts_without_break(node: cst.BaseExpression, ctx) -> bool:
    """`int()`/`float()`/`bool()` of it does not break although it is data: a float NumPy
    result made from Python numbers (`values.NUMPY_FLOAT`)."""
    return v.is_numpy_float(ctx.value(node))


def is_scalar_tensor(node: cst.BaseExpression, ctx, _seen: frozenset[str] = frozenset()) -> bool:
    """A 0-d tensor made in the compiled code: a full reduction (`x.argmax()`, `torch.sum(m)`),
    arithmetic on one, or a local name only ever bound to one; or one computed from a 0-d tensor
    every declared call gives (`t - 10` for `torch.tensor(50)`; the input itself is read and
    guarded, not a break)."""
    if v.is_zero_dim(ctx.value(node)):
        return True
    if isinstance(node, cst.Name):
        if node.value in _seen or ctx.value(node) != v.TENSOR:
            return False
        values = assigned_values(node.value, ctx)
        return bool(values) and all(
            value is not None and is_scalar_tensor(value, ctx, _seen | {node.value}) for value in values
        )
    if isinstance(node, cst.Call):
        return _is_scalar_call(node, ctx, _seen)
    if isinstance(node, (cst.BinaryOperation, cst.Comparison)):
        sides = [node.left, node.right] if isinstance(node, cst.BinaryOperation) else [
            node.left, *(c.comparator for c in node.comparisons)]
        scalar = [is_scalar_tensor(side, ctx, _seen) for side in sides]
        return any(scalar) and all(s or v.is_plain(ctx.value(side)) for s, side in zip(scalar, sides))
    if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
        return is_scalar_tensor(node.expression, ctx, _seen)
    return False


def _is_scalar_call(node: cst.Call, ctx, seen: frozenset[str]) -> bool:
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in node.args if a.keyword is not None}
    if any(a.star for a in node.args) or keywords & _DIM_KEYWORDS:
        return False
    func = node.func
    qualified = ctx.qualname(func)
    if qualified is not None:
        namespace, _, name = qualified.rpartition(".")
        return (namespace == "torch" and name in FULL_REDUCTIONS and len(positional) == 1
                and ctx.value(positional[0]) == v.TENSOR)
    if not isinstance(func, cst.Attribute) or ctx.value(func.value) != v.TENSOR:
        return False
    method = func.attr.value
    if method in FULL_REDUCTIONS:
        return not positional
    return (method in SHAPE_PRESERVING and is_scalar_tensor(func.value, ctx, seen)
            and all(v.is_plain(ctx.value(a)) or is_scalar_tensor(a, ctx, seen) for a in positional))


def first_size_use(node: cst.BaseExpression, ctx) -> bool:
    """Whether this use of a 0-d integer tensor as a size or index is the first of its name.

    The first one breaks the graph; every tensor alive there becomes an input of the graph that
    resumes after it, and TorchDynamo reads an integer input tensor as a Python int without
    breaking: `torch.zeros(n)` then `x.new_ones(n)` break once. (`n + 1` is new data: it breaks,
    and `n` is an input after it.)"""
    used = _SIZE_USES.setdefault(ctx, set())
    if not isinstance(node, cst.Name):
        labels = {id(n.attr) for n in find_nodes(node, (cst.Attribute,)) if isinstance(n, cst.Attribute)} | {
            id(n.keyword) for n in find_nodes(node, (cst.Arg,)) if isinstance(n, cst.Arg) and n.keyword is not None}
        used.update(name.value for name in find_nodes(node, (cst.Name,)) if isinstance(name, cst.Name)
                    and id(name) not in labels)
        return True
    if node.value in used:
        return False
    used.add(node.value)
    return True


def is_constant_tensor(node: cst.BaseExpression, ctx, _seen: frozenset[str] = frozenset()) -> bool:
    """A tensor TorchDynamo computes from Python numbers alone while tracing (`torch.div(x.size(1), 2,
    rounding_mode="trunc")`), or a local name only ever bound to one: as a size it is a known number
    (branching on it still breaks)."""
    if isinstance(node, cst.Name):
        if node.value in _seen:
            return False
        values = assigned_values(node.value, ctx)
        return bool(values) and all(
            value is not None and is_constant_tensor(value, ctx, _seen | {node.value}) for value in values)
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)):  # `chunks - 1`
        parts = [node.left, node.right] if isinstance(node, cst.BinaryOperation) else [node.expression]
        return any(is_constant_tensor(part, ctx, _seen) for part in parts) and all(
            v.is_plain(ctx.value(part)) or is_constant_tensor(part, ctx, _seen) for part in parts)
    if not isinstance(node, cst.Call) or not (ctx.qualname(node.func) or "").startswith("torch."):
        return False
    arguments = [a.value for a in node.args if not a.star]
    return bool(arguments) and all(v.is_plain(ctx.value(a)) for a in arguments)


def undecided_guard(test: cst.BaseExpression, ctx) -> cst.BaseExpression | None:
    """The Python condition before a test's data operand whose value breakscan cannot tell
    (`max_fpr is None` in `max_fpr is None or fpr.sum() == 0`): the data is read only where it
    lets the test go on."""
    for operand in _operands(test):
        if holds_tensor_data(operand, ctx):
            return None
        if ctx.decided(operand) is None:
            return operand
    return None


def data_operand(test: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """The part of a branch test whose truth needs tensor data: in `self.training and w != 0` it is
    `w != 0`, which runs only when the Python flag before it is true; the whole test when its
    first operand already needs data."""
    operands = _operands(test)
    first = next((operand for operand in operands if holds_tensor_data(operand, ctx)), None)
    return test if first is None or first is operands[0] else first


def _operands(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of an `and`/`or` chain in the order Python evaluates them (libcst nests
    `a or b or c` to the left)."""
    if isinstance(test, cst.BooleanOperation):
        return [*_operands(test.left), *_operands(test.right)]
    return [test]


def jump_holder(holder: cst.CSTNode, test: cst.BaseExpression, ctx) -> cst.CSTNode | None:
    """Where TorchDynamo reports the break of a branch on `test` when that is not the test's own
    line: Python 3.11 places the jump on a comparison at the comparison, and any other jump (on
    a call's result, a name, an `and`/`or` of them) at the statement or expression holding the
    test (`holder`: the `if`, the `while`, the conditional expression), whose first line may come
    before the test's. Probed: `if (\n (x < b).any()\n or ...\n):` breaks at the `if` line."""
    while True:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        elif isinstance(test, cst.BooleanOperation):
            test = test.left if holds_tensor_data(test.left, ctx) else test.right
        else:
            return None if isinstance(test, cst.Comparison) else holder

