"""What torch's public functions and tensor methods declare they return, read from the installed
torch: its type stubs (`torch/_C/*.pyi`) for the functions written in C++, the annotations of the
ones written in Python. The lint reads the result, breakscan/lint/data/torch_returns.json, for a
torch call the catalogue did not probe: `torch.is_autocast_cpu_enabled()` is a Python bool, not a
tensor. Only answers every overload agrees on are kept; `Optional[Tensor]` and other unions, and
types it cannot read, are left out (the lint then keeps its default). It also lists the fields of
the named tuples of tensors any overload returns (`torch.return_types.max`: `values`, `indices`), so
that `x.max(dim=-1).values` is a tensor.

    python bench/torch_returns.py --write    # write the data for the installed torch
    python bench/torch_returns.py --check    # differences between the installed torch and the file
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import os
import re
import sys
import types
import typing
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_PATH = os.path.join(ROOT, "breakscan", "lint", "data", "torch_returns.json")
FORMAT = 1

# The namespaces model code calls functions from, by their public names.
NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.autograd",
              "torch.random", "torch.amp", "torch.nn.init", "torch.nn.utils", "torch.masked", "torch.sparse",
              "torch.nested", "torch.overrides", "torch.testing")
# A stub's names, as the kinds the lint knows ("tensors": a tuple or list of tensors).
_NAMED_KINDS = {
    "Tensor": "tensor", "Parameter": "tensor", "TensorBase": "tensor",
    "bool": "bool", "_bool": "bool",
    "int": "int", "_int": "int", "SymInt": "int", "IntLikeType": "int",
    "float": "float", "_float": "float", "SymFloat": "float",
    "str": "str", "None": "none", "NoneType": "none",
    "Size": "size", "_size": "size",
    "dtype": "other", "_dtype": "other", "device": "other", "_device": "other", "layout": "other",
    "_layout": "other", "Generator": "other", "finfo": "other", "iinfo": "other", "memory_format": "other",
    "_qscheme": "other", "qscheme": "other", "Stream": "other", "Event": "other", "complex": "other",
    "_complex": "other", "Storage": "other", "UntypedStorage": "other", "TypedStorage": "other",
    "object": "other",
}
_SEQUENCES = {"tuple", "Tuple", "list", "List", "Sequence"}


def kind_of(annotation: str) -> str | None:
    """The kind an annotation's text names; None when it names a union of kinds or a type the
    lint has no kind for."""
    try:
        node = ast.parse(annotation.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _kind(node)


def _kind(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "none"
        return kind_of(node.value) if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _same(_kind(node.left), _kind(node.right))
    if isinstance(node, ast.Subscript):
        generic = _last_name(node.value)
        members = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if generic == "Optional":
            return _same(_kind(members[0]), "none")
        if generic == "Union":
            kinds = [_kind(m) for m in members]
            return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else None
        if generic in _SEQUENCES:
            items = {_kind(m) for m in members if not (isinstance(m, ast.Constant) and m.value is Ellipsis)}
            if items == {"tensor"}:
                return "tensors"
            return "tuple" if items and None not in items else None
        return None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "return_types":
        return "tensors"  # `torch.return_types.max`: a named tuple of tensors
    name = _last_name(node)
    return _NAMED_KINDS.get(name) if name is not None else None


def _same(a: str | None, b: str | None) -> str | None:
    return a if a is not None and a == b else None


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _stub_returns(path: str, class_name: str | None = None) -> dict[str, list[str]]:
    """Every `def name(...) -> X` of a stub file (or of one class in it): name -> the texts of X,
    one per overload."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    body = tree.body
    if class_name is not None:
        body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    returns: dict[str, list[str]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            text = ast.unparse(node.returns) if node.returns is not None else ""
            returns.setdefault(node.name, []).append(text)
    return returns


def _annotation_text(annotation: object) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type):
        return annotation.__name__ if annotation.__module__ == "builtins" else f"{annotation.__module__}.{annotation.__qualname__}"
    return str(annotation).replace("typing.", "")


