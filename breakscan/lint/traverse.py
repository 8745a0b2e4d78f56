"""Walking a libcst tree without libcst's visitor machinery.

`CSTNode.visit` rebuilds and re-validates every node it passes, even for a read-only visitor: over
a whole module that costs about 70% of the parse. Reading the dataclass fields directly, in the
order libcst visits them, is about twenty times faster. Whitespace, comments and punctuation
(parentheses, commas, colons...) are not visited: nothing breakscan looks for is there.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from collections.abc import Callable, Iterator

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
    listing = _LISTINGS.get(type(node))
    if listing is None:
        listing = _LISTINGS[type(node)] = _listing(type(node))
    return listing(node)


# Per node type, a function listing its children, generated from the dataclass fields' types: the
# walk asks every node for its children, and reading each field by name in a loop, then asking
# what its value is, took most of that time.
_LISTINGS: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = {}
_NODE_TYPES: set[type] = set()


def _listing(node_type: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    if not _NODE_TYPES:
        pending: list[type] = [cst.CSTNode]
        while pending:
            subclass: type
            for subclass in pending.pop().__subclasses__():
                _NODE_TYPES.add(subclass)
                pending.append(subclass)
    hints = typing.get_type_hints(node_type)
    lines = ["def listing(node):", "    found = []"]
    for name in _child_fields(node_type):
        hint = hints[name]
        parts = typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)
        sequence = [typing.get_origin(part) is collections.abc.Sequence for part in parts]
        if all(sequence):  # libcst's sequences hold nodes only
            lines.append(f"    found.extend(node.{name})")
        elif any(sequence):  # `ImportFrom.names`: aliases, or `*`
            lines += [f"    value = node.{name}", "    if value.__class__ in NODE_TYPES:", "        found.append(value)",
                      "    elif value.__class__ in (tuple, list):", "        found.extend(value)"]
        elif any(isinstance(part, type) and issubclass(part, cst.CSTNode) for part in parts):
            lines += [f"    value = node.{name}", "    if value.__class__ in NODE_TYPES:", "        found.append(value)"]
    lines.append("    return found")
    namespace: dict[str, object] = {"NODE_TYPES": _NODE_TYPES}
    exec("\n".join(lines), namespace)  # noqa: S102 - code built above from the field names
    return namespace["listing"]


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
    kinds: dict[type, tuple[bool, bool]] = {}  # node type -> (wanted, pruned)
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
