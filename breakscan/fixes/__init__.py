"""Suggested refactors: for each finding, a change written against the user's own code (a
summary, a unified diff and, for safe single-node rewrites, exact edits).

Works on source text only: it never imports torch or the user's code.
"""

from __future__ import annotations

import linecache
import logging
import os
from collections.abc import Sequence
from dataclasses import replace

import libcst as cst

from breakscan.fixes.refactor import suggest
from breakscan.fixes.source import SourceModule
from breakscan.model import Finding, TargetResult

__all__ = ["attach_fixes"]

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


def attach_fixes(findings: list[Finding], targets: Sequence[TargetResult] = ()) -> list[Finding]:
    """The findings, in order, each with a suggested refactor where one applies (else as they
    came, keeping the rule's generic hint). Each file is read and parsed once.

    With the confirmed `targets`, a finding's suggestion is chosen by the break TorchDynamo really
    reported at its line rather than by every id its rule may predict (a `.tolist()` of floats
    and one of ints need different fixes)."""
    observed = _observed(targets)
    sources: dict[str, SourceModule | None] = {}
    result = []
    for finding in findings:
        # A construct in an installed library is fixed at the user's call into it.
        reached = finding.library.reached_from if finding.library else None
        path = reached.path if reached else finding.path
        if path not in sources:
            sources[path] = _load(path)
        src = sources[path]
        evidence = observed.get((os.path.realpath(finding.path), finding.line))
        fix = None
        if src is not None and (reached or not finding.library):
            try:
                fix = suggest(src, replace(finding, gb_ids=evidence) if evidence else finding)
            except Exception:  # noqa: BLE001 - a suggester's bug costs one suggestion, never the report
                _log.debug("no fix for %s:%s", finding.path, finding.line, exc_info=True)
        result.append(replace(finding, fix=fix) if fix is not None else finding)
    return result
