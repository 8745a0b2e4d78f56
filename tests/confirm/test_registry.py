"""The GB registry of the installed torch, read without importing torch."""

from __future__ import annotations

import subprocess
import sys

from breakscan.confirm.registry import Registry, load_registry


def test_registry_loads_without_importing_torch():
    code = ("import sys; from breakscan.confirm.registry import load_registry as l; "
            "r = l(); print(len(r.by_id), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, imported = out.stdout.split()
    assert int(count) > 500 and imported == "False"


def test_ids_by_type_link_and_description():
    registry = load_registry()
    assert registry.identify("Data-dependent branching") == "GB0170"
    assert registry.identify("graph break in loop", "see .../gb/gb0170.html") == "GB7000"
    assert registry.identify(None, "https://x/compile-graph-break-site/gb/gb0124.html") == "GB0124"
    assert registry.identify("no such type", "no link") is None
    entry = registry.by_id["GB0170"]
    assert entry.gb_type == "Data-dependent branching"  # not a later version's placeholder
    assert entry.explanation.startswith("Detected data-dependent branching")
    assert "Use `torch.cond` to express dynamic control flow." in entry.hints


def test_every_version_type_finds_the_id():
    registry = Registry({"GB9999": [{"Gb_type": "old name", "Explanation": "x y"},
                                    {"Gb_type": "new name", "Explanation": "_explanation"}]})
    assert registry.identify("old name") == registry.identify("new name") == "GB9999"
    assert registry.by_id["GB9999"].explanation == "x y"


def test_missing_registry_degrades_to_none(monkeypatch):
    from breakscan.confirm import registry

    monkeypatch.setattr(registry, "registry_path", lambda: None)
    registry.load_registry.cache_clear()
    try:
        assert registry.load_registry() is None
    finally:
        registry.load_registry.cache_clear()
