"""What a rule id means, for places that show rules to people: SARIF rule metadata, LSP hovers.

Covers the lint's rules, and BS000 and BR000, the ids the fuser gives a break and a recompilation
that no rule predicted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from breakscan.model import Severity

# PyTorch documents each graph-break id on its own page.
GB_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"
UNPREDICTED_ID = "BS000"


def gb_url(gb_id: str) -> str:
    """`GB0124` -> the PyTorch page explaining that graph break."""
    return f"{GB_SITE}{gb_id.lower()}.html"


@dataclass(frozen=True)
class RuleDoc:
    id: str
    name: str
    summary: str  # one line: the rule's message
    fix_hint: str
    markdown: str  # the full documentation
    severity: Severity
    gb_ids: tuple[str, ...]
    kind: str = "break"  # or "recompile" (see Rule.kind)

    @property
    def help_uri(self) -> str:
        return gb_url(self.gb_ids[0]) if self.gb_ids else f"{GB_SITE}index.html"


_UNPREDICTED = RuleDoc(
    id=UNPREDICTED_ID,
    name="unpredicted-break",
    summary="a graph break TorchDynamo reported that no rule predicted",
    fix_hint="read the break's reason and hints; rewrite the code, or wrap it in torch.compiler.disable",
    markdown="## What it does\nReports a graph break seen while running a target under TorchDynamo at a line "
             "where no lint rule predicted one.\n\n## Why is this bad?\nEvery graph break ends the compiled "
             "graph, runs Python eagerly and starts a new graph: the speed-up of `torch.compile` is lost there.",
    severity="error",
    gb_ids=(),
)


_UNPREDICTED_RECOMPILE = RuleDoc(
    id="BR000",
    name="unpredicted-recompile",
    summary="a recompilation TorchDynamo did that no rule predicted",
    fix_hint="read the failed guard and its advice: mark the varying dimension dynamic, keep numbers as 0-d "
             "tensors, or keep the guarded value out of compiled code",
    markdown="## What it does\nReports a recompilation seen while running a target's calls under TorchDynamo: a "
             "guard of an earlier compile failed on the value of this line.\n\n## Why is this bad?\nEvery "
             "recompilation compiles the function again (seconds to minutes); at the recompile limit (8) "
             "TorchDynamo gives up and runs the function eagerly.",
    severity="warning",
    gb_ids=(),
    kind="recompile",
)


@functools.cache
def all_rule_docs() -> tuple[RuleDoc, ...]:
    from breakscan.lint.rules import all_rules

    docs = [_UNPREDICTED, _UNPREDICTED_RECOMPILE]
    for rule in all_rules():
        docs.append(RuleDoc(rule.id, rule.name, rule.message, rule.fix_hint, rule.documentation(), rule.severity,
                            tuple(rule.gb_ids), rule.kind))
    return tuple(docs)


def rule_doc(rule_id: str) -> RuleDoc | None:
    """By id (any case) or name."""
    return next((doc for doc in all_rule_docs() if doc.id == rule_id.upper() or doc.name == rule_id), None)
