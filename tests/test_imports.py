"""breakscan's modules import one another without cycles: every import that runs, at module level or
inside a function, goes one way (a cycle such as cli -> commands -> cli makes import order matter).
Imports under `if TYPE_CHECKING:` never run and do not count."""

from __future__ import annotations

import ast

import networkx as nx

from tests.helpers import ROOT

PACKAGE = ROOT / "breakscan"


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_nodes(node: ast.AST):
    """Every node below `node`, except the bodies of `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        test = child.test if isinstance(child, ast.If) else None
        if test is not None and "TYPE_CHECKING" in ast.unparse(test):
            yield from (n for branch in child.orelse for n in [branch, *runtime_nodes(branch)])
            continue
        yield child
        yield from runtime_nodes(child)


def imported(tree: ast.Module, name: str, is_package: bool, known: set[str]) -> set[str]:
    """The breakscan modules a module imports, anywhere it runs (`from breakscan.x import y` is y
    where y is a module, else x)."""
    found = set()
    for node in runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names)
    return {module for module in found if module in known}


def import_graph() -> nx.DiGraph:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in paths.items():
        tree = ast.parse(path.read_text())
        for target in imported(tree, name, path.name == "__init__.py", set(paths)):
            if target != name and not name.startswith(target + "."):  # a package's own __init__ runs first anyway
                graph.add_edge(name, target)
    return graph


def test_the_command_line_modules_import_without_cycles():
    graph = import_graph()
    assert graph.has_edge("breakscan.commands", "breakscan.exits")
    cycles = [cycle for cycle in nx.simple_cycles(graph)
              if any(m in cycle for m in ("breakscan.cli", "breakscan.commands", "breakscan.changed"))]
    assert cycles == []


def test_the_whole_package_has_no_import_cycles():
    assert list(nx.simple_cycles(import_graph())) == []


def test_type_checking_imports_do_not_count():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import breakscan.cli\nimport breakscan.model\n")
    assert imported(tree, "breakscan.x", False, {"breakscan.cli", "breakscan.model"}) == {"breakscan.model"}

