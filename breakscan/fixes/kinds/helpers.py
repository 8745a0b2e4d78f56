"""A break inside a helper function that no local rewrite removes: make the helper opaque to
Dynamo. Numeric helpers (tensors in, tensor out, Python math inside) become a custom op with a
fake (shape-only) implementation and stay inside the graph; any other helper is excluded from
tracing with `@torch.compiler.disable`, at the price of a break at each call."""

from __future__ import annotations

import os
import re

import libcst as cst

from breakscan.fixes.edits import insert_at
from breakscan.fixes.kinds.common import call_name, torch_ref
from breakscan.fixes.rewrite import Rewrite
from breakscan.fixes.source import SourceModule
from breakscan.model import Edit, Finding, Span

# Calls that pull tensor data into Python: the mark of numeric code Dynamo cannot trace.
_TO_PYTHON = {"tolist", "numpy", "item"}
_LITERAL_TYPES = {cst.Integer: "int", cst.Float: "float"}


def _qualname(src: SourceModule, function: cst.FunctionDef) -> str:
    names = [function.name.value]
    for ancestor in src.ancestors(function):
        if isinstance(ancestor, (cst.ClassDef, cst.FunctionDef)):
            names.append(ancestor.name.value)
    return ".".join(reversed(names))


def _compiled_root(src: SourceModule, function: cst.FunctionDef, finding: Finding) -> bool:
    """Whether torch.compile is given this function (the finding's root, decorated with it, or
    passed to it in this file), or it is the `forward` of a class whose instances are."""
    qualname = _qualname(src, function)
    # The root as the lint names it (`M.forward`), or as a frame of the run does (`forward`).
    if any(root == qualname or root.endswith(f".{qualname}") or qualname.endswith(f".{root}")
           for root in finding.chain[:1]):
        return True
    if any("compile" in src.code(d) for d in function.decorators):
        return True
    cls = src.method_of(function)
    if cls is not None:
        return function.name.value == "forward" and re.search(rf"compile\(\s*{cls.name.value}\s*\(", src.text) is not None
    return re.search(rf"compile\(\s*{function.name.value}\b", src.text) is not None


def _helper(src: SourceModule, finding: Finding) -> cst.FunctionDef | None:
    """The function holding the finding, unless it is a compiled root (disabling that would give
    up on compiling it at all)."""
    node = src.first_in(finding.span, lambda n: True)
    function = src.function(node) if node is not None else None
    if function is None or not finding.chain or _compiled_root(src, function, finding):
        return None
    return function


_DESCRIPTOR_DECORATORS = frozenset({"classmethod", "staticmethod", "property", "setter", "getter", "deleter",
                                    "cached_property"})


def _decorator_line(src: SourceModule, function: cst.FunctionDef) -> int:
    return min([src.span(function).line] + [src.span(d).line for d in function.decorators])


def _numeric(src: SourceModule, function: cst.FunctionDef) -> bool:
    """The helper reads tensor data into Python and returns something, none of it written as a
    Python value (a custom op returns tensors: `return [len(r) for r in rows]` cannot be one)."""
    pulls = src.nodes_in(src.span(function), lambda n: isinstance(n, cst.Call) and (
        isinstance(n.func, cst.Attribute) and n.func.attr.value in _TO_PYTHON
        or call_name(src, n) in ("float", "int")))
    returns = src.nodes_in(src.span(function), lambda n: isinstance(n, cst.Return) and n.value is not None)
    return bool(pulls) and bool(returns) and not any(
        isinstance(r, cst.Return) and isinstance(r.value, _PYTHON_VALUES) for r in returns)


# Expressions that make a Python value, not a tensor.
_PYTHON_VALUES = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                  cst.BaseString, cst.Integer, cst.Float, cst.Comparison)


def _annotation(param: cst.Param, torch: str) -> str | None:
    """The custom-op schema type of an unannotated parameter, from its default."""
    if param.default is None:
        return f"{torch}.Tensor"
    if isinstance(param.default, cst.Name) and param.default.value in ("True", "False"):
        return "bool"
    return _LITERAL_TYPES.get(type(param.default))


