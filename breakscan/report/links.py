"""Where a GB id is documented: PyTorch's graph-break site, in the form torch 2.13 itself links to
(`torch/_dynamo/exc.py`, `get_gbid_documentation_link`: lower-case `gb` and the four digits)."""

from __future__ import annotations

import re

GRAPH_BREAK_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"
_GB_ID = re.compile(r"GB(\d{4})$")


def gb_url(gb_id: str | None) -> str | None:
    match = _GB_ID.match(gb_id or "")
    return f"{GRAPH_BREAK_SITE}gb{match.group(1)}.html" if match else None
