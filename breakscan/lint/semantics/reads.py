"""Where compiled code first reads a value: TorchDynamo wraps what a frame holds lazily, at its
first use, and a value passed on to a function it inlines is read there, not at the call."""

from __future__ import annotations

import libcst as cst

from breakscan.lint import values as v
from breakscan.lint.index import FunctionInfo
from breakscan.lint.names import dotted_name
from breakscan.lint.traverse import find_nodes


class FirstReads:
    """Per walk of a function: which names it has read so far. A rule calls `on_call` and
    `on_attribute` from its handlers of those nodes, and asks `first_read` from its `on_Name` about
    the names it follows (asking about every name costs time for nothing)."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.labels: set[int] = set()  # names after a dot, and keyword labels: no reads
        self.argument_of: dict[int, cst.Call] = {}  # an argument -> its call (resolved when it matters)

    def on_call(self, node: cst.Call) -> None:
        for argument in node.args:
            self.argument_of[id(argument.value)] = node
            if argument.keyword is not None:  # `f(k=k)`: the label reads no variable
                self.labels.add(id(argument.keyword))

    def on_attribute(self, node: cst.Attribute) -> None:
        self.labels.add(id(node.attr))

    def first_read(self, node: cst.Name, ctx, *, passing_on_reads: bool = False) -> bool:
        """Whether this is the function's first read of the name (passing it on, or binding it, is
        none; once passed on, the helper has read it, and guarded it there). `passing_on_reads`:
        passing it on to a helper is a read too (what TorchDynamo does to a value as the frame
        loads it, wrapping a sparse tensor, happens in the frame that passes it on)."""
        if id(node) in self.labels or node.value in self.read or id(node) in ctx.memoised(
                _bound_names, ctx.function.node) or id(node) in ctx.memoised(_unpacked, ctx.function.node):
            return False
        if not passing_on_reads and self.passed_on(node, ctx):
            self.read.add(node.value)
            return False
        self.read.add(node.value)
        return True

    def first_field_read(self, node: cst.Attribute, ctx) -> tuple[str, v.Value] | None:
        """`cfg.top_k`, where `cfg` is an object the calls BREAKSCAN_TARGETS declares build with
        other constants for that attribute (`RoutingConfig()`, then `RoutingConfig(top_k=1)`): its
        text and value at the function's first read of it, where TorchDynamo guards it (passing
        it on to a helper the walk inlines is none: the helper reads it)."""
        owner = ctx.value(node.value)
        held = owner.field(node.attr.value) if isinstance(owner, v.ModuleValue) and owner.fields else None
        text = dotted_name(node) if held is not None else None
        if text is None or text in self.read:
            return None
        self.read.add(text)
        return None if self.passed_on(node, ctx) else (text, held)

    def passed_on(self, node: cst.BaseExpression, ctx) -> bool:
        """Whether the expression is an argument of a call of a function the walk inlines."""
        call = self.argument_of.get(id(node))
        return call is not None and ctx.callee(call) is not None

    def read_by_callee(self, node: cst.BaseExpression, ctx) -> bool:
        """Whether the function the walk inlines, which the expression is passed to, reads the
        parameter it binds it to: the value is first used, and guarded, there."""
        call = self.argument_of.get(id(node))
        callee = ctx.callee(call) if call is not None else None
        return call is not None and callee is not None and first_use_in_callee(call, node, callee) is not None

    def is_label(self, node: cst.Name) -> bool:
        """`attr` in `obj.attr`, `k` in `f(k=v)`: a name that reads no variable."""
        return id(node) in self.labels


def first_use_in_callee(call: cst.Call, node: cst.BaseExpression, callee: FunctionInfo) -> cst.Name | None:
    """Where `callee`, given `node` as an argument of `call`, first reads the parameter it binds
    it to (None when it binds none, or reads it nowhere)."""
    argument = next((a for a in call.args if a.value is node), None)
    if argument is None or argument.star:
        return None
    if argument.keyword is not None:
        name = argument.keyword.value
    else:
        position = [a for a in call.args if a.keyword is None and not a.star].index(argument)
        params = callee.positional_params
        if position >= len(params):
            return None
        name = params[position].name.value
    bound = _bound_names(callee.node)
    return next((n for n in find_nodes(callee.node.body, (cst.Name,))
                 if isinstance(n, cst.Name) and n.value == name and id(n) not in bound), None)


def _bound_names(function: cst.FunctionDef) -> frozenset[int]:
    """`id` of the names a function binds without reading them: assignment, loop and `with`
    targets, unpacked or not (an augmented assignment reads its target first)."""
    targets: list[cst.BaseExpression] = []
    for node in find_nodes(function.body, (cst.Assign, cst.AnnAssign, cst.For, cst.CompFor, cst.WithItem,
                                           cst.NamedExpr)):
        if isinstance(node, cst.Assign):
            targets.extend(target.target for target in node.targets)
        elif isinstance(node, (cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets.append(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets.append(node.asname.name)
    return frozenset(id(name) for target in targets for name in find_nodes(target, (cst.Name,), prune=(
        cst.Attribute, cst.Subscript)))


def first_reads(function: cst.FunctionDef) -> dict[str, cst.Name]:
    """Each name's first read in the function's body, in source order (not in the functions it
    defines, which read it when called): where TorchDynamo, compiling the function as a frame of
    its own, guards a Python number it was given."""
    bound = _bound_names(function)
    labels = {id(node.attr) for node in find_nodes(function.body, (cst.Attribute,))} | {
        id(node.keyword) for node in find_nodes(function.body, (cst.Arg,)) if isinstance(node, cst.Arg) and node.keyword}
    found: dict[str, cst.Name] = {}
    for node in find_nodes(function.body, (cst.Name,), prune=(cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(node, cst.Name) and id(node) not in bound and id(node) not in labels:
            found.setdefault(node.value, node)
    return found


def _unpacked(function: cst.FunctionDef) -> frozenset[int]:
    """`id` of the names a function unpacks as they are (`lo, hi = clip`): TorchDynamo reads their
    items there, each guarded where it is used, not the sequence."""
    return frozenset(id(node.value) for node in find_nodes(function.body, (cst.Assign,), prune=(
        cst.FunctionDef, cst.Lambda, cst.ClassDef)) if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name)
        and all(isinstance(t.target, (cst.Tuple, cst.List)) for t in node.targets))


def guarding_reads(function: cst.FunctionDef) -> tuple[dict[int, int], dict[str, int]]:
    """Each call's place in the function's body, in source order, and each name's first read there
    that is no argument passed as it is (`f(t)`, which a helper the walk inlines reads, if at all)
    nor a sequence unpacked as it is (`lo, hi = clip`, each item read where it is used): a Python value the frame was given is guarded at that read, and is one constant from then on,
    for the helpers it is passed to too."""
    bound = _bound_names(function) | _unpacked(function)
    places: dict[int, int] = {}
    first: dict[str, int] = {}
    passed: set[int] = set()
    for place, node in enumerate(find_nodes(function.body, (cst.Name, cst.Call, cst.Attribute), prune=(
            cst.FunctionDef, cst.Lambda, cst.ClassDef))):
        if isinstance(node, cst.Call):
            places[id(node)] = place
            passed.update(id(argument.value) for argument in node.args)
            passed.update(id(argument.keyword) for argument in node.args if argument.keyword is not None)
        elif isinstance(node, cst.Attribute):
            passed.add(id(node.attr))  # a label, read as no variable
        elif id(node) not in bound and id(node) not in passed:
            first.setdefault(node.value, place)
    return places, first
