"""traverse.children must meet nodes exactly as libcst's own visitor does (whitespace and punctuation
aside): the region walker and the index rely on that order, and a libcst upgrade could change it."""

import libcst as cst
import pytest

from breakscan.lint.traverse import children, find_nodes
from tests.helpers import FIXTURES, ROOT

# Nodes `children` leaves out: whitespace, comments and punctuation.
TRIVIA = (cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.Comment, cst.Newline, cst.TrailingWhitespace,
          cst.Comma, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
          cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Colon, cst.Semicolon, cst.Dot, cst.AssignEqual,
          cst.ParamSlash, cst.Asynchronous, cst.ImportStar, cst.ParamStar)
# Syntax the fixtures may lack: decorators, match, walrus, lambdas, comprehensions, f-strings, try/except*.
EVERYTHING = '''
import torch, os.path as p
from . import x as y
@torch.compile(mode="max-autotune")
def f(a: int, /, b=lambda q: q + 1, *args, c: "T" = None, **kw) -> dict[str, int]:
    """doc"""
    global g
    if (n := len(args)) > 2 and not a or b:
        return {k: v for k, v in kw.items() if v}
    elif a:
        del a[0], a[1:2:3]
    else:
        x = [i async for i in y] if c else (j for j in range(3))
    for i, (j, k) in enumerate(zip(a, b)):
        while i < 3:
            i += 1
            break
        else:
            continue
    try:
        raise ValueError(f"{a!r:>{b}} {c=}") from None
    except* (TypeError, KeyError) as e:
        pass
    with open(p) as h, torch.no_grad():
        assert h, "msg"
    match a:
        case [1, *rest] | {"k": _, **other} if rest:
            yield from rest
        case Point(x=0, y=yy) as pt:
            await pt
    return a[..., None] @ b if a else -b ** 2
class C(Base, metaclass=M):
    x: int = 3
    def forward(self, x): return super().forward(x)
'''


def visit_order(module: cst.Module) -> list[tuple[str, int]]:
    events: list[tuple[str, int]] = []

    class Recorder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if not isinstance(node, TRIVIA):
                events.append(("visit", id(node)))
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if not isinstance(original_node, TRIVIA):
                events.append(("leave", id(original_node)))

    module.visit(Recorder())
    return events


def walk_order(module: cst.Module) -> list[tuple[str, int]]:
    events: list[tuple[str, int]] = []

    def walk(node: cst.CSTNode) -> None:
        if not isinstance(node, TRIVIA):
            events.append(("visit", id(node)))
        for child in children(node):
            walk(child)
        if not isinstance(node, TRIVIA):
            events.append(("leave", id(node)))

    walk(module)
    return events


SOURCES = {"everything": EVERYTHING, **{p.name: p.read_text() for p in sorted(FIXTURES.glob("*.py"))[:20]},
           "engine.py": (ROOT / "breakscan" / "lint" / "engine.py").read_text()}


@pytest.mark.parametrize("name", list(SOURCES))
def test_children_follow_libcst_visit_order(name):
    module = cst.parse_module(SOURCES[name])
    assert walk_order(module) == visit_order(module)


def test_find_nodes_prunes_below_the_given_types():
    module = cst.parse_module("def f():\n    g()\n    def h():\n        i()\nj()\n")
    calls = find_nodes(module, (cst.Call,), prune=(cst.FunctionDef,))
    assert [module.code_for_node(c) for c in calls] == ["j()"]
    nested = find_nodes(module.body[0].body, (cst.Call,), prune=(cst.FunctionDef,))
    assert [module.code_for_node(c) for c in nested] == ["g()"]
