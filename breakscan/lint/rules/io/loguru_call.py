import libcst as cst

from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import WHEN_REACHED, in_conditional_branch, in_debug_branch

# loguru's `logger` methods that emit a message: each finds its caller's frame first.
LOGURU_METHODS = frozenset({"trace", "debug", "info", "success", "warning", "error", "critical", "exception", "log"})
# Warnings and errors report unusual input: inside an `if`/`except` they are rarely reached.
WARNING_METHODS = frozenset({"warning", "error", "critical", "exception"})


class LoguruCall(Rule):
    id = "BS408"
    name = "loguru-call"
    gb_ids = ("GB0007",)
    message = ("loguru's logger looks up its caller with `sys._getframe`, which TorchDynamo cannot trace: the graph "
               "breaks here")
    fix_hint = "log outside the compiled code (after the compiled call returns), or from a `@torch.compiler.disable` helper"
    docs = """
    ## What it does
    Flags calls of loguru's `logger` (`from loguru import logger`) in compiled code:
    `logger.info(...)`, `logger.debug`, `logger.warning`, `logger.error`, `logger.log`...
    Calls under an `if self.verbose:` / `if debug:` flag are left alone; warnings and errors inside
    an `if`/`else` or `except` handler are reported as warnings, since they break only when that
    branch runs.

    ## Why is this bad?
    Every loguru message starts by reading the caller's frame (`sys._getframe`), a C function
    TorchDynamo does not trace (GB0007 "Attempted to call function marked as skipped"): the graph
    ends at the call, whether or not the level is enabled. Unlike `logging.Logger` methods,
    adding the method to `torch._dynamo.config.ignore_logging_functions` does not help (each
    `logger.info` is a new bound method).

    ## Example
    ```python
    from loguru import logger

    def forward(self, x):
        logger.debug("input {}", x.shape)
        return self.net(x)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return self.net(x)

    out = model(x)
    logger.debug("output {}", out.shape)
    ```
    """
    invalid = (
        Example("""
            import torch
            from loguru import logger

            @torch.compile
            def fn(x):
                y = x * 2
                logger.info("scaled {}", y.shape)  # break
                return y + 1
        """),
    )
    valid = (
        Example("""
            import torch
            from loguru import logger

            @torch.compile
            def fn(x):
                return x * 2

            def train_step(x):
                out = fn(x)
                logger.info("step done")
                return out
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in LOGURU_METHODS):
            return
        if ctx.qualname(func.value) != "loguru.logger" or in_debug_branch(ctx):
            return
        if func.attr.value in WARNING_METHODS and in_conditional_branch(ctx):
            ctx.report(self, node, self.message + WHEN_REACHED, severity="warning")
        else:
            ctx.report(self, node)
