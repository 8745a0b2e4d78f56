"""The dynamic half: run targets under TorchDynamo, capture every graph break, fuse with the lint.

Importing this package does not import torch; only the worker subprocess (and `breakscan.api`,
in the user's own process) does.
"""

from breakscan.confirm.discover import discover_targets
from breakscan.confirm.fuse import fuse
from breakscan.confirm.runner import run_script, run_targets

__all__ = ["discover_targets", "fuse", "run_script", "run_targets"]
