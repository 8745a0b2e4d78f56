import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import WHEN_REACHED, in_conditional_branch, in_debug_branch

# The module-level shortcuts of the stdlib `logging` module that log through the root logger.
LOGGING_FUNCTIONS = frozenset(
    f"logging.{name}" for name in ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log")
)
# Warnings and errors report unusual input: inside an `if`/`except` they are rarely reached.
WARNING_FUNCTIONS = frozenset(f"logging.{name}" for name in ("warning", "warn", "error", "exception", "critical", "fatal"))


class LoggingCall(Rule):
    id = "BS402"
    name = "logging-module-call"
    gb_ids = ("GB4841", "GB0007", "GB6215")
    message = "calls into the `logging` module cannot be traced: the graph breaks here"
    fix_hint = "log outside the compiled code, or add the function to torch._dynamo.config.ignore_logging_functions"
    captured_in_sets = ("ignore_logging_functions",)
    docs = """
    ## What it does
    Flags the `logging` module's own functions in compiled code: `logging.info(...)`,
    `logging.debug`, `logging.warning`, `logging.warn`, `logging.error`, `logging.exception`,
    `logging.critical`, `logging.fatal`, `logging.log`, and `logging.getLogger(name)`.
    Calls under an `if self.verbose:` / `if debug:` flag are left alone. Warnings and errors inside
    an `if`/`else` or `except` handler report unusual input, and TorchDynamo never traces a branch
    that is not taken: they are reported as warnings, since they break only when that branch runs.

    ## Why is this bad?
    TorchDynamo traces into the logging machinery and fails there, whether or not the level is
    enabled: `logging.info(...)` breaks with GB4841 "Unsupported python_type() call",
    `logging.warn` with GB0007 (it calls `warnings.warn`), and `logging.getLogger(name)` with
    GB6215. By default the graph ends at the call and a new one starts after it.

    ## Example
    ```python
    logging.info("batch of %d", x.shape[0])
    ```

    ## Use instead
    Log before calling the compiled function, or have TorchDynamo drop the call while tracing (the
    message is then not logged under compile; eager runs still log):
    ```python
    torch._dynamo.config.ignore_logging_functions.add(logging.info)   # once, at start-up
    ```
    (`reorderable_logging_functions` does not help here: TorchDynamo 2.13 still fails inside the
    logging machinery.)
    `logging.getLogger(name)` belongs at module level: `logger = logging.getLogger(__name__)`.
    """
    invalid = (
        Example("""
            import logging
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                logging.info("batch of %d", x.shape[0])  # break
                return y + 1
        """),
        Example("""
            import logging
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                logging.warning("large input")  # break
                return y + 1
        """),
    )
    valid = (
        Example("""
            import logging

            import torch

            torch._dynamo.config.ignore_logging_functions.update({logging.info})

            @torch.compile
            def fn(x):
                logging.info("scaling")
                return x * 2
        """),
        Example("""
            import logging
            import torch

            @torch.compile
            def fn(x):
                level = logging.INFO
                return x * level
        """),
        Example("""
            import logging
            import torch

            DEBUG = False

            @torch.compile
            def fn(x):
                if DEBUG:
                    logging.debug("input %s", x.shape)
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        qualified = ctx.qualname(node.func)
        if not (qualified in LOGGING_FUNCTIONS or (qualified == "logging.getLogger" and node.args)):
            return
        if in_debug_branch(ctx):
            return
        if qualified in WARNING_FUNCTIONS and in_conditional_branch(ctx):
            ctx.report(self, node, self.message + WHEN_REACHED, severity="warning")
            return
        ctx.report(self, node)
