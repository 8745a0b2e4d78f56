"""The rule contract: a small class with its id, the GB ids it predicts, docs and checked examples.

A rule declares `on_<NodeType>(self, node, ctx)` handlers; the region walker calls them for every
node of that libcst type inside code that runs under `torch.compile`, and the rule calls
`ctx.report(node)` when the node will break the graph.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from breakscan.model import Severity

if TYPE_CHECKING:
    from breakscan.lint.walker import RegionContext

# Lines of an INVALID example ending with this comment are where the rule must report,
# and where TorchDynamo must break with one of the rule's GB ids; for a recompile rule, the
# line whose value a failed guard checked when the example's calls are made.
BREAK_MARKER = "# break"
RECOMPILE_MARKER = "# recompile"
# A break another rule predicts, which the example needs (the break that makes code run eagerly):
# TorchDynamo must break there too, in VALID examples as well.
OTHER_BREAK_MARKER = "# break (another rule)"


@dataclass(frozen=True)
class Example:
    """A complete module source; `entry`/`inputs` say how the calibration tests run it."""

    code: str
    entry: str = "fn"
    inputs: str = "torch.randn(8)"
    # False: the entry compiles what it calls itself (a loop calling a compiled step) and is run as it is.
    compiled: bool = True

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")

    def marked_lines(self, marker: str) -> tuple[int, ...]:
        return tuple(
            number for number, line in enumerate(self.source.splitlines(), 1) if line.rstrip().endswith(marker)
        )

    @property
    def break_lines(self) -> tuple[int, ...]:
        return self.marked_lines(BREAK_MARKER)

    @property
    def other_break_lines(self) -> tuple[int, ...]:
        return self.marked_lines(OTHER_BREAK_MARKER)

    @property
    def recompile_lines(self) -> tuple[int, ...]:
        return self.marked_lines(RECOMPILE_MARKER)


class Rule:
    id: ClassVar[str]
    name: ClassVar[str]
    # "break": the construct breaks the graph (GB ids say how); "recompile" (ids BRxxx, no GB
    # ids): it makes TorchDynamo compile the function again on later calls.
    kind: ClassVar[str] = "break"
    gb_ids: ClassVar[tuple[str, ...]]
    # "error": TorchDynamo 2.13 always breaks here; "warning": it breaks in the common case.
    severity: ClassVar[Severity] = "error"
    # TorchDynamo cannot resume after the break: it compiles the frame up to it and runs the rest
    # of the frame eagerly (probed: an unsupported `with`, an RNN, a sparse tensor read).
    skips_frame: ClassVar[bool] = False
    message: ClassVar[str]
    fix_hint: ClassVar[str]
    # Markdown in ruff's shape: What it does / Why is this bad? / Example / Use instead.
    docs: ClassVar[str]
    valid: ClassVar[tuple[Example, ...]] = ()
    invalid: ClassVar[tuple[Example, ...]] = ()
    # TorchDynamo settings under which the construct stays in the graph: boolean flags
    # (`capture_scalar_outputs`), and function-set settings holding the called function
    # (`reorderable_logging_functions`). The walker drops the rule's findings where they apply.
    captured_by: ClassVar[tuple[str, ...]] = ()
    captured_in_sets: ClassVar[tuple[str, ...]] = ()

    @classmethod
    @functools.cache
    def handler_names(cls) -> tuple[str, ...]:
        """The `on_<NodeType>` methods: found once per class, the walker asks for a fresh set of
        handlers for every function."""
        return tuple(name for name in dir(cls) if name.startswith("on_"))

    @classmethod
    def example_lines(cls, example: Example) -> tuple[int, ...]:
        """Where the rule reports on an INVALID example."""
        return example.recompile_lines if cls.kind == "recompile" else example.break_lines

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(cls.docs).strip()


class FunctionRule(Rule):
    """A rule about a compiled function as a whole (how the scanned code compiles and calls it),
    asked once per function: `check_function(ctx)`, before any of its nodes."""

    def on_IndentedBlock(self, node, ctx: RegionContext) -> None:
        if node is ctx.function.node.body:
            self.check_function(ctx)

    def on_SimpleStatementSuite(self, node, ctx: RegionContext) -> None:
        if node is ctx.function.node.body:
            self.check_function(ctx)

    def check_function(self, ctx: RegionContext) -> None:
        raise NotImplementedError


class DeclaredCallsRule(FunctionRule):
    """A function rule that reports, at the compiled function's start (where TorchDynamo reports a
    recompile guarded on its inputs), the calls a `CallSites` table (`call_sites_table`, one of
    its fields) holds for it, as written."""

    call_sites_table: ClassVar[str]

    def check_function(self, ctx: RegionContext) -> None:
        calls = ctx.entry_in(getattr(ctx.call_sites, self.call_sites_table))
        if calls is not None:
            ctx.report(self, ctx.function_start, f"{self.message} (`{calls}`)")

