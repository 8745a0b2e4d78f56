"""The rule catalogue: one rule per module, grouped by family in sub-packages.

`table.json` lists every rule's id and name, so that choosing rules (and a run the cache answers)
needs no rule imported, nor libcst; a test holds it to the classes."""

from __future__ import annotations

import functools
import importlib
import json
import os
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


_TABLE = os.path.join(os.path.dirname(__file__), "table.json")


@functools.cache
def rule_table() -> tuple[tuple[str, str], ...]:
    """(id, name) of every rule, sorted by id, without importing them."""
    with open(_TABLE, encoding="utf-8") as handle:
        return tuple((rule_id, name) for rule_id, name in json.load(handle))


def write_rule_table() -> None:
    """Regenerate `table.json` from the rule classes (after adding or renaming a rule)."""
    with open(_TABLE, "w", encoding="utf-8") as handle:
        rows = ",\n".join(f"  {json.dumps([rule.id, rule.name])}" for rule in all_rules())
        handle.write(f"[\n{rows}\n]\n")


def rules_with_ids(rule_ids: tuple[str, ...]) -> tuple[type[Rule], ...]:
    wanted = set(rule_ids)
    return tuple(rule for rule in all_rules() if rule.id in wanted)


def rule_by_id(rule_id: str) -> type[Rule] | None:
    wanted = rule_id.upper()
    return next((rule for rule in all_rules() if rule.id == wanted or rule.name == rule_id), None)


def matches(rule_id: str, patterns: tuple[str, ...]) -> bool:
    return any(rule_id.startswith(p.upper()) or p.upper() == "ALL" for p in patterns)


def select_rules(select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The ids of the rules `select` chooses and `ignore` leaves in (ids, id prefixes, names, `ALL`)."""
    chosen = [(i, name) for i, name in rule_table() if not select or matches(i, select) or name in select]
    return tuple(i for i, name in chosen if not (matches(i, ignore) or name in ignore))
