"""Parsing a file's text with libcst, as fast and as lean as it can be done."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

import libcst as cst
from libcst._nodes.base import CSTNode


def parse_module(text: str) -> cst.Module:
    """`libcst.parse_module`, without validating each node as it is built: the parser only builds
    valid trees, and the checks (meant for trees built by hand) are a sixth of the parse's time.
    Nodes built while it runs, by another thread too, are merely not checked."""
    CSTNode.__post_init__ = _built_by_parser
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = _VALIDATE
        _give_back_free_memory()


def _built_by_parser(node: CSTNode) -> None:
    pass


_VALIDATE = CSTNode.__post_init__


def _trimmer() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):  # not glibc
        return None


_MALLOC_TRIM = _trimmer()
# Resident memory allowed to build up above what the last trim left, before trimming again: each
# trim makes the next parses fault their working memory in afresh (on model code, trimming after
# every parse cost about 5% more time).
_TRIM_SLACK = 64 * 2**20
_trimmed_to = 0


def _give_back_free_memory() -> None:
    """The native parser's working memory, several times the tree's (40 MB for a 7,000-line file),
    goes back to the C heap when the parse ends, and glibc keeps it. Scattered among what stays
    alive, it could not all serve the next parses, and the process grew by it over a run (on
    torch's sources, from 75 to 410 MB before the largest unit). Returned to the system once the
    process has grown by `_TRIM_SLACK`, the resident memory follows what is alive."""
    global _trimmed_to
    resident = _resident_bytes() if _MALLOC_TRIM is not None else None
    if resident is None or resident < _trimmed_to + _TRIM_SLACK:
        return
    _MALLOC_TRIM(0)
    _trimmed_to = _resident_bytes() or 0


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
