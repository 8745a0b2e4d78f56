"""Renderers: each turns a finished `Report` into text. They never analyse anything."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from breakscan.model import Report

# format -> module with `render(report, options) -> str`; imported on demand to keep start-up fast.
FORMATS = {
    "text": "breakscan.report.text",
    "concise": "breakscan.report.concise",
    "json": "breakscan.report.json_format",
    "sarif": "breakscan.report.sarif",
    "github": "breakscan.report.github",
    "html": "breakscan.report.html",
}


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    width: int = 100
    max_per_rule: int | None = None
    graph_format: str | None = None  # "dot" | "mermaid": also print the graph model that way
    quiet: bool = False  # the findings only: no banner, headers, tables


def render(fmt: str, report: Report, options: RenderOptions = RenderOptions()) -> str:
    module = importlib.import_module(FORMATS[fmt])
    return module.render(report, options)
