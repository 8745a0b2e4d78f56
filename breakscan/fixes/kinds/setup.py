"""Setup work done in `forward` (building layers, registering hooks, seeding): move it to
`__init__`, where it runs once and is never traced."""

from __future__ import annotations

import re

import libcst as cst

from breakscan.fixes.edits import insert_at
from breakscan.fixes.kinds.common import call_name
from breakscan.fixes.rewrite import Rewrite, remove_statement, replace_lines, replace_node
from breakscan.fixes.source import SourceModule
from breakscan.model import Edit, Finding

_SEEDING = {"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
            "torch.cuda.manual_seed_all", "random.seed", "numpy.random.seed"}
_HOOK = re.compile(r"register_\w*hook$")


def _construction(src: SourceModule, node: cst.CSTNode) -> bool:
    name = call_name(src, node) or ""
    return name.startswith("torch.nn.") and name.rsplit(".", 1)[1][:1].isupper()


def _setup_kind(src: SourceModule, node: cst.CSTNode) -> str | None:
    if not isinstance(node, cst.Call):
        return None
    if _construction(src, node):
        return "module"
    receiver = src.code(node.func.value) if isinstance(node.func, cst.Attribute) else ""
    if isinstance(node.func, cst.Attribute) and _HOOK.match(node.func.attr.value) and (
            receiver == "self" or receiver.startswith("self.")):
        return "hook"
    return "seed" if call_name(src, node) in _SEEDING else None


def _locals(src: SourceModule, function: cst.FunctionDef) -> set[str]:
    """Names bound in the function: its parameters and assignment targets."""
    names = {p.name.value for p in function.params.params if p.name.value != "self"}
    for target in src.nodes_in(src.span(function), lambda n: isinstance(n, (cst.AssignTarget, cst.AugAssign))):
        names |= {n.value for n in src.nodes_in(src.span(target.target), lambda n: isinstance(n, cst.Name))}
    return names


def _movable(src: SourceModule, call: cst.Call, function: cst.FunctionDef) -> bool:
    """The call needs nothing local to `forward` (apart from `self`), so it can run in `__init__`."""
    used = {n.value for n in src.nodes_in(src.span(call), lambda n: isinstance(n, cst.Name))}
    return not used & _locals(src, function)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _free_attribute(src: SourceModule, cls: cst.ClassDef, wanted: str) -> str:
    taken = {n.attr.value for n in src.nodes_in(src.span(cls), lambda n: isinstance(n, cst.Attribute))}
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name


def _into_init(src: SourceModule, cls: cst.ClassDef, text: str) -> Edit:
    """Insert `text` (one statement, no indent) at the end of `__init__`, creating it if needed."""
    body = cls.body.body
    init = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is not None:
        last = init.body.body[-1]
        return insert_at(src.span(last).end_line + 1, f"{src.indent(src.span(last).line)}{text}\n")
    indent, unit = src.indent(src.span(body[0]).line), src.indent_unit
    return insert_at(src.span(body[0]).line, f"{indent}def __init__(self):\n{indent}{unit}super().__init__()\n"
                                             f"{indent}{unit}{text}\n\n")


def move_setup_to_init(src: SourceModule, finding: Finding) -> Rewrite | None:
    call = src.first_in(finding.span, lambda n: _setup_kind(src, n) is not None)
    function = src.function(call) if call is not None else None
    cls = src.method_of(function) if function is not None else None
    if cls is None or function.name.value == "__init__" or not _movable(src, call, function):
        return None
    kind, statement = _setup_kind(src, call), src.statement(call)
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    code = src.code(call)
    if kind == "module":
        assigned = small.targets[0].target if isinstance(small, cst.Assign) and small.value is call and len(
            small.targets) == 1 else None
        if isinstance(assigned, cst.Name):
            attribute = _free_attribute(src, cls, assigned.value)
            indent = src.indent(src.span(statement).line)
            here = replace_lines(src, statement, f"{indent}{assigned.value} = self.{attribute}\n")
        else:
            attribute = _free_attribute(src, cls, _snake(code.split("(")[0].rsplit(".", 1)[-1]))
            here = replace_node(src, call, f"self.{attribute}")
        summary = (f"build `{code}` once in `__init__` as `self.{attribute}`: Dynamo cannot create parameters "
                   "while tracing (GB0264), and a layer built on every call starts from new weights each time")
        return Rewrite(summary, (_into_init(src, cls, f"self.{attribute} = {code}"), here))
    if not (isinstance(small, cst.Expr) and small.value is call) or "\n" in code:
        return None
    if kind == "hook":
        summary = ("register the hook once in `__init__`: registering changes the module while tracing "
                   "(GB0467), and registering on every call stacks up one more hook each time")
    else:
        summary = ("seed once when the model is built (or in the code that calls it): seeding cannot be "
                   "traced (GB0007); the seed is then set once, not before every call")
    return Rewrite(summary, (_into_init(src, cls, code), remove_statement(src, statement)))
