"""The parse cache keeps the files many units ask for (a package's `functional.py`) over the others."""

from breakscan.lint.engine import _ParseCache, _Parsed


def parsed(path: str, lines: int) -> _Parsed:
    text = "x = 1\n" * (lines - 1)
    return _Parsed(path, text, text.encode(), tree=None, index=None)


def ask(cache: _ParseCache, entry: _Parsed) -> _Parsed | None:
    """What a unit does: look the file up, parse and keep it if it is not there."""
    found = cache.get(entry.path, entry.data)
    if found is None:
        cache.put(entry)
    return found


def test_a_full_cache_drops_the_file_asked_for_least_not_the_least_recent():
    cache = _ParseCache(max_lines=10)
    hub, helper, other = parsed("hub.py", 4), parsed("helper.py", 4), parsed("other.py", 4)
    for _ in range(3):
        ask(cache, hub)
    ask(cache, helper)
    ask(cache, other)  # over the budget: one of the older two goes
    assert ask(cache, hub) is hub
    assert ask(cache, helper) is None


def test_a_changed_file_is_parsed_again():
    cache = _ParseCache(max_lines=10)
    ask(cache, parsed("a.py", 2))
    assert cache.get("a.py", b"changed") is None