def _python_returns(function: object) -> list[str]:
    """The return annotations of a function written in Python, one per overload (`@overload`s
    registered at run time, else the function's own)."""
    overloads = typing.get_overloads(function) or [function]  # type: ignore[arg-type]
    texts = []
    for overload in overloads:
        try:
            annotation = inspect.signature(overload).return_annotation  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return []
        if annotation is inspect.Signature.empty:
            return []
        texts.append(_annotation_text(annotation))
    return texts


def _instance_kind(cls: type, torch: typing.Any) -> str | None:
    """What calling a class gives, as the name of a kind: its instance (`torch.autocast(...)`, a
    context manager; `torch.Size(...)`, a shape); None for nn.Modules, which the lint models
    by class."""
    if issubclass(cls, torch.nn.Module):
        return None
    if issubclass(cls, torch.Tensor) or isinstance(cls, type(torch.FloatTensor)):  # and the legacy tensor types
        return "Tensor"
    return "Size" if issubclass(cls, torch.Size) else "object"


def _declared(torch_dir: str) -> Iterator[tuple[str, list[str]]]:
    import torch

    stubs: dict[str, dict[str, list[str]]] = {}

    def stub(module_name: str) -> dict[str, list[str]]:
        if module_name not in stubs:
            parts = module_name.split(".")[1:]  # "torch._C._nn" -> _C/_nn.pyi
            path = os.path.join(torch_dir, *parts[:-1], f"{parts[-1]}.pyi") if len(parts) > 1 else ""
            if parts == ["_C"]:
                path = os.path.join(torch_dir, "_C", "__init__.pyi")
            stubs[module_name] = _stub_returns(path) if os.path.exists(path) else {}
        return stubs[module_name]

    for namespace in NAMESPACES:
        module = sys.modules.get(namespace) or __import__(namespace, fromlist=["_"])
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            function = getattr(module, name, None)
            if isinstance(function, type):
                kind = _instance_kind(function, torch)
                if kind is not None:
                    yield f"{namespace}.{name}", [kind]
                continue
            if inspect.ismodule(function) or not callable(function):
                continue
            if inspect.isbuiltin(function):
                owner = getattr(function, "__module__", None) or ""
                # `torch.*` re-exports the names of `_VariableFunctions` and of `torch._C` itself.
                owners = ["torch._C._VariableFunctions", "torch._C"] if owner == "torch" else [owner]
                texts = next((stub(o)[name] for o in owners if o.startswith("torch._C") and name in stub(o)), [])
            else:
                texts = _python_returns(inspect.unwrap(function))
            if texts:
                yield f"{namespace}.{name}", texts
    tensor_stub = _stub_returns(os.path.join(torch_dir, "_C", "__init__.pyi"), "TensorBase")
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_"):
            continue
        method = inspect.getattr_static(torch.Tensor, name)
        if isinstance(method, (property, staticmethod, classmethod)) or not callable(method):
            continue
        texts = _python_returns(method) if inspect.isfunction(method) else tensor_stub.get(name, [])
        if texts:
            yield f"torch.Tensor.{name}", texts


