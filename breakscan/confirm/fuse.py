"""Joins the lint's findings with the breaks the targets really had.

A break matches a finding at its own (path, line) or at any line of its stack (the chain: a
finding on the call of a helper that breaks inside is confirmed by that break). Matched findings
become "confirmed"; breaks that no finding predicted become BS000 "dynamic-only" findings.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

from breakscan.model import Break, Finding, Span, TargetResult

Site = tuple[str, int]


def _site(path: str, line: int) -> Site:
    return os.path.realpath(path), line


@dataclass
class _Seen:
    """One break site over all targets, and the lines it matches findings at."""

    brk: Break
    target: str
    count: int
    sites: frozenset[Site]
    matched: bool = False


def _collect(targets: list[TargetResult]) -> list[_Seen]:
    merged: dict[tuple[Site, str | None, str], _Seen] = {}
    for target in targets:
        for brk in target.breaks:
            key = (_site(brk.path, brk.line), brk.gb_id, brk.reason)
            if key in merged:
                merged[key].count += brk.count
            else:
                sites = frozenset({key[0]} | {_site(f.path, f.line) for f in brk.stack})
                merged[key] = _Seen(brk, target.name, brk.count, sites)
    return list(merged.values())


def fuse(findings: list[Finding], targets: list[TargetResult]) -> list[Finding]:
    seen = _collect(targets)
    fused = []
    for finding in findings:
        here = _site(finding.path, finding.line)
        matches = [s for s in seen if here in s.sites]
        for match in matches:
            match.matched = True
        if matches:
            finding = finding.with_status(
                "confirmed", count=sum(m.count for m in matches), target=matches[0].target
            )
        fused.append(finding)
    return fused + [_unpredicted(s) for s in seen if not s.matched]


def _unpredicted(seen: _Seen) -> Finding:
    brk = seen.brk
    text = linecache.getline(brk.path, brk.line).rstrip("\r\n")
    span = Span(brk.line, 1, brk.line, len(text) + 1)
    site = max((i for i, f in enumerate(brk.stack) if (f.path, f.line) == (brk.path, brk.line)),
               default=len(brk.stack) - 1)
    skipped = "; Dynamo skips the whole frame here (it runs eagerly)" if brk.frame_skipped else ""
    return Finding(
        rule="BS000",
        name="unpredicted-break",
        path=brk.path,
        span=span,
        message=f"graph break no rule predicted: {brk.reason}{skipped}",
        gb_ids=(brk.gb_id,) if brk.gb_id else (),
        severity="error",
        chain=tuple(f.function for f in brk.stack[: site + 1]),
        call_sites=tuple(brk.stack[:site]),
        status="dynamic-only",
        count=seen.count,
        target=seen.target,
    )
