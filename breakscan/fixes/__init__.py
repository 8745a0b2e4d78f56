"""Suggested refactors: for each finding, a change written against the user's own code (a
summary, a unified diff and, for safe single-node rewrites, exact edits).

Works on source text only: it never imports torch or the user's code.
"""

from __future__ import annotations

import functools
import linecache
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import replace

import libcst as cst

from breakscan.fixes.refactor import suggest
from breakscan.fixes.source import SourceModule
from breakscan.lint.rules import rule_by_id
from breakscan.model import Finding, Fix, TargetResult

__all__ = ["attach_fixes", "with_fix"]

_log = logging.getLogger(__name__)


def _load(path: str) -> SourceModule | None:
    """The text the findings were made on: through linecache, which holds standard input linted
    under a file's name and a notebook's code, and reads any other file as Python does (PEP 263)."""
    linecache.checkcache(path)  # a file changed on disk is read again; standard input and notebooks stay
    try:
        return SourceModule(path, "".join(linecache.getlines(path)))
    except (cst.ParserSyntaxError, RecursionError):
        return None


def _observed(targets: Sequence[TargetResult]) -> dict[tuple[str, int], tuple[str, ...]]:
    """GB ids TorchDynamo reported at each (file, line)."""
    seen: dict[tuple[str, int], tuple[str, ...]] = {}
    for brk in (b for t in targets for b in t.breaks if b.gb_id):
        key = (os.path.realpath(brk.path), brk.line)
        seen[key] = tuple(dict.fromkeys(seen.get(key, ()) + (brk.gb_id,)))
    return seen


def with_fix(finding: Finding, source: Callable[[str], SourceModule | None],
             gb_ids: tuple[str, ...] | None = None) -> Finding:
    """The finding with a suggested refactor where one applies (else as it came). `source(path)`
    gives the file to write it against; `gb_ids`, the break TorchDynamo reported at its line,
    choose the suggestion instead of every id the rule may predict."""
    # A construct in an installed library is fixed at the user's call into it.
    reached = finding.library.reached_from if finding.library else None
    if not reached and finding.library:
        return finding
    src = source(reached.path if reached else finding.path)
    if src is None:
        return finding
    try:
        fix = suggest(src, replace(finding, gb_ids=gb_ids) if gb_ids else finding)
    except Exception:  # noqa: BLE001 - a suggester's bug costs one suggestion, never the report
        _log.debug("no fix for %s:%s", finding.path, finding.line, exc_info=True)
        return finding
    return replace(finding, fix=fix) if fix is not None else finding


def attach_fixes(findings: list[Finding], targets: Sequence[TargetResult] = (), *,
                 suggested: bool = False) -> list[Finding]:
    """The findings, in order, each with a suggested refactor where one applies (else keeping
    the rule's generic hint). Each file is read and parsed once.

    With the confirmed `targets`, a finding's suggestion is chosen by the break TorchDynamo really
    reported at its line rather than by every id its rule may predict (a `.tolist()` of floats
    and one of ints need different fixes). `suggested`: the findings come from the lint, which
    wrote each one's suggestion where it parsed the file, so only breaks no rule predicted and
    findings where a target broke are looked at again."""
    observed = _observed(targets)
    sources = functools.cache(_load)
    result = []
    for finding in findings:
        evidence = observed.get((os.path.realpath(finding.path), finding.line))
        if evidence and suggested:
            finding = with_fix(_unsuggested(finding), sources, evidence)
        elif not suggested or finding.status == "dynamic-only":
            finding = with_fix(finding, sources, evidence)
        result.append(finding)
    return result


def _unsuggested(finding: Finding) -> Finding:
    """The finding with its rule's generic hint again in place of the lint's suggestion."""
    rule = rule_by_id(finding.rule)
    return replace(finding, fix=Fix(rule.fix_hint)) if rule is not None else finding
