"""Walking a libcst tree without libcst's visitor machinery.

`CSTNode.visit` rebuilds and re-validates every node it passes, even for a read-only visitor: over
a whole module that costs about 70% of the parse. Reading the dataclass fields directly, in the
order libcst visits them, is about twenty times faster. Whitespace, comments and punctuation
(parentheses, commas, colons...) are not visited: nothing breakscan looks for is there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

# Fields that only hold whitespace and punctuation.
_TRIVIA = frozenset({
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header", "footer",
    "trailing_whitespace", "leading_whitespace", "lbracket", "rbracket", "lbrace", "rbrace", "colon",
    "first_colon", "second_colon", "dot", "equal", "asynchronous", "posonly_ind",
})
# libcst visits these fields in this order, unlike their dataclass order; keeping its order keeps
# statements and the expressions in their headers in source order.
_VISIT_ORDER = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.Parameters: ("posonly_params", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.IfExp: ("body", "test", "orelse"),
    cst.Arg: ("keyword", "value"),
    cst.TypeAlias: ("name", "type_parameters", "value"),
}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = _VISIT_ORDER.get(node_type) or tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _TRIVIA and not f.name.startswith("whitespace")
        )
        _FIELDS[node_type] = fields
    return fields


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's children in libcst's visit order, leaving out whitespace and punctuation."""
    found = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        holds = _HOLDS.get(type(value)) or _holds(type(value))
        if holds == _NODE:
            found.append(value)
        elif holds == _SEQUENCE:
            for item in value:
                if (_HOLDS.get(type(item)) or _holds(type(item))) == _NODE:
                    found.append(item)
    return found


# What a field's value is, by its type: `isinstance` against libcst's abstract node classes goes
# through ABCMeta, and `children` asks for every field of every node.
_NODE, _SEQUENCE, _OTHER = "node", "sequence", "other"
_HOLDS: dict[type, str] = {}


def _holds(value_type: type) -> str:
    if issubclass(value_type, cst.CSTNode):
        holds = _NODE
    else:
        holds = _SEQUENCE if issubclass(value_type, (tuple, list)) else _OTHER
    _HOLDS[value_type] = holds
    return holds


def is_expression(node: cst.CSTNode) -> bool:
    """`isinstance(node, cst.BaseExpression)`, without a pass through ABCMeta for each node."""
    known = _EXPRESSION_TYPES.get(type(node))
    if known is None:
        known = _EXPRESSION_TYPES[type(node)] = isinstance(node, cst.BaseExpression)
    return known


_EXPRESSION_TYPES: dict[type, bool] = {}


def find_nodes(root: cst.CSTNode, types: tuple[type, ...], prune: tuple[type, ...] = ()) -> list[cst.CSTNode]:
    """Every node of `types` under `root` (itself included), in the order a CSTVisitor meets them;
    nothing below a node of the `prune` types."""
    found: list[cst.CSTNode] = []
    kinds: dict[type, tuple[bool, bool]] = {}  # node type -> (wanted, pruned), as for `_HOLDS`
    pending = [root]  # a stack, not recursion: the same order, without a Python call per node
    while pending:
        node = pending.pop()
        kind = kinds.get(type(node))
        if kind is None:
            kind = kinds[type(node)] = (issubclass(type(node), types), issubclass(type(node), prune))
        if kind[0]:
            found.append(node)
        if not kind[1]:
            pending.extend(reversed(children(node)))
    return found


def walk(node: cst.CSTNode, visitor: object) -> None:
    """What `node.visit(visitor)` does for a read-only visitor: `visit_<Type>(node)` before the
    children (returning False skips them) and `leave_<Type>(node)` after, nothing rebuilt."""
    name = type(node).__name__
    visit = getattr(visitor, f"visit_{name}", None)
    if visit is None or visit(node) is not False:
        for child in children(node):
            walk(child, visitor)
    leave = getattr(visitor, f"leave_{name}", None)
    if leave is not None:
        leave(node)


def subtree_ids(root: cst.CSTNode) -> set[int]:
    """`id` of `root` and of every node under it."""
    return {id(node) for node in find_nodes(root, (cst.CSTNode,))}


def parent_map(root: cst.CSTNode) -> dict[int, cst.CSTNode]:
    """`id(node)` -> the node holding it, for every node under `root`."""
    parents: dict[int, cst.CSTNode] = {}
    pending = [root]
    while pending:
        node = pending.pop()
        for child in children(node):
            parents[id(child)] = node
            pending.append(child)
    return parents


def ancestors(node: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The nodes holding `node`, innermost first, by a `parent_map` (nothing for a node not in it)."""
    parent = parents.get(id(node))
    while parent is not None:
        yield parent
        parent = parents.get(id(parent))
