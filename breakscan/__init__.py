"""breakscan: find torch.compile graph breaks before running, prove them by running, fix them."""

__version__ = "0.1.0"

# The dynamic half needs torch; importing breakscan (the linter, the LSP) must not.
_LAZY = {
    "confirm": ("breakscan.api", "confirm"),
    "assert_no_graph_breaks": ("breakscan.api", "assert_no_graph_breaks"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'breakscan' has no attribute {name!r}")
