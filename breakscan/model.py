"""Plain data shared by every layer: the lint, the confirmation runner, the fuser and the renderers.

Rules produce `Finding`s, the runner produces `TargetResult`s with `Break`s, the fuser joins them
into a `Report`, and renderers only read a `Report`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Severity = Literal["error", "warning", "info"]
FailOn = Literal["error", "warning"]
FindingStatus = Literal["static-only", "confirmed", "dynamic-only"]
# As ruff's: "safe" cannot change what the code computes, "unsafe" can (at edge cases: dtypes,
# side effects, process-wide settings), "manual" is advice with no edits to apply.
Applicability = Literal["safe", "unsafe", "manual"]
TargetStatus = Literal["ok", "failed", "timeout", "crashed", "out-of-memory", "skipped"]
# Statuses of a target that did not run to the end: they give exit code 1.
TARGET_FAILURES: tuple[TargetStatus, ...] = ("failed", "timeout", "crashed", "out-of-memory")


@dataclass(frozen=True, order=True)
class Span:
    """A 1-based source range; `end_column` is exclusive, as in the contract's JSON."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Edit:
    """One exact replacement of `span` in the file by `replacement` (for LSP code actions, SARIF fixes)."""

    span: Span
    replacement: str


@dataclass(frozen=True)
class Fix:
    summary: str
    diff: str | None = None
    edits: tuple[Edit, ...] = ()
    applicability: Applicability = "manual"
    # The file `edits` apply to: the finding's, or for a construct inside an installed library
    # the user's file that calls into it. None for advice without edits.
    path: str | None = None
    kind: str | None = None  # the refactoring it is: `keep_as_tensor`, `select_with_where`... (None: the rule's hint)


@dataclass(frozen=True)
class LibrarySite:
    """Where a finding in an installed package's code (reached by following calls) is reached from."""

    package: str
    reached_from: Frame | None = None  # the last call in the user's code on the way into the package


@dataclass(frozen=True)
class BreakRef:
    """A break a finding was matched to by the fuser: `report.targets[target].breaks[index]`.
    `at_site`: the finding is the construct that broke (at the break's line, or its library
    line), not a call on the way to it."""

    target: int
    index: int
    at_site: bool = True


# Rule ids of this prefix predict recompilations (no GB ids); "BR000" is one no rule predicted.
RECOMPILE_RULES = "BR"


@dataclass(frozen=True)
class Finding:
    rule: str  # BSxxx: a graph break; BRxxx: a recompilation (RECOMPILE_RULES)
    name: str
    path: str
    span: Span
    message: str
    gb_ids: tuple[str, ...]
    severity: Severity
    chain: tuple[str, ...] = ()
    status: FindingStatus = "static-only"
    fix: Fix | None = None
    # Filled by the fuser: how often the confirmed break happened in `target`, the first target
    # that had it, and every break it was matched to (renderers read these; they never re-match).
    count: int = 0
    target: str | None = None
    breaks: tuple[BreakRef, ...] = ()
    # Where each function of `chain` calls the next (len(chain) - 1 frames), when known.
    call_sites: tuple[Frame, ...] = ()
    # Set when the construct is in an installed package's code, reached with `--follow`.
    library: LibrarySite | None = None
    # What the lint knew where it reported: (local name or the construct's code, value kind:
    # "tensor", "int", "none", "module", ...). The fixes check their typed conditions on it.
    kinds: tuple[tuple[str, str], ...] = ()

    @property
    def line(self) -> int:
        return self.span.line

    def with_status(self, status: FindingStatus, **changes) -> "Finding":
        return replace(self, status=status, **changes)


