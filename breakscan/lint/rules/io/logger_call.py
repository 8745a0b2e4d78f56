import libcst as cst

from breakscan.lint.names import dotted_name
from breakscan.lint.rule import Example, Rule
from breakscan.lint.semantics.branches import WHEN_REACHED, in_conditional_branch, in_debug_branch

# `logging.Logger` methods (and the `*_once` helpers Hugging Face attaches to it): all break.
LOGGER_METHODS = frozenset(
    {
        "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log", "isEnabledFor",
        "getEffectiveLevel", "setLevel", "warning_once", "info_once", "warning_advice",
    }
)
# Warnings and errors report unusual input: inside an `if`/`except` they are rarely reached.
WARNING_METHODS = frozenset(
    {"warning", "warn", "error", "exception", "critical", "fatal", "warning_once", "info_once", "warning_advice"}
)
# What a logger object is called by convention: the evidence for loggers that are not built by a
# module-level `logging.getLogger(...)` in the same file (imported, or attributes), backed by the
# module importing a logging module.
LOGGER_NAMES = frozenset({"logger", "log", "_logger", "_log", "LOGGER", "_LOGGER", "LOG", "_LOG"})
LOGGER_FACTORIES = ("logging.getLogger", "getLogger", "get_logger")
# Loggers that are not `logging.Logger`s: loguru's (rule BS408); the others unverified under
# TorchDynamo, so left alone.
OTHER_LOGGING_PACKAGES = ("loguru.", "absl.", "structlog.")


