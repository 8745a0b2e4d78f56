"""What an attribute chain holds as the objects are built, where the code writes it out: a flag
(`self.cfg.verbose`) is the literal `__init__` stores, the default of the parameter it stores,
a keyword of the config object's constructor call, or the default of that class's field; a
module-level flag (`DEBUG = True`, an environment switch at its default) is what it is set to."""

from __future__ import annotations

import libcst as cst

from breakscan.lint.index import ClassInfo, ModuleIndex
from breakscan.lint.names import dotted_name

_DEPTH = 12  # attribute chains, stores, constructions and constructor calls followed


def built_truth(ctx, expression: cst.BaseExpression) -> bool | None:
    """True/False when the expression is written out as `True`/`False` where the object it is
    read from is built (see module doc); None when that is not known (a local name: what the
    function holds there, not what the module sets)."""
    root = expression
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and root.value != "self" and ctx.local_value(root.value) is not None:
        return None
    found = _built(ctx, expression, ctx.module, {}, ctx.self_class, _DEPTH)
    if isinstance(found, cst.Name) and found.value in ("True", "False"):
        return found.value == "True"
    return None


def _built(ctx, node: cst.BaseExpression, module: ModuleIndex, given: dict[str, cst.BaseExpression],
           cls: ClassInfo | None, depth: int) -> cst.BaseExpression | None:
    """The expression `node` holds: `given` names what the parameters in scope were passed, `cls`
    is the class of `self` there."""
    if depth == 0:
        return None
    if isinstance(node, cst.Call):
        return node  # a constructor call, whose keywords and class say what the object holds
    if isinstance(node, cst.Name):
        if node.value in given:  # what the parameter was passed, or its default: resolved as written
            return _built(ctx, given[node.value], module, {}, None, depth - 1)
        if node.value in ("True", "False", "None"):
            return node
        if node.value in module.global_flags:  # `DEBUG = True`
            return cst.Name("True" if module.global_flags[node.value] else "False")
        return module.global_calls.get(node.value)  # `CFG = SimpleNamespace(debug=True)`
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):  # `cfg or Config()`
        left = _built(ctx, node.left, module, given, cls, depth - 1)
        if isinstance(left, cst.Name) and left.value in ("None", "False"):
            return _built(ctx, node.right, module, given, cls, depth - 1)
        return left if isinstance(left, cst.Name) and left.value == "True" else None
    if not isinstance(node, cst.Attribute):
        return None
    if isinstance(node.value, cst.Name) and node.value.value == "self":
        return _stored(ctx, cls, node.attr.value, None, depth - 1) if cls is not None else None
    holder = _built(ctx, node.value, module, given, cls, depth - 1)
    if isinstance(holder, cst.Call):
        return _field(ctx, holder, node.attr.value, module, depth - 1)
    return None


def _field(ctx, call: cst.Call, name: str, module: ModuleIndex, depth: int) -> cst.BaseExpression | None:
    """The attribute `name` of the object `call` builds: its keyword there, else what the class
    stores (a dataclass field's default, or what `__init__` sets it to from its parameters)."""
    keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
    if keyword is not None:
        return keyword
    qualified = module.qualify(dotted_name(call.func))
    info = ctx.find_class(qualified) if qualified else None
    positional = [a.value for a in call.args if a.keyword is None]
    if info is None or any(a.star for a in call.args) or (positional and not info.record):
        return None
    passed = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if name in list(info.annotated)[:len(positional)]:  # a record's field given by position
        return positional[list(info.annotated).index(name)]
    return _stored(ctx, info, name, passed, depth)


def _stored(ctx, info: ClassInfo, name: str, passed: dict[str, cst.BaseExpression] | None,
            depth: int) -> cst.BaseExpression | None:
    """What an instance of the class holds as `name` once built, given the constructor keywords
    (None: not known which construction built it): what `__init__` stores last (its own
    statements, not in a block), else the class's default."""
    for known in ctx.class_lineage(info):
        init = known.methods.get("__init__")
        stores = [small.value for statement in init.node.body.body if isinstance(statement, cst.SimpleStatementLine)
                  for small in statement.body if isinstance(small, cst.Assign) and len(small.targets) == 1
                  and dotted_name(small.targets[0].target) == f"self.{name}"] if init is not None else []
        if stores:
            params = init.node.params
            defaults = {p.name.value: p.default for p in (*params.params, *params.kwonly_params) if p.default is not None}
            store = stores[-1]
            if passed is None and isinstance(store, cst.Name):  # built where? every construction must agree
                agreed = _constructed_with(ctx, known, init.node, store.value, depth - 1)
                if agreed is not None:
                    return agreed
            return _built(ctx, store, init.module, {**defaults, **(passed or {})}, info, depth - 1)
        for statement in known.node.body.body:  # a dataclass field, or a class attribute, with its default
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(small, (cst.AnnAssign, cst.Assign)):
                targets = [small.target] if isinstance(small, cst.AnnAssign) else [t.target for t in small.targets]
                if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                    return (passed or {}).get(name, small.value) if known.record else small.value
    return None


def _constructed_with(ctx, info: ClassInfo, init: cst.FunctionDef, param: str, depth: int) -> cst.BaseExpression | None:
    """What every call building the class in its module passes `param`, written out the same way
    (`ConvStage(a, b, cfg.verbose)` with `cfg` a config whose `verbose` is True: `True`;
    `LossTracker(self.cfg)`: the config's constructor call); None when they differ, one passes
    what cannot be told, or none builds it there."""
    positional = [p.name.value for p in (*init.params.posonly_params, *init.params.params)][1:]  # after `self`
    position = positional.index(param) if param in positional else None
    found: dict[str, cst.BaseExpression] = {}
    for function, call in ctx.constructions(info):
        if any(a.star for a in call.args):
            return None
        given = next((a.value for index, a in enumerate(call.args) if (a.keyword is None and index == position) or (
            a.keyword is not None and a.keyword.value == param)), None)
        if given is None:
            return None  # its default: see the caller
        params = function.node.params
        defaults = {p.name.value: p.default for p in (*params.params, *params.kwonly_params) if p.default is not None}
        owner = ctx.find_class(f"{function.module.name}.{function.class_name}") if function.class_name else None
        value = _built(ctx, given, function.module, defaults, owner, depth)
        if value is None:
            return None
        found[ctx.code(value)] = value
    return next(iter(found.values())) if len(found) == 1 else None