def _registered_tensors(cls: type) -> dict[str, str]:
    """The buffers and parameters a torch.nn class's own methods register on `self`, read from its
    source: name -> "tensor", or "optional" where one of them registers None (`bias=False`,
    `track_running_stats=False`; `module_tensors` keeps "optional" only where the class holds None
    when built with its defaults)."""
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, str] = {}

    def record(name: str, value: ast.expr | None) -> None:
        none = isinstance(value, ast.Constant) and value.value is None
        found[name] = "optional" if none or found.get(name) == "optional" else "tensor"

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and (
                node.func.value.id == "self" and node.func.attr in ("register_buffer", "register_parameter")
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            record(node.args[0].value, node.args[1] if len(node.args) > 1 else None)
        elif isinstance(node, ast.Assign):
            called = node.value.func if isinstance(node.value, ast.Call) else None
            made = called is not None and _last_name(called) in ("Parameter", "UninitializedParameter", "UninitializedBuffer")
            for target in node.targets:  # `self.bias_k = self.bias_v = None`
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
                    continue
                if made or (isinstance(node.value, ast.Constant) and node.value.value is None and target.attr in found):
                    record(target.attr, node.value)
    return found


def module_tensors() -> dict[str, dict[str, str]]:
    """For each public torch.nn module class: the buffers and parameters it and its bases register."""
    import torch

    classes = {}
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and cls is not torch.nn.Module:
            merged: dict[str, str] = {}
            for base in reversed(cls.__mro__):
                if isinstance(base, type) and issubclass(base, torch.nn.Module) and base is not torch.nn.Module:
                    for attr, kind in _registered_tensors(base).items():
                        merged[attr] = "optional" if "optional" in (kind, merged.get(attr)) else kind
            built = _built_with_defaults(cls)
            for attr, kind in merged.items():  # a tensor unless asked otherwise (`bias=True` by default)
                if kind == "optional" and built is not None and isinstance(getattr(built, attr, None), torch.Tensor):
                    merged[attr] = "tensor"
            if merged:
                classes[f"torch.nn.{name}"] = dict(sorted(merged.items()))
    return dict(sorted(classes.items()))


def _built_with_defaults(cls: type) -> object | None:
    """An instance made with the fewest small positional arguments that build one (keywords left
    to their defaults), or None."""
    import warnings

    for arguments in ((), (4,), (4, 4), (4, 4, 3), (4, 4, 4)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls(*arguments)
        except Exception:  # noqa: BLE001 - any failure means: try the next argument list
            continue
    return None


def collect() -> dict[str, object]:
    import torch

    torch_dir = os.path.dirname(torch.__file__)
    entries = {}
    named_tuples = set()
    for key, texts in _declared(torch_dir):
        named_tuples.update(name for text in texts for name in re.findall(r"torch\.return_types\.(\w+)", text))
        kinds = {kind_of(text) for text in texts}
        if len(kinds) == 1 and None not in kinds:
            entries[key] = {"returns": sorted(set(texts)), "kind": kinds.pop()}
    fields = {field for name in named_tuples for field, member in vars(getattr(torch.return_types, name)).items()
              if isinstance(member, types.MemberDescriptorType)}
    return {"format": FORMAT, "torch": torch.__version__, "entries": dict(sorted(entries.items())),
            "result_fields": sorted(fields), "module_tensors": module_tensors()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help=f"write {os.path.relpath(DATA_PATH, ROOT)}")
    action.add_argument("--check", action="store_true", help="show what differs from the stored file")
    arguments = parser.parse_args()
    data = collect()
    if arguments.write:
        with open(DATA_PATH, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write("\n")
        print(f"{len(data['entries'])} declared results for torch {data['torch']} -> {DATA_PATH}")  # type: ignore[arg-type]
        return 0
    with open(DATA_PATH, encoding="utf-8") as handle:
        stored = json.load(handle)
    fresh, old = data["entries"], stored["entries"]
    assert isinstance(fresh, dict)
    differences = sorted(key for key in fresh.keys() | old.keys() if fresh.get(key) != old.get(key))
    for key in differences:
        print(f"{key}: stored {old.get(key)}, installed torch {fresh.get(key)}")
    if data["result_fields"] != stored["result_fields"]:
        print(f"result fields: stored {stored['result_fields']}, installed torch {data['result_fields']}")
    if data["module_tensors"] != stored.get("module_tensors"):
        print("module tensors differ from the installed torch's")
    return 1 if differences or any(data[key] != stored.get(key) for key in ("result_fields", "module_tensors")) else 0


if __name__ == "__main__":
    sys.exit(main())
