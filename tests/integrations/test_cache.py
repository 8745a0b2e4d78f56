"""The content-hash lint cache: hits, what invalidates an entry, sharing, corruption, `--no-cache`."""

import concurrent.futures
import json
import os

import pytest

from breakscan import cache as cache_module
from breakscan.cache import LintCache
from breakscan.config import Config
from breakscan.lint import engine, linter
from breakscan.lint.suppress import Suppression
from breakscan.lint.units import UnitResult
from breakscan.model import Edit, FileError, Finding, Fix, Span
from breakscan.plain_json import from_plain, to_plain
from tests.integrations.helpers import (
    BREAKING,
    CLEAN,
    HELPER_BREAKING,
    HELPER_CLEAN,
    MODEL_USING_HELPER,
    breakscan,
    cli,
)


@pytest.fixture
def linted_units(monkeypatch):
    """The files each lint really analysed (not answered from the cache)."""
    analysed: list[str] = []
    real = engine.lint_unit

    def counting(path, files, settings):
        analysed.append(os.path.basename(path))
        return real(path, files, settings)

    monkeypatch.setattr(engine, "lint_unit", counting)
    return analysed


@pytest.fixture
def project(tmp_path):
    source = tmp_path / "project"
    source.mkdir()
    (source / "model.py").write_text(MODEL_USING_HELPER)
    (source / "helpers.py").write_text(HELPER_BREAKING)
    (source / "plain.py").write_text(BREAKING)
    return source


def lint(project, cache_dir, config=Config(), **options):  # noqa: B008 - Config is immutable
    outcome = linter.lint_paths([str(project)], config, jobs=1, cache=LintCache(str(cache_dir)), **options)
    return sorted((os.path.basename(f.path), f.line, f.rule, f.chain) for f in outcome.findings)


def test_second_run_is_answered_from_the_cache(project, tmp_path, linted_units):
    first = lint(project, tmp_path / "cache")
    assert sorted(linted_units) == ["helpers.py", "model.py", "plain.py"]
    linted_units.clear()
    assert lint(project, tmp_path / "cache") == first
    assert linted_units == []
    assert ("helpers.py", 2, "BS101", ("fn", "normalise")) in first


def test_editing_a_file_relints_it(project, tmp_path, linted_units):
    lint(project, tmp_path / "cache")
    linted_units.clear()
    (project / "plain.py").write_text(CLEAN)
    findings = lint(project, tmp_path / "cache")
    assert linted_units == ["plain.py"]
    assert not any(name == "plain.py" for name, *_ in findings)


def test_editing_a_helper_in_another_module_relints_its_callers(project, tmp_path, linted_units):
    lint(project, tmp_path / "cache")
    linted_units.clear()
    (project / "helpers.py").write_text(HELPER_CLEAN)
    findings = lint(project, tmp_path / "cache")
    assert sorted(linted_units) == ["helpers.py", "model.py"]
    assert not any(name == "helpers.py" for name, *_ in findings)


@pytest.mark.parametrize("change", [
    {"config": Config(roots=("helpers.normalise",))},
    {"config": Config(select=("BS1",))},
    {"config": Config(unreachable=True)},
    {"unreachable": True},
])
def test_a_config_change_is_a_miss(project, tmp_path, linted_units, change):
    lint(project, tmp_path / "cache")
    linted_units.clear()
    lint(project, tmp_path / "cache", **change)
    assert sorted(linted_units) == ["helpers.py", "model.py", "plain.py"]


def test_a_change_to_breakscan_rules_is_a_miss(project, tmp_path, linted_units, monkeypatch):
    lint(project, tmp_path / "cache")
    linted_units.clear()
    monkeypatch.setattr(cache_module, "_code_fingerprint", lambda: b"an edited rule")
    lint(project, tmp_path / "cache")
    assert len(linted_units) == 3


@pytest.mark.parametrize("edited", ["rules/rule.py", "data/catalogue.json"])
def test_the_code_fingerprint_covers_rules_and_the_data_they_read(tmp_path, edited):
    for name in ("rules/rule.py", "data/catalogue.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("first")
    before = cache_module.package_fingerprint(tmp_path)
    (tmp_path / edited).write_text("second")
    assert cache_module.package_fingerprint(tmp_path) != before


def test_corrupt_entries_are_misses_and_get_rewritten(project, tmp_path, linted_units):
    first = lint(project, tmp_path / "cache")
    entries = sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.name != ".gitignore")
    assert len(entries) == 3
    for entry, garbage in zip(entries, [b"\x80\x04not json", b'{"dependencies": {}', b'{"result": [1, 2]}']):
        entry.write_bytes(garbage)
    linted_units.clear()
    assert lint(project, tmp_path / "cache") == first
    assert len(linted_units) == 3
    linted_units.clear()
    assert lint(project, tmp_path / "cache") == first
    assert linted_units == []


def test_concurrent_runs_share_one_cache(project, tmp_path, linted_units):
    for index in range(12):
        (project / f"extra_{index}.py").write_text(BREAKING.replace("fn", f"fn_{index}"))
    env = {"BREAKSCAN_CACHE_DIR": str(tmp_path / "shared")}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: breakscan("--static", "--format", "json", "--jobs", "1", str(project), env=env),
                             range(2)))
    outputs = {json.dumps(json.loads(run.stdout)["findings"]) for run in runs}
    assert [run.returncode for run in runs] == [1, 1] and len(outputs) == 1
    assert not [p for p in (tmp_path / "shared").rglob("tmp*")], "temporary files left behind"
    linted_units.clear()
    lint(project, tmp_path / "shared", fixes=True)  # the settings of a json report: with its fixes
    assert linted_units == []
    lint(project, tmp_path / "shared")  # without fixes (concise): other entries
    assert len(linted_units) == 15  # the 3 files of the project and the 12 added


def test_the_cache_folder_ignores_itself_and_no_cache_bypasses_it(project, tmp_path):
    assert cli("--static", "--format", "json", ".", cwd=project).returncode == 1
    assert (project / ".breakscan_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "model.py").write_text(BREAKING)
    assert cli("--static", "--no-cache", ".", cwd=elsewhere).returncode == 1
    assert not (elsewhere / ".breakscan_cache").exists()


def test_entries_round_trip_every_field():
    finding = Finding(rule="BS101", name="tensor-item", path="m.py", span=Span(3, 5, 3, 14), message="m",
                      gb_ids=("GB0124",), severity="warning", chain=("M.forward", "helper"), status="confirmed",
                      fix=Fix("s", "diff", (Edit(Span(3, 5, 3, 14), "x"),)), count=2, target="M()")
    result = UnitResult(findings=[finding], errors=[FileError("m.py", "bad", 1, None)], declares_targets=True,
                        suppressions={"m.py": [Suppression(4, ("BS1", "BS201"), False, {"BS101"})]})
    assert from_plain(UnitResult, json.loads(json.dumps(to_plain(result)))) == result


def test_an_import_that_finds_nothing_but_existing_files_does_not_defeat_the_cache(tmp_path, linted_units):
    """Looking up a name of the file itself as a module (`modeling_x.Gelu`) looks at the file and
    passes it over: a file that exists cannot "appear", so the second run is answered from the cache."""
    source = tmp_path / "copied"
    source.mkdir()
    (source / "modeling_x.py").write_text(
        "import torch\n\n\n"
        "class Gelu(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n\n\n"
        "class Block(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return Gelu.apply(x).item()\n")
    first = lint(source, tmp_path / "cache")
    linted_units.clear()
    assert lint(source, tmp_path / "cache") == first and linted_units == []
