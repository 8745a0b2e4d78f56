"""The rule catalogue: one rule per module, grouped by family in sub-packages."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from breakscan.lint.rule import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by id."""
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.walk_packages(__path__, prefix=__name__ + "."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and "id" in value.__dict__:
                if value.id in found and found[value.id] is not value:
                    raise RuntimeError(f"duplicate rule id {value.id}: {found[value.id]} and {value}")
                found[value.id] = value
    return tuple(found[key] for key in sorted(found))


def rule_by_id(rule_id: str) -> type[Rule] | None:
    wanted = rule_id.upper()
    return next((rule for rule in all_rules() if rule.id == wanted or rule.name == rule_id), None)


def matches(rule_id: str, patterns: tuple[str, ...]) -> bool:
    return any(rule_id.startswith(p.upper()) or p.upper() == "ALL" for p in patterns)


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list[type[Rule]]:
    chosen = [r for r in all_rules() if (not select or matches(r.id, select) or r.name in select)]
    return [r for r in chosen if not (matches(r.id, ignore) or r.name in ignore)]