class LoggerCall(Rule):
    id = "BS403"
    name = "logger-call"
    gb_ids = ("GB0291",)
    message = "`logging.Logger` methods are not supported under torch.compile: the graph breaks here"
    fix_hint = "log outside the compiled code, or add the logger's method (e.g. logger.info) to torch._dynamo.config.ignore_logging_functions"
    captured_in_sets = ("ignore_logging_functions",)
    docs = """
    ## What it does
    Flags calls of `logging.Logger` methods in compiled code: `logger.info(...)`,
    `logger.debug`, `logger.warning`, `logger.error`, `logger.exception`, `logger.log`,
    `logger.isEnabledFor`, `logger.setLevel` and Hugging Face's `logger.warning_once`, on
    `logging.getLogger(...)` / `get_logger(...)` results and on the conventional logger names
    (`logger`, `log`, `_logger`, `LOGGER`, `self.logger`) in modules that import a logging module.
    Calls under an `if self.verbose:` / `if debug:` flag, or a level check
    (`if logger.isEnabledFor(logging.DEBUG):`, which is itself flagged), are left alone. Warnings and errors
    (`warning`, `warning_once`, `error`, ...) inside an `if`/`else` or `except` handler report
    unusual input, and TorchDynamo never traces a branch that is not taken: they are reported as
    warnings, since they break only when that branch runs.

    ## Why is this bad?
    TorchDynamo refuses every `logging.Logger` method outside export, whether or not the level is
    enabled (GB0291 "logging.Logger method not supported for non-export cases"): the graph ends
    at the call, the call runs eagerly and a new graph starts after it. In a loop the whole
    function falls back to eager.

    ## Example
    ```python
    logger = logging.getLogger(__name__)

    def forward(self, x):
        logger.debug("input %s", x.shape)
        return self.net(x)
    ```

    ## Use instead
    Log outside the compiled code, or make the method a no-op under compile (the message is then
    dropped; `reorderable_logging_functions` does not work for logger methods). Register the
    logger's own method: TorchDynamo 2.13 does not honour `logging.Logger.debug` there.
    ```python
    torch._dynamo.config.ignore_logging_functions.add(logger.debug)
    ```
    """
    invalid = (
        Example("""
            import logging

            import torch
            from torch import nn

            logger = logging.getLogger("monitor")

            class PeakMonitor:
                def __init__(self, name):
                    self.name = name

                def __call__(self, module, inputs, output):
                    logger.debug("%s peak %s", self.name, output.detach().abs().amax())  # break

            class Codec(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.encoder = nn.Linear(4, 4)
                    self.decoder = nn.Linear(4, 4)
                    for name in ("encoder", "decoder"):
                        getattr(self, name).register_forward_hook(PeakMonitor(name))

                def forward(self, x):
                    return self.decoder(torch.tanh(self.encoder(x)))
        """, entry="Codec()", inputs="torch.randn(2, 4)"),
        Example("""
            import logging
            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def fn(x):
                y = x * 2
                logger.debug("input %s", x.shape)  # break
                return y + 1
        """),
        Example("""
            import logging
            import torch
            from torch import nn

            class Model(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.logger = logging.getLogger("model")
                    self.fc = nn.Linear(8, 8)

                def forward(self, x):
                    h = self.fc(x)
                    self.logger.warning("fc done")  # break
                    return h.relu()
        """, entry="Model()", inputs="torch.randn(2, 8)"),
        Example("""
            import logging
            import torch

            @torch.compile
            def fn(x):
                y = x * 2
                if y.shape[0] > 4:
                    logging.getLogger().info("large batch")  # break
                return y + 1
        """),
        Example("""
            import logging
            from dataclasses import dataclass

            import torch
            from torch import nn

            logger = logging.getLogger("vae")

            @dataclass
            class Config:
                latent: int = 4
                verbose: bool = True

            class Tracker:
                def __init__(self, cfg):
                    self.cfg = cfg

                def report(self, loss):
                    if self.cfg.verbose:  # the config the model builds, where it is on
                        logger.info("loss=%.4f", loss)  # break

            class VAE(nn.Module):
                def __init__(self, cfg: Config = None):
                    super().__init__()
                    self.cfg = cfg or Config()
                    self.fc = nn.Linear(self.cfg.latent, self.cfg.latent)
                    self.tracker = Tracker(self.cfg)

                def forward(self, x):
                    loss = self.fc(x).pow(2).mean()
                    self.tracker.report(loss)
                    return loss
        """, entry="VAE()", inputs="torch.randn(2, 4)"),
    )
    valid = (
        Example("""
            import logging

            import torch
            from torch import nn

            logger = logging.getLogger("train")

            class LossMeter:
                def report(self, **losses):
                    msg = ", ".join(f"{k}={v.mean():.4f}" for k, v in losses.items())  # break (another rule)
                    logger.info("losses: %s", msg)  # resumed in a frame that holds no tensor: never traced

            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                    self.meter = LossMeter()

                def forward(self, x):
                    loss = self.fc(x).pow(2).mean()
                    self.meter.report(loss=loss)
                    return loss
        """, entry="Net()", inputs="torch.randn(2, 4)"),
        Example("""
            import logging

            import torch

            logger = logging.getLogger(__name__)
            torch._dynamo.config.ignore_logging_functions.add(logger.info)

            @torch.compile
            def fn(x):
                logger.info("scaling")
                return x * 2
        """),
        Example("""
            import logging
            import torch

            logger = logging.getLogger(__name__)

            @torch.compile
            def fn(x):
                return x * 2

            def train_step(x):
                out = fn(x)
                logger.info("step done")
                return out
        """),
        Example("""
            import torch

            class History:
                def __init__(self):
                    self.entries = []

                def info(self, entry):
                    self.entries.append(entry)

            log = History()

            @torch.compile
            def fn(x):
                log.info(3)
                return x * 2
        """),
    )

    def on_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in LOGGER_METHODS:
            return
        if not _is_logger(func.value, ctx) or in_debug_branch(ctx):
            return
        if func.attr.value in WARNING_METHODS and in_conditional_branch(ctx):
            ctx.report(self, node, self.message + WHEN_REACHED, severity="warning")
            return
        ctx.report(self, node)


def _is_logger(receiver: cst.BaseExpression, ctx) -> bool:
    if isinstance(receiver, cst.Call):  # logging.getLogger(__name__).info(...)
        factory = ctx.qualname(receiver.func) or dotted_name(receiver.func) or ""
        return factory.endswith(LOGGER_FACTORIES) and not factory.startswith(OTHER_LOGGING_PACKAGES)
    if isinstance(receiver, cst.Name) and receiver.value in ctx.module.assignments:
        # `logger = logging.getLogger(__name__)` at module level: what built it decides.
        factory = ctx.module.assignments[receiver.value]
        return factory.endswith(LOGGER_FACTORIES) and not factory.startswith(OTHER_LOGGING_PACKAGES)
    name = dotted_name(receiver)
    if name is None or name.rsplit(".", 1)[-1] not in LOGGER_NAMES:
        return False
    qualified = ctx.qualname(receiver)
    if qualified is not None:  # an imported logger object: `from .utils import logger`
        return not qualified.startswith(OTHER_LOGGING_PACKAGES) and qualified != "logging"
    return _imports_logging(ctx)


def _imports_logging(ctx) -> bool:
    """The module imports the stdlib `logging`, a `*.logging` wrapper or a logger factory."""
    return any(
        target == "logging" or target.endswith((".logging", ".get_logger", ".getLogger"))
        for target in ctx.module.imports.values()
    )
