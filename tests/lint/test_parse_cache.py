"""The parse cache keeps the files many units ask for (a package's `functional.py`) over the others."""

import libcst as cst
import pytest

from breakscan.lint.engine import _ParseCache, _Parsed
from breakscan.lint.parse import parse_module


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


def test_a_module_looked_up_again_is_read_again_only_when_its_file_changed(tmp_path, monkeypatch):
    """A helper module another file imports is not re-read while its modification time and size
    hold; an edit (or an editor's unsaved buffer) is read."""
    import os

    from breakscan.config import Config
    from breakscan.lint import engine
    from breakscan.lint.buffer import lint_buffer
    from breakscan.lint.linter import lint_paths

    (tmp_path / "helpers.py").write_text("def scale(x):\n    return x.item()\n")
    model = tmp_path / "model.py"
    model.write_text("import torch\nfrom helpers import scale\n\n\n@torch.compile\ndef fn(x):\n    return scale(x)\n")
    reads = []
    real = engine.read_source
    monkeypatch.setattr(engine, "read_source", lambda path: reads.append(os.path.basename(path)) or real(path))

    def findings():
        return sorted((os.path.basename(f.path), f.line, f.rule)
                      for f in lint_paths([str(model)], Config(), jobs=1).findings)

    assert findings() == [("helpers.py", 2, "BS101")]
    reads.clear()
    assert findings() == [("helpers.py", 2, "BS101")] and reads == ["model.py"]
    (tmp_path / "helpers.py").write_text("def scale(x):\n    return x.sum()\n")
    assert findings() == [] and "helpers.py" in reads
    helper = str(tmp_path / "helpers.py")
    buffered = lint_buffer(str(model), {str(model): model.read_text(), helper: "def scale(x):\n    return x.tolist()\n"},
                           Config())
    assert [(os.path.basename(f.path), f.rule) for f in buffered.findings] == [("helpers.py", "BS102")]


def test_a_unit_holding_many_files_drops_the_others_not_its_own():
    cache = _ParseCache(max_lines=10)
    other = parsed("other.py", 4)
    for _ in range(3):
        ask(cache, other)  # asked for often: it would outlast the unit's files under the plain rule
    first, second = parsed("model.py", 4), parsed("helper.py", 4)
    cache.put(first, held=())
    cache.put(second, held={"model.py"})  # the unit holds model.py: dropping it would free nothing
    assert cache.get("model.py", first.data) is first
    assert cache.get("other.py", other.data) is None


def test_the_parse_skips_node_checks_only_while_it_runs():
    tree = parse_module("x = (1,\n     2)\n")
    assert tree.code == "x = (1,\n     2)\n"
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
