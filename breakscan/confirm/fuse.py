"""Joins the lint's findings with the breaks the targets really had, and records each match.

A break matches a finding at its own site (the user's line; for a break inside an installed
library, also the library line a `--follow` finding is at); failing that, on a later line of the
finding's own construct when it spans several (the jump of an `if` whose condition runs over lines is
reported at the line of its last operand), if the GB ids agree and no other finding starts there; failing
that, at any line of its stack (the chain: a finding on the call of a helper that breaks inside is
confirmed by that break).
Matched findings become "confirmed" and carry `BreakRef`s to their breaks, so that every renderer
shows the same break's explanation, count and GB id; breaks that no finding predicted become BS000
"dynamic-only" findings, labelled with their library when they broke inside one.
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field

from breakscan.model import RECOMPILE_RULES, Break, BreakRef, Finding, Frame, LibrarySite, Span, TargetResult

Site = tuple[str, int]


def _site(path: str, line: int) -> Site:
    return os.path.realpath(path), line


def own_sites(brk: Break) -> frozenset[Site]:
    """Where the construct that broke is: the user's line and, inside a library, the library's."""
    library = {_site(brk.library.path, brk.library.line)} if brk.library else set()
    return frozenset({_site(brk.path, brk.line)} | library)


def _chain_sites(brk: Break) -> frozenset[Site]:
    return frozenset(_site(f.path, f.line) for f in brk.stack)


def _refs(finding: Finding, targets: list[TargetResult], starts: set[Site]) -> tuple[BreakRef, ...]:
    """The breaks at the finding's site and on the later lines of its construct (see the
    module's docstring; `starts`: where findings start); if none, those whose stack passes through it."""
    here = _site(finding.path, finding.line)
    later_lines = {_site(finding.path, line) for line in range(finding.line + 1, finding.span.end_line + 1)}
    at_site, in_span, on_chain = [], [], []
    for t, target in enumerate(targets):
        for i, brk in enumerate(target.breaks):
            sites = own_sites(brk)
            if here in sites:
                at_site.append(BreakRef(t, i, True))
            elif sites & later_lines and not sites & starts and (brk.gb_id is None or brk.gb_id in finding.gb_ids):
                in_span.append(BreakRef(t, i, True))
            elif here in _chain_sites(brk):
                on_chain.append(BreakRef(t, i, False))
    return tuple(at_site + in_span or on_chain)


def _count_in_first_target(refs: tuple[BreakRef, ...], targets: list[TargetResult]) -> int:
    first = refs[0].target
    return sum(targets[r.target].breaks[r.index].count for r in refs if r.target == first)


def fuse(findings: list[Finding], targets: list[TargetResult]) -> list[Finding]:
    fused: list[Finding] = []
    matched: set[tuple[int, int]] = set()
    recompiled: set[tuple[int, int]] = set()
    starts = {_site(finding.path, finding.line) for finding in findings}
    for finding in findings:
        if finding.rule.startswith(RECOMPILE_RULES):
            fused.append(_with_recompiles(finding, targets, recompiled))
            continue
        refs = _refs(finding, targets, starts)
        if refs:
            matched.update((r.target, r.index) for r in refs)
            finding = finding.with_status("confirmed", count=_count_in_first_target(refs, targets),
                                          target=targets[refs[0].target].name, breaks=refs)
        fused.append(finding)
    return fused + _unpredicted(targets, matched) + _unpredicted_recompiles(targets, recompiled)


def _with_recompiles(finding: Finding, targets: list[TargetResult], matched: set[tuple[int, int]]) -> Finding:
    """A recompile finding, confirmed by the recompilations whose guarded value is on its line."""
    here = _site(finding.path, finding.line)
    found = [(t, i) for t, target in enumerate(targets) for i, item in enumerate(target.recompiles)
             if _site(item.path, item.line) == here]
    if not found:
        return finding
    matched.update(found)
    first = found[0][0]
    count = sum(targets[t].recompiles[i].count for t, i in found if t == first)
    return finding.with_status("confirmed", count=count, target=targets[first].name)


