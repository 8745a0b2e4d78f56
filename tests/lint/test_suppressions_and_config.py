"""`# breakscan: ignore[...]` comments, `[tool.breakscan]` config and the unused-suppression warning."""

import textwrap

import pytest

from breakscan.config import Config, ConfigError, find_config, load_config
from breakscan.lint.linter import lint_paths
from tests.helpers import lint_source

TWO_BREAKS = textwrap.dedent("""\
    import torch

    @torch.compile
    def fn(x):
        a = x.sum().item(){first}
        if x.sum() > 0:{second}
            return x * a
        return x
""")


def rules_at(outcome):
    return sorted((f.line, f.rule) for f in outcome.findings)


@pytest.mark.parametrize("comment,expected", [
    ("  # breakscan: ignore[BS101]", [(6, "BS201")]),
    ("  # breakscan: ignore", [(6, "BS201")]),
    ("  # breakscan: ignore[BS1]", [(6, "BS201")]),
    ("  # breakscan: ignore[BS201]", [(5, "BS101"), (6, "BS201")]),
])
def test_line_suppressions(tmp_path, comment, expected):
    outcome = lint_source(tmp_path, TWO_BREAKS.format(first=comment, second=""))
    assert rules_at(outcome) == expected


def test_file_level_suppression(tmp_path):
    source = "# breakscan: ignore-file[BS201]\n" + TWO_BREAKS.format(first="", second="")
    assert rules_at(lint_source(tmp_path, source)) == [(6, "BS101")]


def test_unused_suppression_is_a_warning_not_a_finding(tmp_path):
    source = TWO_BREAKS.format(first="", second="  # breakscan: ignore[BS101]")
    outcome = lint_source(tmp_path, source)
    assert rules_at(outcome) == [(5, "BS101"), (6, "BS201")]
    [warning] = outcome.unused_suppressions
    assert warning.line == 6 and "BS101" in warning.message


def test_pyproject_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.breakscan]
        ignore = ["BS201"]
        exclude = ["generated"]
        roots = ["train_step"]

        [tool.breakscan.per-file-ignores]
        "legacy/*.py" = ["BS101"]
    """))
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text(TWO_BREAKS.format(first="", second=""))
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(TWO_BREAKS.format(first="", second=""))
    (tmp_path / "train.py").write_text("def train_step(x):\n    return x.sum().item()\n")
    config = load_config(find_config(str(tmp_path)))
    outcome = lint_paths([str(tmp_path)], config, jobs=1)
    assert sorted((f.path.replace(str(tmp_path), ""), f.line, f.rule) for f in outcome.findings) == [
        ("/train.py", 2, "BS101")]


@pytest.mark.parametrize("text", ["[tool.breakscan]\nselect = 3\n", "[tool.breakscan]\nunknown = 1\n",
                                  "[tool.breakscan\n"])
def test_bad_config_is_a_clear_error(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError):
        load_config(str(tmp_path / "pyproject.toml"))


def test_no_config_found(tmp_path):
    assert find_config(str(tmp_path)) is None or not find_config(str(tmp_path)).startswith(str(tmp_path))
    assert Config().select == ()
