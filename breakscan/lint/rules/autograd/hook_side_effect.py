import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.rule import Example, Rule
from breakscan.lint.traverse import find_nodes

# Methods that change the list, dict or set they are called on.
_MUTATING_METHODS = v.CONTAINER_ADDING_METHODS | v.CONTAINER_REMOVING_METHODS | {"add", "discard", "__delitem__"}
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


class HookSideEffect(Rule):
    id = "BS710"
    name = "hook-side-effect"
    gb_ids = ("GB0067", "GB4413")
    message = ("a tensor hook registered in compiled code changes state outside itself: TorchDynamo traces the hook "
               "when it is registered and cannot keep the change, the graph breaks here")
    fix_hint = ("return what the hook computes instead of storing it (or keep it in a tensor the hook returns), or "
                "register the hook on the compiled function's output, outside it")
    docs = """
    ## What it does
    Flags, in a hook registered with `tensor.register_hook(hook)` on a tensor computed in compiled
    code, a change to anything the hook does not own: an attribute set (`self.last = g.norm()`),
    an element stored (`stats["grad"] = g`), a list, dict or set grown or emptied
    (`self.grad_norms.append(g.norm())`), a counter of the enclosing function (`nonlocal`) or of
    the module (`global`).

    ## Why is this bad?
    TorchDynamo 2.13 traces a hook on an intermediate tensor when it is registered, as a
    higher-order operator whose body may not change anything outside its own scope: such a
    change ends the graph (GB0067 "HOP: Unsafe side effect"; GB4413 for a number attribute
    counted up, "HOP: Non-nullified side effect"). A hook on an input or a parameter
    is registered at run time instead and is not affected; a hook that only computes and
    returns the new gradient is traced.

    ## Example
    ```python
    def _record(self, grad):
        self.grad_norms.append(grad.norm())
        return grad

    def forward(self, x):
        h = self.lin(x)
        h.register_hook(self._record)
        return h.tanh()
    ```

    ## Use instead
    ```python
    out = model(x)                      # outside the compiled call
    out.register_hook(record_norm)
    ```
    """
    invalid = (
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)
                    self.grad_norms = []

                def _record(self, grad):
                    self.grad_norms.append(grad.norm())  # break
                    return grad

                def forward(self, x):
                    h = self.lin(x)
                    h.register_hook(self._record)
                    return h.tanh()
        """, entry="Model()", inputs="torch.randn(3, 8, requires_grad=True)"),
        Example("""
            import torch

            LAST_GRAD = {}

            @torch.compile
            def fn(x):
                h = x * 2
                h.register_hook(lambda grad: LAST_GRAD.update(h=grad))  # break
                return h.sum()
        """, inputs="torch.randn(3, requires_grad=True)"),
        Example("""
            import torch

            @torch.compile
            def fn(x):
                seen = 0
                h = x.exp()

                def count(grad):
                    nonlocal seen
                    seen += 1  # break
                    return grad

                h.register_hook(count)
                return h.sum()
        """, inputs="torch.randn(3, requires_grad=True)"),
    )
    valid = (
        Example("""
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = nn.Linear(8, 8)

                def _clip(self, grad):
                    parts = []
                    parts.append(grad.clamp(-1, 1))  # the hook's own list
                    return parts[0]

                def forward(self, x):
                    h = self.lin(x)
                    h.register_hook(self._clip)
                    return h.tanh()
        """, entry="Model()", inputs="torch.randn(3, 8, requires_grad=True)"),
        Example("""
            import torch

            NORMS = []

            @torch.compile
            def fn(x):
                x.register_hook(lambda grad: NORMS.append(grad.norm()))  # an input's: registered at run time
                return (x * 2).sum()
        """, inputs="torch.randn(3, requires_grad=True)"),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        hook = ctx.traced_hook(node)
        if hook is None:
            return
        if isinstance(hook, cst.Lambda):
            for change in _changes(hook.body, _parameter_names(hook.params)):
                ctx.report(self, change)
            return
        nested = [d for d in find_nodes(ctx.function.node.body, (cst.FunctionDef,))
                  if isinstance(hook, cst.Name) and isinstance(d, cst.FunctionDef) and d.name.value == hook.value]
        for definition in nested:
            for change in _changes(definition.body, _parameter_names(definition.params)):
                ctx.report(self, change)
        if nested:
            return
        for function in ctx.functions_named(hook):
            owned = _parameter_names(function.node.params)
            if function.class_name is not None and not function.is_staticmethod:
                owned -= {p.name.value for p in [*function.node.params.posonly_params,
                                                   *function.node.params.params][:1]}  # the bound object
            for change in _changes(function.node.body, owned):
                ctx.report_in(self, function, change)


def _parameter_names(params: cst.Parameters) -> set[str]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    rest = [params.star_kwarg] if params.star_kwarg is not None else []
    return {p.name.value for p in (*params.posonly_params, *params.params, *star, *params.kwonly_params, *rest)}


def _changes(body: cst.CSTNode, parameters: set[str]) -> list[cst.CSTNode]:
    """What a hook's body changes that it does not own (the object a method grows, the target
    assigned): its own names are its parameters (the bound object aside) and the names it
    assigns, unless it declares them `nonlocal` or `global`."""
    nodes = find_nodes(body, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.Call, cst.Global, cst.Nonlocal),
                       prune=_SCOPES)
    declared = {n.name.value for node in nodes if isinstance(node, (cst.Global, cst.Nonlocal)) for n in node.names}
    owned = set(parameters) | {
        target.value for node in nodes for target in _targets(node)
        if isinstance(target, cst.Name) and target.value not in declared}
    changes: list[cst.CSTNode] = []
    for node in nodes:
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in _MUTATING_METHODS and _outside(func.value, owned):
                changes.append(func.value)
        else:
            changes += [target for target in _targets(node) if _changed_outside(target, owned, declared)]
    return changes


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        return [target.target for target in node.targets]
    if isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        return [node.target] if not isinstance(node, cst.AnnAssign) or node.value is not None else []
    if isinstance(node, cst.Del):
        return [node.target]
    return []


def _changed_outside(target: cst.BaseExpression, owned: set[str], declared: set[str]) -> bool:
    if isinstance(target, cst.Name):
        return target.value in declared
    if isinstance(target, (cst.Attribute, cst.Subscript)):
        return _outside(target.value, owned)
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_changed_outside(element.value, owned, declared) for element in target.elements)
    return False


def _outside(expression: cst.BaseExpression, owned: set[str]) -> bool:
    """Whether the object `expression` reaches is not the hook's own: its root name is not."""
    while isinstance(expression, (cst.Attribute, cst.Subscript)):
        expression = expression.value
    return isinstance(expression, cst.Name) and expression.value not in owned
