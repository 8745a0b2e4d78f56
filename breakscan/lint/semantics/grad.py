"""Which tensors require grad, as far as recompiles go: a function compiled as a frame of its
own guards its tensor inputs' `requires_grad`, so a call given the caller's input (which requires
no grad) and a later one given what a layer computed (which does) compile it twice."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.traverse import ancestors, find_nodes, parent_map

_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode"})


def without_grad(call: cst.Call, ctx) -> bool:
    """Whether the call runs with grad mode off: the function is decorated `@torch.no_grad()` (or
    `inference_mode`), or the call is in a `with torch.no_grad():` block."""
    if any(ctx.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) in _GRAD_OFF
           for d in ctx.function.node.decorators):
        return True
    return any(isinstance(holder, cst.With) and any(
        isinstance(item.item, cst.Call) and ctx.qualname(item.item.func) in _GRAD_OFF for item in holder.items)
        for holder in ancestors(call, ctx.memoised(parent_map, ctx.function.top_statement)))


def parameters_carrying(call: cst.Call, callee, carried: list[cst.Name]) -> tuple[str, ...]:
    """The callee's parameters given the carried names (`blk(x)`: `forward`'s `x`)."""
    names = {name.value for name in carried}
    params = callee.positional_params
    positional = [a for a in call.args if a.keyword is None and not a.star]
    found = [params[i].name.value for i, a in enumerate(positional)
             if i < len(params) and isinstance(a.value, cst.Name) and a.value.value in names]
    found += [a.keyword.value for a in call.args
              if a.keyword is not None and isinstance(a.value, cst.Name) and a.value.value in names]
    return tuple(found)


def calls_a_layer(method, ctx) -> bool:
    """Whether a method of the module calls one of its layers (`self.lm_head(h)`): a call of
    `self.<name>` where `name` is no method of its class."""
    info = ctx.find_class(f"{method.module.name}.{method.class_name}")
    return info is not None and any(
        isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
        and ctx.method_of(info, call.func.attr.value) is None
        for call in find_nodes(method.node.body, (cst.Call,), prune=(cst.FunctionDef, cst.Lambda)))


def carried_from_input(name: str, call: cst.Call, ctx) -> bool:
    """Whether `name` is a parameter of the function, bound nowhere but in the loop around `call`
    (`x = blk(x)`): the loop's first pass gives the call the input, the next ones what it made."""
    function = ctx.function.node
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)} - {"self"}
    loop = next((holder for holder in ancestors(call, ctx.memoised(parent_map, ctx.function.top_statement))
                 if isinstance(holder, (cst.For, cst.While))), None)
    if loop is None:
        return False
    if not rebound_with_grad(loop, name, ctx):
        return False  # `residual = residual - q.detach()`: it never comes to require grad
    inside = {id(target) for target in bindings(loop.body, name)}
    outside = {id(target) for target in bindings(function.body, name)} - inside
    # A parameter, or a local the code before the loop computes from one (`state = (x - self.mean) / self.std`).
    sources = {name} if name in params else params
    return bool(inside) and (name in params or bool(outside)) and outside <= grad_free_rebindings(
        function.body, loop, name, sources, ctx)


def rebound_with_grad(loop: cst.For | cst.While, name: str, ctx) -> bool:
    """Whether the loop binds `name` to what may require grad (see `graded_names`)."""
    return name in graded_names(find_nodes(loop.body, _ASSIGNMENTS, prune=(cst.FunctionDef, cst.Lambda)), ctx)


def graded_names(assignments: Iterable[cst.CSTNode], ctx) -> set[str]:
    """The names these assignments bind to what may require grad: a value computed with a layer
    (a call of a module, of a method of the module that calls one, or of a function given one:
    `x = blk(x)`, `x = x + self.fc(x)`, `y_new = step(self.f, y)`) or with a name so bound, not
    through `.detach()` (`t, y = t + h, y_new`; not `residual = residual - q.detach()`)."""
    bound: list[tuple[set[str], cst.BaseExpression]] = []
    for node in assignments:
        if not isinstance(node, _ASSIGNMENTS) or node.value is None:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if (isinstance(target, cst.Tuple) and isinstance(node.value, cst.Tuple)
                    and len(target.elements) == len(node.value.elements)
                    and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *node.value.elements))):
                bound += [(bound_names(t.value), e.value) for t, e in zip(target.elements, node.value.elements)]
            else:
                bound.append((bound_names(target), node.value))
    graded: set[str] = set()
    changed = True
    while changed:
        changed = False
        for names, value in bound:
            if not names <= graded and computed_with_grad(value, graded, ctx):
                graded |= names
                changed = True
    return graded


_ASSIGNMENTS = (cst.Assign, cst.AugAssign, cst.AnnAssign)


