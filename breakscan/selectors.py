"""Rule selectors (`--select`, `--ignore`, config): ids, id prefixes, rule names or `ALL`.

A selector that matches no rule is a mistake (a typo selects nothing and ignores nothing, silently),
so it is refused with the nearest rule id or name as a suggestion."""

from __future__ import annotations

import difflib

# A break TorchDynamo reported that no rule predicted: a finding id, though not a rule's.
UNPREDICTED_ID = "BS000"
_LOOKALIKE_DIGITS = str.maketrans("OIL", "011")


def _known() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from breakscan.lint.rules import rule_table

    table = rule_table()
    return (UNPREDICTED_ID, *(rule_id for rule_id, _ in table)), tuple(name for _, name in table)


def is_known_selector(selector: str, ids: tuple[str, ...], names: tuple[str, ...]) -> bool:
    wanted = selector.upper()
    return wanted == "ALL" or selector in names or any(rule_id.startswith(wanted) for rule_id in ids)


def selector_problem(selectors: tuple[str, ...]) -> str | None:
    """Why `selectors` cannot be used (the first unknown one, with a suggestion), or None."""
    ids, names = _known()
    for selector in selectors:
        if is_known_selector(selector, ids, names):
            continue
        candidates = names if selector.islower() and not selector.startswith("bs") else ids
        wanted = selector.upper() if candidates is ids else selector
        # Letters typed for the digits they look like (`BS1O1`) before the nearest by spelling.
        digits = wanted[:2] + wanted[2:].translate(_LOOKALIKE_DIGITS) if candidates is ids else wanted
        close = [digits] if digits in candidates else difflib.get_close_matches(wanted, candidates, n=1)
        hint = f" (did you mean {close[0]}?)" if close else " (see `breakscan rules`)"
        return f"unknown rule id or prefix `{selector}`{hint}"
    return None
