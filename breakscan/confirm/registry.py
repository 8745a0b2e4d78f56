"""PyTorch's graph-break registry (`torch/_dynamo/graph_break_registry.json`), read from the
installed torch without importing it, so that the parent process stays torch-free.

Every id maps to a list of versions of `{Gb_type, Context, Explanation, Hints}`; a break is
identified by the link in its message when there is one, else by its `gb_type`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache

_PLACEHOLDER = re.compile(r"_\w*")
_LINK = re.compile(r"/gb/gb(\d{4})\.html", re.IGNORECASE)


@dataclass(frozen=True)
class RegistryEntry:
    gb_id: str
    gb_type: str
    explanation: str
    hints: tuple[str, ...]


class Registry:
    def __init__(self, raw: dict[str, list[dict]]):
        self.by_id: dict[str, RegistryEntry] = {}
        self._id_by_type: dict[str, str] = {}
        for gb_id, versions in raw.items():
            for version in versions:
                self._id_by_type.setdefault(version.get("Gb_type", ""), gb_id)
            self.by_id[gb_id] = _describe(gb_id, versions)

    def id_for_type(self, gb_type: str | None) -> str | None:
        return self._id_by_type.get(gb_type) if gb_type else None

    def identify(self, gb_type: str | None, text: str = "") -> str | None:
        """The break's id: by its exact `gb_type` (unambiguous), else by a registry link in `text`
        (its own message part: a chained message also holds the link of the break it wraps)."""
        by_type = self.id_for_type(gb_type)
        if by_type:
            return by_type
        match = _LINK.search(text)
        return f"GB{match.group(1)}" if match else None


def _describe(gb_id: str, versions: list[dict]) -> RegistryEntry:
    """One description from the versions (oldest first): later versions sometimes hold a
    placeholder such as `_gb_type` where the source moved the text into a variable."""

    def latest(key: str, default):
        real = [v[key] for v in versions if v.get(key) and not _PLACEHOLDER.fullmatch(str(v[key]))]
        return real[-1] if real else default

    explanation = latest("Explanation", "").strip().strip('"').strip()
    return RegistryEntry(gb_id, latest("Gb_type", ""), explanation, tuple(latest("Hints", ())))


def registry_path() -> str | None:
    spec = importlib.util.find_spec("torch")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(root, "_dynamo", "graph_break_registry.json")
        if os.path.isfile(path):
            return path
    return None


@lru_cache(maxsize=1)
def load_registry() -> Registry | None:
    """The installed torch's registry, or None when torch or the file is absent or unreadable."""
    path = registry_path()
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return Registry(json.load(handle))
    except (OSError, ValueError):
        return None
