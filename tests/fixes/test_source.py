"""SourceModule resolves positions one top-level statement at a time: they must equal libcst's
for the whole module."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from breakscan.fixes.source import SourceModule
from breakscan.model import Span

TRICKY = '''#!/usr/bin/env python
"""Docstring."""

# a comment before an import
import torch  # trailing


@torch.compile
def f(x):  # comment
    y = """two
lines"""
    return x


class A:

    # comment inside
    def g(self):
        return (1 +
                2)
x = 1; y = 2'''


def test_positions_match_the_whole_module():
    src = SourceModule("t.py", TRICKY)
    wrapper = MetadataWrapper(cst.parse_module(TRICKY))
    whole, parents = wrapper.resolve(PositionProvider), wrapper.resolve(ParentNodeProvider)

    def in_a_statement(node) -> bool:  # not the module's own header lines
        while parents.get(node) is not None and not isinstance(parents[node], cst.Module):
            node = parents[node]
        return node in wrapper.module.body

    expected = sorted((r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, type(n).__name__)
                      for n, r in whole.items()
                      if in_a_statement(n) and not isinstance(n, (cst.SimpleWhitespace, cst.Newline)))
    everything = Span(1, 1, len(TRICKY.splitlines()) + 1, 1)
    found = sorted((*src.span(n).__dict__.values(), type(n).__name__)
                   for n in src.nodes_in(everything, lambda n: not isinstance(n, (cst.SimpleWhitespace, cst.Newline))))
    assert found == expected


def test_lookups_resolve_only_the_statements_they_touch():
    src = SourceModule("t.py", TRICKY)
    (call,) = src.nodes_in(Span(12, 1, 12, 20), lambda n: isinstance(n, cst.Return))
    assert src.function(call).name.value == "f"
    assert len(src.positions._generated) == 1