def _close_paren(src: SourceModule, function: cst.FunctionDef) -> tuple[int, int] | None:
    """(line, column) just after the `)` closing the parameter list."""
    params = src.span(function.params)
    line, column = (params.end_line, params.end_column) if function.params.params else (
        src.span(function.name).end_line, src.span(function.name).end_column)
    while line <= len(src.lines):
        text = src.lines[line - 1]
        index = text.find(")", column - 1)
        if index >= 0:
            return line, index + 2
        line, column = line + 1, 1
    return None


def _schema_edits(src: SourceModule, function: cst.FunctionDef, torch: str) -> list[Edit] | None:
    """Type annotations for every parameter and the result, as custom_op requires."""
    params = function.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg or params.kwonly_params or params.posonly_params:
        return None
    edits = []
    for param in params.params:
        if param.annotation is not None:
            continue
        annotation = _annotation(param, torch)
        if annotation is None:
            return None
        name = src.span(param.name)
        if param.default is None:
            edits.append(Edit(Span(name.end_line, name.end_column, name.end_line, name.end_column), f": {annotation}"))
        else:
            default = src.span(param.default)
            edits.append(Edit(Span(name.end_line, name.end_column, default.line, default.column), f": {annotation} = "))
    if function.returns is None:
        paren = _close_paren(src, function)
        if paren is None:
            return None
        edits.append(Edit(Span(*paren, *paren), f" -> {torch}.Tensor"))
    return edits


def _namespace(path: str) -> str:
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    return stem if stem[:1].isalpha() else f"user_{stem}"


def custom_op_helper(src: SourceModule, finding: Finding) -> Rewrite | None:
    function = _helper(src, finding)
    if function is None or function.decorators or src.method_of(function) or not src.is_top_level(function):
        return None
    if not _numeric(src, function):
        return None
    torch, imports = torch_ref(src)
    schema = _schema_edits(src, function, torch)
    tensors = [p.name.value for p in function.params.params
               if p.default is None and (p.annotation is None or "Tensor" in src.code(p.annotation))]
    if schema is None or not tensors:
        return None
    name = function.name.value
    first = src.span(function).line
    decorator = f'@{torch}.library.custom_op("{_namespace(src.path)}::{name}", mutates_args=())\n'
    # The fake is called like the op: same parameters, same defaults.
    params = function.params.params
    arguments = ", ".join(p.name.value + (f"={src.code(p.default)}" if p.default else "") for p in params)
    fake = (f"\n\n@{name}.register_fake\ndef _({arguments}):\n"
            f"{src.indent_unit}# Shapes and dtypes only, no data: assumed to be those of `{tensors[0]}`; "
            "adjust if the result differs.\n"
            f"{src.indent_unit}return {torch}.empty_like({tensors[0]})\n")
    edits = (*imports, insert_at(first, decorator), *schema, insert_at(src.span(function).end_line + 1, fake))
    summary = (f"make `{name}` a custom op: torch.compile keeps one opaque call to it in the graph instead "
               "of tracing its Python; `register_fake` tells the compiler the result's shape and dtype "
               "(check it). The op must not mutate its inputs or return one of them")
    return Rewrite(summary, edits)


def disable_helper(src: SourceModule, finding: Finding) -> Rewrite | None:
    function = _helper(src, finding)
    if function is None or any("disable" in src.code(d) for d in function.decorators):
        return None
    if not src.is_top_level(function) and src.method_of(function) is None:
        return None  # a function defined in another: decorating it runs where it is defined, traced there
    torch, imports = torch_ref(src)
    # Above the other decorators, but under `@classmethod`/`@staticmethod`/`@property`: those make
    # descriptors, which `disable` cannot wrap ("fn must be callable").
    descriptors = any(src.code(d.decorator).split(".")[-1] in _DESCRIPTOR_DECORATORS for d in function.decorators)
    line = src.span(function).line if descriptors else _decorator_line(src, function)
    decorator = f"{src.indent(line)}@{torch}.compiler.disable\n"
    summary = (f"stop Dynamo from tracing `{function.name.value}`: it runs eagerly and the breaks inside it "
               "are gone; cost: the graph still breaks at each call of it (GB0098; GB0099 for a method)")
    return Rewrite(summary, (*imports, insert_at(line, decorator)), applicability="safe")
