"""What the human-readable reports show, computed once: findings grouped by file and rule (with
the `--max-per-rule` cut), per-file counts, the closing table by rule, and each finding's break."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from breakscan.model import Break, BreakDelta, Finding, Report
from breakscan.report.graph import BreakNode, TargetChain, build_chains

_STATUS_ORDER = {"confirmed": 0, "dynamic-only": 1, "static-only": 2}


@dataclass(frozen=True)
class Counts:
    findings: int = 0
    confirmed: int = 0
    lint_only: int = 0
    missed: int = 0  # breaks no rule predicted (dynamic-only)

    @classmethod
    def of(cls, findings: list[Finding]) -> Counts:
        status = [f.status for f in findings]
        return cls(len(findings), status.count("confirmed"), status.count("static-only"), status.count("dynamic-only"))


@dataclass
class RuleGroup:
    rule: str
    name: str
    shown: list[int]  # indexes into report.findings
    hidden: list[int]


@dataclass
class FileSection:
    path: str
    findings: list[int] = field(default_factory=list)
    chains: list[TargetChain] = field(default_factory=list)


@dataclass(frozen=True)
class RuleRow:
    rule: str
    name: str
    confirmed: int
    lint_only: int
    missed: int


@dataclass
class Overview:
    report: Report
    sections: list[FileSection]
    chains: list[TargetChain]
    breaks: dict[int, Break]  # finding index -> the break it stands for

    def counts(self, section: FileSection) -> Counts:
        return Counts.of([self.report.findings[i] for i in section.findings])

    def groups(self, section: FileSection, max_per_rule: int | None) -> list[RuleGroup]:
        findings = self.report.findings
        by_rule: dict[str, list[int]] = defaultdict(list)
        for index in section.findings:
            by_rule[findings[index].rule].append(index)
        groups = []
        for rule in sorted(by_rule, key=lambda r: (r == "BS000", r)):
            ordered = sorted(by_rule[rule], key=lambda i: (_STATUS_ORDER[findings[i].status], -findings[i].count,
                                                           findings[i].span))
            cut = len(ordered) if max_per_rule is None else max(max_per_rule, 0)
            groups.append(RuleGroup(rule, findings[ordered[0]].name, ordered[:cut], ordered[cut:]))
        return groups


def overview(report: Report) -> Overview:
    chains = build_chains(report.targets, report.findings)
    sections: dict[str, FileSection] = {}

    def section(path: str) -> FileSection:
        return sections.setdefault(os.path.realpath(path), FileSection(path))

    for index, finding in enumerate(report.findings):
        section(finding.path).findings.append(index)
    for chain in chains:
        section(chain.target.path).chains.append(chain)
    breaks = {node.finding: node.brk for chain in chains for node in chain.nodes
              if isinstance(node, BreakNode) and node.finding is not None}
    ordered = sorted(sections.values(), key=lambda s: s.path)
    return Overview(report, ordered, chains, breaks)


# Ids that wrap another break (a break in a loop, under a context manager): they name no construct.
_WRAPPERS = ("GB7000", "GB0066")


def _owner(gb_ids: tuple[str, ...]) -> tuple[str, str] | None:
    """The one rule that predicts these GB ids, if exactly one does: a break it did not flag is
    one it missed."""
    from breakscan.lint.rules import all_rules

    wanted = set(gb_ids) - set(_WRAPPERS)
    owners = [r for r in all_rules() if set(r.gb_ids) & wanted]
    return (owners[0].id, owners[0].name) if len(owners) == 1 else None


def rule_rows(findings: list[Finding]) -> list[RuleRow]:
    """Per rule: confirmed, lint-only, and missed (a break of a kind only that rule predicts, that
    it did not flag); other unpredicted breaks get a BS000 row per GB id."""
    table: dict[tuple[str, str], list[int]] = {}
    for finding in findings:
        key = (finding.rule, finding.name)
        if finding.status == "dynamic-only":
            key = _owner(finding.gb_ids) or (finding.rule, f"unpredicted {', '.join(finding.gb_ids) or 'break'}")
        row = table.setdefault(key, [0, 0, 0])
        row[("confirmed", "static-only", "dynamic-only").index(finding.status)] += 1
    return [RuleRow(rule, name, *table[rule, name]) for rule, name in sorted(table, key=lambda k: (k[0] == "BS000", k))]


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def call_chain(finding: Finding, brk: Break | None) -> str:
    """From the compiled root to the construct; with lines where the run recorded the stack."""
    if brk is not None and brk.stack:
        frames = list(brk.stack)
        site = max((i for i, f in enumerate(frames) if f.line == brk.line), default=len(frames) - 1)
        return " → ".join(f"{f.function}:{f.line}" for f in frames[: site + 1])
    if finding.call_sites and len(finding.call_sites) == len(finding.chain) - 1:
        # Where each function calls the next: the way in from a file the user named to a helper elsewhere.
        calls = [f"{function} ({site.path}:{site.line})" for function, site in zip(finding.chain, finding.call_sites)]
        return " → ".join([*calls, finding.chain[-1]])
    return " → ".join(finding.chain)


def library_origin(finding: Finding) -> str | None:
    """`in package x_transformers, reached from models.py:15`, for a construct in a followed package."""
    if finding.library is None:
        return None
    reached = finding.library.reached_from
    where = f", reached from {reached.path}:{reached.line}" if reached is not None else ""
    return f"in package {finding.library.package}{where}"


def delta_text(item: BreakDelta) -> str:
    """`m.py:33 GB0124 what (×8 → ×2)`: one break compared with the baseline."""
    times = f"×{item.before} → ×{item.after}" if item.before and item.after else f"×{item.before or item.after}"
    kind = f" {item.gb_id}" if item.gb_id else ""
    return f"{os.path.basename(item.path)}:{item.line}{kind} {item.what} ({times})"
