"""What the human-readable reports show, computed once: findings grouped by file and rule (with
the `--max-per-rule` cut), per-file counts, the closing table by rule, and each finding's break."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from breakscan.model import Break, BreakDelta, Finding, Recompile, Report, TargetResult
from breakscan.report.graph import TargetChain, build_chains

_STATUS_ORDER = {"confirmed": 0, "dynamic-only": 1, "static-only": 2}


def _column(finding: Finding) -> str:
    """Which count a finding adds to: confirmed, lint-only, missed (a break no rule predicted in
    code the lint read), or in a library (one inside an installed package the lint did not read)."""
    if finding.status == "dynamic-only":
        return "in_library" if finding.library is not None else "missed"
    return "confirmed" if finding.status == "confirmed" else "lint_only"


@dataclass(frozen=True)
class Counts:
    findings: int = 0
    confirmed: int = 0
    lint_only: int = 0
    missed: int = 0  # breaks no rule predicted (dynamic-only), in code the lint read
    in_library: int = 0  # breaks no rule predicted inside an installed library

    @classmethod
    def of(cls, findings: list[Finding]) -> Counts:
        columns = [_column(f) for f in findings]
        return cls(len(findings), columns.count("confirmed"), columns.count("lint_only"), columns.count("missed"),
                   columns.count("in_library"))

    def confirmation(self) -> str:
        """`3 confirmed by TorchDynamo, 1 lint-only, 0 missed by the lint` (`, 1 in a library`)."""
        text = f"{self.confirmed} confirmed by TorchDynamo, {self.lint_only} lint-only, {self.missed} missed by the lint"
        return text + (f", {self.in_library} in a library" if self.in_library else "")


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
    in_library: int


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
    breaks = {index: brk for index, finding in enumerate(report.findings)
              if (brk := report.explained_break(finding)) is not None}
    ordered = sorted(sections.values(), key=lambda s: s.path)
    return Overview(report, ordered, chains, breaks)


def rule_rows(findings: list[Finding]) -> list[RuleRow]:
    """Per rule, under the rule each finding shows: confirmed, lint-only, missed and in a library;
    unpredicted breaks (BS000) get a row per GB id."""
    table: dict[tuple[str, str], dict[str, int]] = {}
    for finding in findings:
        name = finding.name
        if finding.rule == "BS000":
            name = f"unpredicted {', '.join(finding.gb_ids) or 'break'}"
        row = table.setdefault((finding.rule, name), dict.fromkeys(("confirmed", "lint_only", "missed", "in_library"), 0))
        row[_column(finding)] += 1
    return [RuleRow(rule, name, **table[rule, name]) for rule, name in sorted(table, key=lambda k: (k[0] == "BS000", k))]


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
    """`in vqlib at codebook.py:13, reached from models.py:15`, for a construct in an installed package."""
    if finding.library is None:
        return None
    reached = finding.library.reached_from
    where = f", reached from {reached.path}:{reached.line}" if reached is not None else ""
    return f"in {finding.library.package} at {os.path.basename(finding.path)}:{finding.line}{where}"


def confirmations(report: Report, finding: Finding) -> str:
    """`×2 in Detector(), ×1 in Head()`: the occurrences of a finding's breaks, per target."""
    per_target: dict[int, int] = {}
    for ref in finding.breaks:
        per_target[ref.target] = per_target.get(ref.target, 0) + report.break_of(ref).count
    return ", ".join(f"×{n} in {report.targets[t].name}" if n > 1 else f"in {report.targets[t].name}"
                     for t, n in per_target.items())


def break_counts(target: TargetResult) -> str:
    """`7 graphs, 4 breaks (6 occurrences)`: what a target's headline and the progress line say."""
    sites, occurrences = len(target.breaks), sum(b.count for b in target.breaks)
    text = f"{plural(len(target.graphs), 'graph')}, {plural(sites, 'break')}"
    return text + (f" ({occurrences} occurrences)" if occurrences != sites else "")


def recompile_counts(target: TargetResult) -> str | None:
    """`4 recompiles (limit hit) · 5 compiles, 0.4 s`: a target's recompilations and compile cost,
    None when it compiled nothing."""
    if not target.compile_count:
        return None
    total = sum(r.count for r in target.recompiles)
    text = f"{plural(total, 'recompile')}{' (limit hit)' if any(r.limit_hit for r in target.recompiles) else ''} · " if total else ""
    return text + f"{plural(target.compile_count, 'compile')}, {target.compile_time:.1f} s compiling"


def device_label(target: TargetResult) -> str | None:
    """`cuda`, or `cpu (failed on cuda: RuntimeError: ...)` when --device auto fell back."""
    if target.device_fallback:
        return f"{target.device} ({target.device_fallback})"
    return target.device


def recompile_text(item: Recompile) -> str:
    """`m.py:11 recompiled ×7 (limit hit): self.step == 0`: one guard that made a function compile again."""
    limit = ", limit hit: runs eagerly" if item.limit_hit else ""
    return f"{os.path.basename(item.path)}:{item.line} recompiled {item.function} ×{item.count}{limit}: {item.guard}"


def delta_text(item: BreakDelta) -> str:
    """`m.py:33 GB0124 what (×8 → ×2)`: one break compared with the baseline."""
    times = f"×{item.before} → ×{item.after}" if item.before and item.after else f"×{item.before or item.after}"
    kind = f" {item.gb_id}" if item.gb_id else ""
    return f"{os.path.basename(item.path)}:{item.line}{kind} {item.what} ({times})"
