"""Shared shape of the precision cases in test_rules_*.py: a complete module, the findings expected
on its lines, and how to run it (the same cases were checked against TorchDynamo 2.13)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    code: str
    expected: frozenset[tuple[int, str]] = frozenset()
    entry: str = "fn"
    inputs: str = "torch.randn(8)"

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")


def case(code: str, *expected: tuple[int, str], entry: str = "fn", inputs: str = "torch.randn(8)") -> Case:
    return Case(code, frozenset(expected), entry, inputs)
