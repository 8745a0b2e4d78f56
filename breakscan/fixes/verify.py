"""`breakscan fix --verify`: each fix is tried by running the targets, and kept only when it
removes breaks and changes nothing else.

The original code is run first, eagerly (twice, to see that it repeats itself) and compiled; its
eager outputs, and a training module's parameter gradients, are the reference. Then, round by
round, each applicable fix is tried alone on the current text (the files on disk are untouched:
the worker imports the project with the new text in their place), compiled, from the same seed
and inputs. A fix is kept when every target still runs, gives the reference's outputs (and
gradients) within the stated tolerance, has no more breaks or graphs than before, and has fewer
of one of them; the others are rolled back, with the reason. The fixes kept in a round are tried
together once more; if they fail together, only the best of them is kept and the rest are tried
again in the next round. Test files are never edited.

The parent never imports torch or the user's code: runs go through the confirmation runner.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from breakscan.config import Config
from breakscan.fixes.apply import MAX_ROUNDS, applicable, lint_text
from breakscan.fixes.edits import apply_edits
from breakscan.model import Applicability, Finding, Fix, OutputCheck, TargetResult, TargetSpec

# Runs targets: (specs, extra job fields per spec) -> one result per spec.
RunTargets = Callable[[list[TargetSpec], list[dict]], list[TargetResult]]


@dataclass(frozen=True)
class Counts:
    breaks: int
    graphs: int

    @staticmethod
    def of(results: Sequence[TargetResult]) -> Counts:
        return Counts(sum(r.graph_break_count for r in results), sum(r.graph_count for r in results))


@dataclass(frozen=True)
class FixTrial:
    """One fix tried on the targets."""

    finding: Finding  # with the fix tried
    kept: bool
    reason: str  # why it was kept or rolled back
    before: Counts
    after: Counts | None  # None: a target did not run
    check: OutputCheck | None  # the worst comparison over the targets

    @property
    def fix(self) -> Fix:
        assert self.finding.fix is not None  # only findings with a fix are tried
        return self.finding.fix


@dataclass
class FixVerification:
    targets: list[TargetResult]  # the original's runs
    trials: list[FixTrial] = field(default_factory=list)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (before, after)
    final: list[TargetResult] = field(default_factory=list)  # the runs of the fixed code
    problem: str | None = None  # why nothing could be verified

    @property
    def kept(self) -> list[FixTrial]:
        return [t for t in self.trials if t.kept]


def is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or "tests" in parts[:-1] or "test" in parts[:-1])


def _worst(results: Sequence[TargetResult]) -> OutputCheck | None:
    checks = [r.output_check for r in results if r.output_check is not None]
    return max(checks, key=lambda c: (not c.same, c.max_difference), default=None)


def judge(results: Sequence[TargetResult], before: Sequence[TargetResult]) -> tuple[bool, str]:
    """(kept, why) for the runs of a fixed version against those of the version it was made on."""
    failed = next((r for r in results if r.status != "ok"), None)
    if failed is not None:
        return False, f"{failed.name} did not run: {failed.status}: {failed.error or 'no details'}"
    check = _worst(results)
    if check is None:
        return False, "the outputs could not be compared"
    if not check.outputs_match:
        return False, f"outputs differ ({check.detail or f'max |Δ| {check.max_difference:.3g}'})"
    if check.gradients_match is False:
        return False, f"gradients differ ({check.detail or f'max |Δ| {check.max_difference:.3g}'})"
    for after, earlier in zip(results, before):
        if after.graph_break_count > earlier.graph_break_count or after.graph_count > earlier.graph_count:
            return False, (f"adds to {after.name}: breaks {earlier.graph_break_count} → "
                           f"{after.graph_break_count}, graphs {earlier.graph_count} → {after.graph_count}")
    old, new = Counts.of(before), Counts.of(results)
    if (new.breaks, new.graphs) == (old.breaks, old.graphs):
        return False, "removes no break when the targets run"
    return True, f"breaks {old.breaks} → {new.breaks}, graphs {old.graphs} → {new.graphs}, outputs match"


def _signature(finding: Finding) -> tuple:
    """What identifies a fix across rounds, whose line numbers shift: its file, rule and edits' text."""
    return (finding.fix.path, finding.rule, tuple(e.replacement for e in finding.fix.edits))


