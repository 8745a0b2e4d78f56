"""`--verify --baseline FILE`: compare this run with an earlier JSON report, per target: graphs and
breaks before -> after, the breaks that are gone, the new ones and those that remain.

The user has edited the code in between, so line numbers move: a break is matched to the
baseline by its kind and the text of its line, then by its kind and function, then by its kind
and line number.
"""

from __future__ import annotations

import json
import os

from breakscan.model import Break, BreakDelta, Report, TargetDelta, TargetResult, Verification
from breakscan.report.sources import line_text


class BaselineError(Exception):
    """The baseline cannot be used; the message says why (a usage error for the CLI)."""


def load_baseline(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise BaselineError(f"cannot read baseline {path}: {error.strerror}") from None
    except ValueError as error:
        raise BaselineError(f"baseline {path} is not JSON: {error}") from None
    if not isinstance(data, dict) or "breakscan" not in data or not isinstance(data.get("targets"), list):
        raise BaselineError(f"baseline {path} is not a breakscan JSON report (make one with --format json)")
    return data


def attach_baseline(report: Report, baseline: str | dict, label: str | None = None) -> Report:
    """Set `report.verification` from a baseline report (a path, or its loaded JSON)."""
    data = load_baseline(baseline) if isinstance(baseline, str) else baseline
    name = label or (baseline if isinstance(baseline, str) else "baseline")
    report.verification = compare(data, report, name)
    return report


# -- comparison ------------------------------------------------------------------------------
def _same_path(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b) or os.path.basename(a) == os.path.basename(b)


def _kind(gb_id: str | None, gb_type: str | None, reason: str) -> str:
    return gb_id or gb_type or reason


def _baseline_code(target: dict) -> dict[tuple[str, int], str]:
    """The line text the baseline recorded for each break (in its graph's break nodes)."""
    nodes = (target.get("graph") or {}).get("nodes", [])
    return {(n["path"], n["line"]): n.get("code") or "" for n in nodes if n.get("kind") == "break"}


def _site_function(stack: list, line: int) -> str:
    frames = [f for f in stack if f["line"] == line] or stack[-1:]
    return frames[-1]["function"] if frames else ""


def _old_keys(item: dict, code: str) -> tuple:
    kind = _kind(item.get("gb_id"), item.get("gb_type"), item.get("reason", ""))
    return (kind, code), (kind, _site_function(item.get("stack", []), item["line"])), (kind, item["line"])


def _new_keys(brk: Break) -> tuple:
    kind = _kind(brk.gb_id, brk.gb_type, brk.reason)
    stack = [{"line": f.line, "function": f.function} for f in brk.stack]
    code = line_text(brk.path, brk.line).strip()
    return (kind, code), (kind, _site_function(stack, brk.line)), (kind, brk.line)


def _pair(old: list[tuple], new: list[tuple]) -> list[tuple[int, int]]:
    """(old index, new index) pairs, matching on the strongest key first."""
    pairs: list[tuple[int, int]] = []
    free_old, free_new = set(range(len(old))), set(range(len(new)))
    for level in range(3):
        for j in sorted(free_new):
            i = next((i for i in sorted(free_old) if old[i][level] == new[j][level] and old[i][level][1]), None)
            if i is not None:
                pairs.append((i, j))
                free_old.discard(i)
                free_new.discard(j)
    return pairs


def _gone(item: dict) -> BreakDelta:
    what = item.get("gb_type") or item.get("reason", "")
    return BreakDelta(item["path"], item["line"], item.get("gb_id"), what, item.get("count", 1), 0)


def _now(brk: Break, before: int = 0) -> BreakDelta:
    return BreakDelta(brk.path, brk.line, brk.gb_id, brk.gb_type or brk.reason, before, brk.count)


def _target_delta(old: dict | None, new: TargetResult | None) -> TargetDelta:
    old_breaks = old.get("breaks", []) if old else []
    new_breaks = list(new.breaks) if new else []
    codes = _baseline_code(old) if old else {}
    pairs = _pair([_old_keys(b, codes.get((b["path"], b["line"]), "")) for b in old_breaks],
                  [_new_keys(b) for b in new_breaks])
    matched_old, matched_new = {i for i, _ in pairs}, {j for _, j in pairs}
    return TargetDelta(
        name=new.name if new else old["name"], path=new.path if new else old["path"],
        graphs_before=old.get("graph_count") if old else None,
        graphs_after=new.graph_count if new else None,
        fixed=tuple(_gone(b) for i, b in enumerate(old_breaks) if i not in matched_old),
        new=tuple(_now(b) for j, b in enumerate(new_breaks) if j not in matched_new),
        remaining=tuple(_now(new_breaks[j], old_breaks[i].get("count", 1))
                        for i, j in sorted(pairs, key=lambda pair: pair[1])),
    )


def compare(baseline: dict, report: Report, label: str) -> Verification:
    old_targets = list(baseline.get("targets", []))
    deltas = []
    for target in report.targets:
        old = next((t for t in old_targets
                    if t.get("name") == target.name and _same_path(t.get("path", ""), target.path)), None)
        if old is not None:
            old_targets.remove(old)
        deltas.append(_target_delta(old, target))
    deltas += [_target_delta(old, None) for old in old_targets]
    return Verification(label, int(baseline.get("summary", {}).get("findings", len(baseline.get("findings", [])))),
                        len(report.findings), tuple(deltas))
