"""What `breakscan fix --verify` did, as text or JSON: per fix, kept or rolled back and why, the
breaks and graphs before and after, and how the outputs compared."""

from __future__ import annotations

import math
import os

from breakscan.fixes.verify import Counts, FixTrial, FixVerification
from breakscan.model import OutputCheck, Report
from breakscan.report.json_format import error_dict
from breakscan.report.summary import plural


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _difference(check: OutputCheck | None) -> float | None:
    return None if check is None or math.isinf(check.max_difference) else check.max_difference


def _trial_line(trial: FixTrial) -> str:
    finding, fix = trial.finding, trial.fix
    where = f"{_shown(finding.path)}:{finding.line}"
    verdict = "kept" if trial.kept else "rolled back"
    return f"{where} {finding.rule} {finding.name} [{fix.applicability}]: {verdict}: {trial.reason}"


def verification_text(verification: FixVerification) -> str:
    lines = []
    names = ", ".join(t.name for t in verification.targets) or "none"
    lines.append(f"breakscan fix --verify · targets: {names}")
    if verification.problem:
        lines.append(f"nothing verified: {verification.problem}")
        return "\n".join(lines) + "\n"
    check = next((t.output_check for t in verification.targets if t.output_check), None)
    if check is not None:
        lines.append(f"outputs compared with the original's eager run, rtol {check.rtol:g}, atol {check.atol:g} "
                     "(and parameter gradients, for modules that train)")
    lines += [_trial_line(trial) for trial in verification.trials]
    if not verification.trials:
        lines.append("no fix with exact edits applies")
    before, after = Counts.of(verification.targets), Counts.of(verification.final or verification.targets)
    kept = len(verification.kept)
    lines.append(f"{kept} fix{'es' * (kept != 1)} kept in {plural(len(verification.texts), 'file')}, "
                 f"{len(verification.trials) - kept} rolled back; breaks {before.breaks} → {after.breaks}, "
                 f"graphs {before.graphs} → {after.graphs}")
    return "\n".join(lines) + "\n"


def _trial_dict(trial: FixTrial) -> dict:
    finding, fix, check = trial.finding, trial.fix, trial.check
    return {
        "path": finding.path, "line": finding.line, "rule": finding.rule, "name": finding.name,
        "applicability": fix.applicability, "summary": fix.summary,
        "status": "kept" if trial.kept else "rolled-back", "reason": trial.reason,
        "breaks_before": trial.before.breaks, "breaks_after": trial.after.breaks if trial.after else None,
        "graphs_before": trial.before.graphs, "graphs_after": trial.after.graphs if trial.after else None,
        "outputs_match": check.outputs_match if check else None,
        "gradients_match": check.gradients_match if check else None,
        "max_difference": _difference(check),
    }


def verification_json(verification: FixVerification, report: Report, written: bool) -> dict:
    before, after = Counts.of(verification.targets), Counts.of(verification.final or verification.targets)
    check = next((t.output_check for t in verification.targets if t.output_check), None)
    return {
        "breakscan": report.version,
        "targets": [{"name": t.name, "path": t.path, "status": t.status, "error": t.error,
                     "graph_count": t.graph_count, "graph_break_count": t.graph_break_count}
                    for t in verification.targets],
        "problem": verification.problem,
        "tolerance": {"rtol": check.rtol, "atol": check.atol} if check else None,
        "fixes": [_trial_dict(trial) for trial in verification.trials],
        "files": [{"path": path, "written": written} for path in verification.texts],
        "summary": {"kept": len(verification.kept), "rolled_back": len(verification.trials) - len(verification.kept),
                    "breaks_before": before.breaks, "breaks_after": after.breaks,
                    "graphs_before": before.graphs, "graphs_after": after.graphs},
        "errors": [error_dict(e) for e in report.errors],
    }