def _unpredicted_recompiles(targets: list[TargetResult], matched: set[tuple[int, int]]) -> list[Finding]:
    """A BR000 finding per recompilation site no rule predicted: an error when the function hit
    the recompile limit (it then runs eagerly), else a warning (each costs a compile)."""
    found = []
    for t, target in enumerate(targets):
        for i, item in enumerate(target.recompiles):
            if (t, i) in matched:
                continue
            limit = "; the recompile limit was hit: it now runs eagerly" if item.limit_hit else ""
            found.append(Finding(
                rule=f"{RECOMPILE_RULES}000", name="unpredicted-recompile", path=item.path,
                span=_line_span(item.path, item.line),
                message=(f"{item.function} recompiled ×{item.count} because the guard `{item.guard}` failed"
                         f"{limit}: {item.reason}"),
                gb_ids=(), severity="error" if item.limit_hit else "warning", chain=(item.function,),
                status="dynamic-only", count=item.count, target=target.name))
    return found


@dataclass
class _Unmatched:
    """One unpredicted break site, over all the targets that had it."""

    brk: Break
    refs: list[BreakRef] = field(default_factory=list)


# The "break" TorchDynamo records when a function reaches the recompile limit (the rest of it runs
# eagerly): the recompilation that hit the limit is the finding (its rule, or BR000), not a break.
RECOMPILE_LIMIT_BREAK = "Dynamo recompile limit exceeded"


def _unpredicted(targets: list[TargetResult], matched: set[tuple[int, int]]) -> list[Finding]:
    merged: dict[tuple, _Unmatched] = {}
    for t, target in enumerate(targets):
        limit_hit = any(r.limit_hit for r in target.recompiles)
        for i, brk in enumerate(target.breaks):
            if (t, i) not in matched and not (limit_hit and brk.gb_type == RECOMPILE_LIMIT_BREAK):
                key = (own_sites(brk), brk.gb_id, brk.reason)
                merged.setdefault(key, _Unmatched(brk)).refs.append(BreakRef(t, i, True))
    return [_unpredicted_finding(u.brk, tuple(u.refs), targets) for u in merged.values()]


def _line_span(path: str, line: int) -> Span:
    """The line's code, from its first non-blank character."""
    text = linecache.getline(path, line).rstrip("\r\n")
    return Span(line, len(text) - len(text.lstrip()) + 1, line, len(text) + 1)


def _unpredicted_finding(brk: Break, refs: tuple[BreakRef, ...], targets: list[TargetResult]) -> Finding:
    site = max((i for i, f in enumerate(brk.stack) if (f.path, f.line) == (brk.path, brk.line)),
               default=len(brk.stack) - 1)
    user_frames = brk.stack[: site + 1]
    skipped = "; Dynamo skips the whole frame here (it runs eagerly)" if brk.frame_skipped else ""
    path, line, chain, library = brk.path, brk.line, tuple(f.function for f in user_frames), None
    message = f"graph break no rule predicted: {brk.reason}{skipped}"
    if brk.library is not None:
        reached = user_frames[-1] if user_frames else Frame(brk.path, brk.line, "")
        path, line, library = brk.library.path, brk.library.line, LibrarySite(brk.library.package, reached)
        chain += (brk.library.function,)
        message = (f"graph break inside the installed library {brk.library.package} (not read by the lint; "
                   f"--follow reads it): {brk.reason}{skipped}")
    return Finding(
        rule="BS000",
        name="unpredicted-break",
        path=path,
        span=_line_span(path, line),
        message=message,
        gb_ids=(brk.gb_id,) if brk.gb_id else (),
        severity="error",
        chain=chain,
        call_sites=tuple(user_frames) if library else tuple(brk.stack[:site]),
        status="dynamic-only",
        count=_count_in_first_target(refs, targets),
        target=targets[refs[0].target].name,
        breaks=refs,
        library=library,
    )
