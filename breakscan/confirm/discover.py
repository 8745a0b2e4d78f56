"""What to confirm in a file, found statically (the file is parsed, never imported here).

In order: an explicit `--entry`/`--inputs`; the file's own declaration

    BREAKSCAN_TARGETS = {"Model()": "torch.randn(4, 16)", "fn": "(torch.randn(3), 2)"}

(or a list of `(entry, inputs)` pairs; inputs None means "synthesise from the first layer"; an
empty declaration opts the file out); else every `nn.Module` subclass that can be built with no
arguments, with inputs synthesised in the worker.
"""

from __future__ import annotations

import ast

from breakscan.model import TargetSpec

DECLARATION = "BREAKSCAN_TARGETS"
_MODULE_BASES = {"Module", "nn.Module", "torch.nn.Module"}


def declaration_hint(entries: list[str]) -> str:
    """The line to add to the file, with the user's entries and placeholder inputs."""
    pairs = ", ".join(f'"{entry}": "torch.randn(...)"' for entry in entries)
    return f"{DECLARATION} = {{{pairs}}}"


def discover_targets(
    path: str, source: str | None = None, *, entry: str | None = None, inputs: str | None = None
) -> tuple[list[TargetSpec], str | None]:
    """(specs, note); `note` says what to add to the file when nothing can be confirmed."""
    if entry is not None:
        return [TargetSpec(path=path, entry=entry, inputs=inputs)], None
    try:
        if source is None:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
        tree = ast.parse(source, filename=path)
    except (OSError, SyntaxError, ValueError) as exc:
        return [], f"cannot read {path} to find targets: {exc}"
    declared = _declaration(tree)
    if declared is not None:
        return _declared_specs(path, declared)
    classes = _module_classes(tree)
    buildable = [c.name for c in classes if not _required_init_args(c, classes)]
    if buildable:
        return [TargetSpec(path=path, entry=f"{name}()") for name in buildable], None
    return [], _nothing_to_confirm(path, classes)


def _declaration(tree: ast.Module) -> ast.expr | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and any(
            isinstance(t, ast.Name) and t.id == DECLARATION for t in targets
        ):
            return node.value
    return None


def _declared_specs(path: str, value: ast.expr) -> tuple[list[TargetSpec], str | None]:
    """The declared targets; an empty declaration opts the file out of confirmation."""
    try:
        literal = ast.literal_eval(value)
        pairs = list(literal.items()) if isinstance(literal, dict) else [tuple(p) for p in literal]
        specs = [TargetSpec(path=path, entry=e, inputs=i) for e, i in pairs]
    except (ValueError, TypeError, SyntaxError):
        specs = None
    if specs is not None and all(
        isinstance(s.entry, str) and isinstance(s.inputs, (str, type(None))) for s in specs
    ):
        return specs, None
    return [], (
        f"{path}:{value.lineno}: {DECLARATION} must be a literal dict of entry -> inputs "
        f'expression strings, or a list of (entry, inputs) pairs, e.g. {declaration_hint(["Model()"])}'
    )


def _module_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """Top-level classes deriving from nn.Module, directly or through another such class here."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    found: dict[str, ast.ClassDef] = {}
    changed = True
    while changed:
        changed = False
        for cls in classes:
            bases = {ast.unparse(b) for b in cls.bases}
            if cls.name not in found and (bases & _MODULE_BASES or bases & found.keys()):
                found[cls.name] = cls
                changed = True
    return [c for c in classes if c.name in found]


def _required_init_args(cls: ast.ClassDef, classes: list[ast.ClassDef]) -> list[str]:
    """Names of `__init__`'s required parameters (besides self), looking up local bases."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        by_name = {c.name: c for c in classes}
        base = next((by_name[ast.unparse(b)] for b in cls.bases if ast.unparse(b) in by_name), None)
        return _required_init_args(base, classes) if base is not None else []
    args = init.args
    positional = args.posonlyargs + args.args
    required = [a.arg for a in positional[1 : len(positional) - len(args.defaults)]]
    required += [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return required


def _nothing_to_confirm(path: str, classes: list[ast.ClassDef]) -> str:
    if classes:
        entries = [f"{c.name}({', '.join(f'{a}=...' for a in _required_init_args(c, classes))})"
                   for c in classes]
        what = "no nn.Module here can be built without arguments"
    else:
        entries, what = ["model_or_function"], "no nn.Module subclass found"
    return (f"{path}: nothing to confirm ({what}); declare targets in the file: "
            f"{declaration_hint(entries)} or pass --entry and --inputs")
