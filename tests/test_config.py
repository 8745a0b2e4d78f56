"""`[tool.breakscan]` and rule selection as ruff users expect: extend-select adds, unknown ids and
broken config files are usage errors that say where and what."""

from __future__ import annotations

import textwrap

import pytest

from breakscan.config import ConfigError, find_config, load_config
from tests.integrations.helpers import cli

# A BS101 (`.item()`) and a BS401 (`print`) in one compiled function.
TWO_RULES = textwrap.dedent("""\
    import torch


    @torch.compile
    def fn(x):
        print("step")
        return x * x.sum().item()
""")


def rules_found(folder, *args: str) -> list[str]:
    result = cli("--static", "--no-cache", "--format", "concise", *args, str(folder / "model.py"))
    assert result.returncode in (0, 1), result.stderr
    return sorted(line.split()[1] for line in result.stdout.splitlines())


@pytest.fixture
def project(tmp_path):
    (tmp_path / "model.py").write_text(TWO_RULES)
    return tmp_path


def configure(folder, table: str) -> None:
    (folder / "pyproject.toml").write_text("[tool.breakscan]\n" + textwrap.dedent(table))


def test_extend_select_adds_to_the_default_selection(project):
    configure(project, 'extend-select = ["BS9"]\n')
    assert rules_found(project) == ["BS101", "BS401"]


def test_extend_select_adds_to_select(project):
    configure(project, 'select = ["BS4"]\nextend-select = ["BS101"]\n')
    assert rules_found(project) == ["BS101", "BS401"]
    configure(project, 'select = ["BS4"]\n')
    assert rules_found(project) == ["BS401"]


def test_extend_ignore_adds_to_ignore(project):
    configure(project, 'ignore = ["BS4"]\nextend-ignore = ["BS101"]\n')
    assert rules_found(project) == []
    configure(project, 'extend-ignore = ["BS101"]\n')
    assert rules_found(project) == ["BS401"]


@pytest.mark.parametrize("option", ["--select", "--ignore"])
@pytest.mark.parametrize(("selector", "suggestion"), [("BS1O1", "did you mean BS101?"),
                                                      ("BS999", "did you mean BS90"),
                                                      ("tensor-iten", "did you mean tensor-item?")])
def test_an_unknown_rule_on_the_command_line_is_a_usage_error(project, option, selector, suggestion):
    result = cli("--static", "--no-cache", option, f"BS4,{selector}", str(project / "model.py"))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{option}: unknown rule id or prefix `{selector}`" in result.stderr and suggestion in result.stderr


@pytest.mark.parametrize("selectors", [["BS1"], ["bs101"], ["tensor-item"], ["ALL"], ["BS000"], ["BS"]])
def test_known_ids_prefixes_and_names_are_accepted(project, selectors):
    assert cli("--static", "--no-cache", "--ignore", ",".join(selectors), str(project)).returncode in (0, 1)


@pytest.mark.parametrize("table", ['select = ["BS1O1"]', 'extend-select = ["BS1O1"]', 'ignore = ["BS1O1"]',
                                   'extend-ignore = ["BS1O1"]', '[tool.breakscan.per-file-ignores]\n"*.py" = ["BS1O1"]'])
def test_an_unknown_rule_in_config_is_a_usage_error_naming_the_file_and_key(project, table):
    configure(project, table + "\n")
    result = cli("--static", "--no-cache", str(project / "model.py"))
    assert result.returncode == 2
    assert str(project / "pyproject.toml") in result.stderr and "did you mean BS101?" in result.stderr


def test_a_broken_pyproject_found_on_the_way_up_is_an_error_even_without_our_table(project):
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = 1.0.0\n')
    sub = project / "pkg"
    sub.mkdir()
    (sub / "model.py").write_text(TWO_RULES)
    result = cli("--static", "--no-cache", str(sub / "model.py"))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{project / 'pyproject.toml'}:3:14: invalid TOML: " in result.stderr


def test_a_broken_config_given_with_config_names_line_and_problem(project):
    (project / "breakscan.toml").write_text('select = ["BS1"\nignore = []\n')
    result = cli("--static", "--no-cache", "--config", str(project / "breakscan.toml"), str(project))
    assert result.returncode == 2
    assert f"{project / 'breakscan.toml'}:2:1: invalid TOML: " in result.stderr


def test_toml_cut_short_is_reported_at_the_end_of_the_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.breakscan]\nselect = ")
    with pytest.raises(ConfigError, match=r"pyproject.toml: invalid TOML: Invalid value at the end of the file"):
        load_config(find_config(str(tmp_path)))


def test_a_pyproject_without_our_table_is_passed_over(tmp_path):
    (tmp_path / "breakscan.toml").write_text('select = ["BS1"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    assert find_config(str(sub)) == str(tmp_path / "breakscan.toml")


def test_a_config_file_of_another_name_holds_its_keys_at_the_top_level(tmp_path):
    """`--config ci.toml` reads the file as breakscan.toml is read (ruff reads `--config` files
    that way too); it was read as a pyproject.toml, and its keys were passed over in silence."""
    (tmp_path / "ci.toml").write_text('select = ["BS1"]\nroots = ["model.step"]\n')
    config = load_config(str(tmp_path / "ci.toml"))
    assert (config.select, config.roots) == (("BS1",), ("model.step",))
    (tmp_path / "bad.toml").write_text('selec = ["BS1"]\n')
    with pytest.raises(ConfigError, match="unknown .* keys: selec"):
        load_config(str(tmp_path / "bad.toml"))


def test_per_file_ignores_must_list_rule_ids(tmp_path):
    configure(tmp_path, '[tool.breakscan.per-file-ignores]\n"*.py" = 3\n')
    with pytest.raises(ConfigError, match="per-file-ignores `\\*.py` must be a list of rule ids"):
        load_config(str(tmp_path / "pyproject.toml"))
