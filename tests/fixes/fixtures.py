"""The refactor fixtures (fixtures/refactors/*.py): each marks its one break with

    <code>  # refactor: RULE GBID [leaves GBID...]

RULE is the id of the rule that predicts the break (its family picks the suggesters), GBID the
break TorchDynamo reports there, and `leaves` the breaks the suggested change knowingly keeps
(`@torch.compiler.disable` keeps one at the call)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from breakscan.confirm.discover import discover_targets
from breakscan.model import Finding, Span, TargetSpec
from tests.helpers import FIXTURES

REFACTORS = FIXTURES / "refactors"
_MARKER = re.compile(r"#\s*refactor:\s*(?P<rule>BS\d+)\s+(?P<gb>GB\d+)(?:\s+leaves\s+(?P<leaves>[GB\d ]+))?")


@dataclass(frozen=True)
class RefactorCase:
    path: Path
    line: int
    rule: str
    gb_id: str
    leaves: tuple[str, ...]
    spec: TargetSpec

    @property
    def name(self) -> str:
        return self.path.stem

    def finding(self, rule: str | None = None) -> Finding:
        """The finding a rule (`rule`, default the marker's) or, with rule "BS000", the dynamic
        confirmation would produce here: the whole line, the call chain from the compiled root."""
        text = self.path.read_text().splitlines()[self.line - 1]
        rule = rule or self.rule
        return Finding(rule=rule, name="case", path=str(self.path), span=Span(self.line, 1, self.line, len(text) + 1),
                       message="", gb_ids=(self.gb_id,), severity="error", chain=self.chain(),
                       status="dynamic-only" if rule == "BS000" else "static-only")

    def chain(self) -> tuple[str, ...]:
        functions = _functions(self.path.read_text())
        entry = self.spec.entry
        root = f"{entry[:-2]}.forward" if entry.endswith("()") else entry
        holder = next((name for name, first, last in functions if first <= self.line <= last), root)
        return (root,) if holder == root else (root, holder)


def _functions(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of the module's functions and methods."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.{item.name}", item.lineno, item.end_lineno)
                      for item in node.body if isinstance(item, ast.FunctionDef)]
        elif isinstance(node, ast.FunctionDef):
            found.append((node.name, node.lineno, node.end_lineno))
    return found


def load_cases() -> list[RefactorCase]:
    cases = []
    for path in sorted(REFACTORS.glob("*.py")):
        lines = path.read_text().splitlines()
        (line, match), = [(n, m) for n, text in enumerate(lines, 1) if (m := _MARKER.search(text))]
        specs, _ = discover_targets(str(path))
        leaves = tuple((match["leaves"] or "").split())
        cases.append(RefactorCase(path, line, match["rule"], match["gb"], leaves, specs[0]))
    return cases
