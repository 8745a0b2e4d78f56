"""The language server, `breakscan lsp`; it needs the `[lsp]` extra (pygls)."""

from breakscan.lsp.server import serve

__all__ = ["serve"]