def bound_names(target: cst.BaseExpression) -> set[str]:
    return {n.value for n in find_nodes(target, (cst.Name,), prune=(cst.Attribute, cst.Subscript))
            if isinstance(n, cst.Name)}


def computed_with_grad(value: cst.BaseExpression, graded: set[str], ctx) -> bool:
    """Whether the expression calls a layer, or reads a name in `graded` other than through `.detach()`."""
    calls = [call for call in find_nodes(value, (cst.Call,), prune=(cst.Lambda,)) if isinstance(call, cst.Call)]
    unread = {id(n) for call in calls if isinstance(call.func, cst.Attribute) and call.func.attr.value == "detach"
              for n in find_nodes(call.func.value, (cst.Name,))}
    unread |= {id(a.attr) for a in find_nodes(value, (cst.Attribute,)) if isinstance(a, cst.Attribute)}
    unread |= {id(arg.keyword) for call in calls for arg in call.args if arg.keyword is not None}
    if any(isinstance(n, cst.Name) and n.value in graded and id(n) not in unread
           for n in find_nodes(value, (cst.Name,), prune=(cst.Lambda,))):
        return True
    return any(calls_with_layer(call, ctx) for call in calls)


def calls_with_layer(call: cst.Call, ctx) -> bool:
    """A call of a module, of a method of the module that calls one of its layers, or of a function
    given a module: what it gives is computed with parameters."""
    if ctx.is_module(ctx.value(call.func)) or any(ctx.is_module(ctx.value(arg.value)) for arg in call.args):
        return True
    return (isinstance(call.func, cst.Attribute) and ctx.value(call.func.value) == v.SELF and ctx.self_is_module()
            and any(calls_a_layer(method, ctx) for method in ctx.callees(call)))


def grad_free_rebindings(body: cst.CSTNode, stop: cst.CSTNode, name: str, sources: set[str], ctx) -> set[int]:
    """`id` of the names `name` that the body's statements before `stop` (a loop) bind to what they compute from
    `sources` with no layer and no attribute of the object but its buffers (`x = torch.cat([x, x],
    dim=-1)`, `x = (x - self.mean) / self.std`): the input still, as far as requiring grad goes."""
    found: set[int] = set()
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if statement is stop:
            break
        # In a block too (`with timer:`, an `if` arm): a rebinding there keeps what it was given.
        for small in find_nodes(statement, (cst.Assign,), prune=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                continue
            value = small.value
            reads = {n.value for n in find_nodes(value, (cst.Name,)) if isinstance(n, cst.Name)}
            if (reads & sources and not uses_parameters(value, ctx)) or made_without_grad(value, ctx):
                found |= {id(target) for target in bindings(small, name)}
    return found


def uses_parameters(value: cst.BaseExpression, ctx) -> bool:
    """Whether the expression calls a module or reads an attribute of the object other than its
    buffers: what it computes may require grad."""
    owner = ctx.self_class
    buffers = {attr for known in ctx.class_lineage(owner) for attr in known.buffer_attrs} if owner else set()
    return any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == "self"
               and n.attr.value not in buffers for n in find_nodes(value, (cst.Attribute,))) or any(
        ctx.is_module(ctx.value(call.func)) for call in find_nodes(value, (cst.Call,)) if isinstance(call, cst.Call))


def made_without_grad(value: cst.BaseExpression, ctx) -> bool:
    """A tensor a factory makes afresh, which requires no grad (`flow = torch.zeros(B, 2, H, W)`,
    `h = x.new_zeros(n, d)`), unless told to."""
    if not isinstance(value, cst.Call) or any(a.keyword is not None and a.keyword.value == "requires_grad"
                                              for a in value.args):
        return False
    qualified = ctx.qualname(value.func) or ""
    if qualified.startswith("torch.") and qualified.rpartition(".")[2] in _FACTORIES:
        return True
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in _NEW_FACTORIES and ctx.is_known_tensor(
        value.func.value)


_FACTORIES = frozenset({"zeros", "ones", "full", "empty", "randn", "rand", "randint", "arange", "linspace", "eye",
                        "zeros_like", "ones_like", "full_like", "empty_like", "randn_like", "rand_like", "tensor"})
_NEW_FACTORIES = frozenset({"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})


def bindings(block: cst.CSTNode, name: str) -> list[cst.Name]:
    """The names `name` that assignments and loops in the block bind (targets, unpacked or not)."""
    targets: list[cst.BaseExpression] = []
    for node in find_nodes(block, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For), prune=(cst.FunctionDef,
                                                                                            cst.Lambda)):
        if isinstance(node, cst.Assign):
            targets.extend(target.target for target in node.targets)
        else:
            targets.append(node.target)
    return [found for target in targets for found in find_nodes(target, (cst.Name,), prune=(cst.Attribute,
                                                                                            cst.Subscript))
            if isinstance(found, cst.Name) and found.value == name]