@dataclass(frozen=True)
class FileError:
    """A file that could not be analysed (or a target that could not be run), and why."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str


@dataclass(frozen=True)
class LibraryFrame:
    """Where TorchDynamo broke inside an installed library (the break's path and line stay the
    user's innermost frame: the call into the library)."""

    package: str
    path: str
    line: int
    function: str


@dataclass(frozen=True)
class Break:
    """One graph-break site seen while running a target, merged over its occurrences."""

    path: str
    line: int
    gb_id: str | None
    gb_type: str | None
    reason: str
    hints: tuple[str, ...] = ()
    stack: tuple[Frame, ...] = ()
    count: int = 1
    explanation: str | None = None
    # Dynamo gave up on the whole frame here (e.g. a break in a loop): the rest runs eagerly.
    frame_skipped: bool = False
    library: LibraryFrame | None = None
    # How many of the target's graphs ran before the break's first occurrence (from the order
    # TorchDynamo compiled them in); None when not recorded.
    graphs_before: int | None = None


@dataclass(frozen=True)
class GraphInfo:
    index: int
    op_count: int
    ops: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()  # user source lines the graph's ops came from
    path: str | None = None
    compile_time: float = 0.0  # seconds of the frame compile that produced it
    recompiled: bool = False  # produced by a recompilation (a guard of an earlier compile failed)


@dataclass(frozen=True)
class OutputCheck:
    """A run's outputs (and a training module's parameter gradients) against a reference run of
    the same calls from the same seed: the original code, eagerly."""

    outputs_match: bool
    gradients_match: bool | None  # None: the target does not train (no gradients to compare)
    max_difference: float  # largest absolute difference seen (inf: not comparable)
    detail: str | None = None  # what differs, when it is more than values
    rtol: float = 0.0
    atol: float = 0.0

    @property
    def same(self) -> bool:
        return self.outputs_match and self.gradients_match is not False


@dataclass(frozen=True)
class Recompile:
    """Recompilations caused by one guarded value, merged over their occurrences."""

    path: str  # the user line whose value was guarded (else the recompiled function's first line)
    line: int
    function: str  # the function compiled again
    guard: str  # the guard that failed, as TorchDynamo writes it (its first occurrence)
    reason: str  # TorchDynamo's advice for this guard, else what failed
    count: int = 1
    limit_hit: bool = False  # the function reached the recompile limit and now runs eagerly


@dataclass(frozen=True)
class TargetSpec:
    """What to confirm: `entry` and `inputs` are expressions evaluated in the file's namespace."""

    path: str
    entry: str
    inputs: str | None = None
    name: str | None = None
    # What to tell the user to add when `inputs` is None and the first layer does not tell the
    # shape; None: declare the inputs in the file.
    missing_inputs: str | None = None
    # The entry compiles what it needs itself (a training loop calling a compiled step): it is
    # called as it is, under the capture, instead of being compiled.
    compiles_itself: bool = False

    @property
    def label(self) -> str:
        return self.name or self.entry


@dataclass(frozen=True)
class TargetResult:
    name: str
    path: str
    status: TargetStatus
    error: str | None = None
    device: str | None = None
    graph_count: int = 0
    graph_break_count: int = 0
    graphs: tuple[GraphInfo, ...] = ()
    breaks: tuple[Break, ...] = ()
    wall_time: float = 0.0
    torch_version: str | None = None
    recompiles: tuple[Recompile, ...] = ()
    compile_count: int = 0  # frame compiles TorchDynamo ran, recompilations included
    compile_time: float = 0.0  # seconds spent in them
    calls: int = 1  # calls of the target that ran
    output_check: OutputCheck | None = None  # when the run was compared with a reference
    # Under --device auto, why the target ran on the CPU: how it failed on CUDA (e.g. a model that
    # makes tensors without a device); None when it ran where asked.
    device_fallback: str | None = None


@dataclass(frozen=True)
class BreakDelta:
    """One break site compared across an earlier run (the baseline) and this one."""

    path: str
    line: int  # in this run; in the baseline for a break that is gone
    gb_id: str | None
    what: str  # the break's type (`gb_type`), else Dynamo's reason
    before: int  # occurrences in the baseline run
    after: int  # occurrences in this run


@dataclass(frozen=True)
class TargetDelta:
    name: str
    path: str
    graphs_before: int | None  # None: the target is not in the baseline
    graphs_after: int | None  # None: the target is not in this run
    fixed: tuple[BreakDelta, ...] = ()
    new: tuple[BreakDelta, ...] = ()
    remaining: tuple[BreakDelta, ...] = ()

    @property
    def breaks_before(self) -> int:
        return len(self.fixed) + len(self.remaining)

    @property
    def breaks_after(self) -> int:
        return len(self.new) + len(self.remaining)


@dataclass(frozen=True)
class Verification:
    """What changed since an earlier JSON report (`--verify --baseline FILE`)."""

    baseline: str
    findings_before: int
    findings_after: int
    targets: tuple[TargetDelta, ...]


@dataclass
class Report:
    version: str
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    targets: list[TargetResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    torch_version: str | None = None
    # Suppression comments that matched nothing (reported as warnings, never as findings).
    unused_suppressions: list[FileError] = field(default_factory=list)
    verification: Verification | None = None
    # Which findings give exit code 1: "warning" (warnings and errors) or "error" (errors only).
    fail_on: FailOn = "warning"

    def break_of(self, ref: BreakRef) -> Break:
        return self.targets[ref.target].breaks[ref.index]

    def explained_break(self, finding: Finding) -> Break | None:
        """The break a finding stands for: the first it names at its own site, else the first on
        its chain; None when it was not confirmed."""
        refs = sorted(finding.breaks, key=lambda ref: not ref.at_site)
        return self.break_of(refs[0]) if refs else None

    @property
    def exit_code(self) -> int:
        failed = any(t.status in TARGET_FAILURES for t in self.targets)
        blocking_severities = ("error",) if self.fail_on == "error" else ("error", "warning")
        blocking = any(f.severity in blocking_severities for f in self.findings)
        return 1 if (blocking or self.errors or failed) else 0
