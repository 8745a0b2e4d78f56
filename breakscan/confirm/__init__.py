"""The dynamic half: run targets under TorchDynamo, capture every graph break, fuse with the lint.

Importing this package does not import torch; only the worker subprocess (and `breakscan.api`,
in the user's own process) does.

`breakscan.confirm` is both this package and the public `breakscan.confirm(model, *args)`: once
the package is imported, Python binds the name `confirm` in `breakscan` to it, so the package
itself is made callable (forwarding to `breakscan.api.confirm`) rather than shadow the function.
"""

import sys
import types

from breakscan.confirm.discover import discover_targets
from breakscan.confirm.fuse import fuse
from breakscan.confirm.runner import run_script, run_targets

__all__ = ["discover_targets", "fuse", "run_script", "run_targets"]


class _CallablePackage(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from breakscan.api import confirm

        return confirm(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