class _Verifier:
    def __init__(self, texts: dict[str, str], specs: list[TargetSpec], config: Config,
                 allowed: Collection[Applicability], run: RunTargets, folder: str):
        self.original, self.current = dict(texts), dict(texts)
        self.specs, self.config, self.allowed, self.run = specs, config, allowed, run
        self.references = [os.path.join(folder, f"reference-{i}.pt") for i in range(len(specs))]

    def _runs(self, *versions: dict[str, str]) -> list[list[TargetResult]]:
        """The targets run on each version of the files, all in one run: per version, per spec."""
        specs, extras = [], []
        for texts in versions:
            changed = {os.path.abspath(p): t for p, t in texts.items() if t != self.original[p]}
            specs += self.specs
            extras += [{"sources": changed, "reference": {"compare": reference}} for reference in self.references]
        results = self.run(specs, extras)
        size = len(self.specs)
        return [results[i:i + size] for i in range(0, len(results), size)]

    def _candidates(self, rejected: set, state: Sequence[TargetResult]) -> list[Finding]:
        """The fixes to try on the current text: of the lint's findings, and of the breaks the
        targets had on it that no rule predicted."""
        found = []
        for path, text in self.current.items():
            if is_test_file(path):
                continue
            findings = lint_text(path, text, self.config, state)
            # A fix of a break is written against the path the run reported: keyed as `current` is.
            keyed = [replace(f, fix=replace(f.fix, path=path)) for f in applicable(findings, path, self.allowed)
                     if f.fix is not None]
            found += [f for f in keyed if _signature(f) not in rejected]
        return found

    def verify(self) -> FixVerification:
        extras = [{"sources": {}, "reference": {"save": reference}} for reference in self.references]
        state = self.run(self.specs, extras)
        result = FixVerification(targets=state)
        result.problem = _unverifiable(state)
        if result.problem:
            return result
        rejected: set = set()
        for _ in range(MAX_ROUNDS):
            candidates = self._candidates(rejected, state)
            if not candidates:
                break
            trials = []
            versions = [_apply_all(self.current, [finding]) for finding in candidates]
            for finding, runs in zip(candidates, self._runs(*versions)):
                kept, why = judge(runs, state)
                after = Counts.of(runs) if all(r.status == "ok" for r in runs) else None
                trials.append((FixTrial(finding, kept, why, Counts.of(state), after, _worst(runs)), runs))
            for trial, _ in trials:
                if not trial.kept:
                    rejected.add(_signature(trial.finding))
                    result.trials.append(trial)
            accepted = [(trial, runs) for trial, runs in trials if trial.kept]
            if not accepted:
                break
            if len(accepted) > 1:
                combined = _apply_all(self.current, [trial.finding for trial, _ in accepted])
                (runs,) = self._runs(combined)
                if judge(runs, state)[0]:
                    self.current, state = combined, runs
                    result.trials += [trial for trial, _ in accepted]
                    continue
                # Together they fail: the best is kept alone; the others are tried again on its text.
                accepted = [min(accepted, key=lambda item: (Counts.of(item[1]).breaks, Counts.of(item[1]).graphs))]
            (trial, runs), = accepted
            self.current, state = _apply_all(self.current, [trial.finding]), runs
            result.trials.append(trial)
        result.final = state
        result.texts = {path: (self.original[path], text) for path, text in self.current.items()
                        if text != self.original[path]}
        return result


def _apply_all(texts: dict[str, str], findings: Sequence[Finding]) -> dict[str, str]:
    combined = dict(texts)
    for path in {f.fix.path for f in findings}:
        edits = [edit for f in findings if f.fix.path == path for edit in f.fix.edits]
        combined[path] = apply_edits(texts[path], edits)
    return combined


def _unverifiable(baseline: Sequence[TargetResult]) -> str | None:
    if not baseline:
        return "no target to run: give --entry/--inputs, or declare BREAKSCAN_TARGETS in the file"
    failed = next((r for r in baseline if r.status != "ok"), None)
    if failed is not None:
        return f"the original {failed.name} did not run: {failed.status}: {failed.error or 'no details'}"
    unrepeatable = next((r for r in baseline if r.output_check is None or r.output_check.detail), None)
    if unrepeatable is not None:
        detail = unrepeatable.output_check.detail if unrepeatable.output_check else "no outputs recorded"
        return f"{unrepeatable.name}: {detail}"
    return None


def verify_fixes(texts: dict[str, str], specs: list[TargetSpec], config: Config,
                 allowed: Collection[Applicability], run: RunTargets) -> FixVerification:
    """Try the fixes of the files in `texts` (path -> text) on the targets `specs`."""
    from breakscan.confirm.runner import reusing_workers

    with tempfile.TemporaryDirectory(prefix="breakscan-verify-") as folder, reusing_workers():
        return _Verifier(texts, specs, config, allowed, run, folder).verify()
