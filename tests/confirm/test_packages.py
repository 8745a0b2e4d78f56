"""Targets inside packages: each file is imported as the module it is in its project (the lint's
resolver names it), with its import root first on sys.path. One batched run for every layout."""

from __future__ import annotations

import json
import os

import pytest

from breakscan.confirm import discover_targets, run_script, run_targets
from breakscan.confirm.locate import main_file, module_site, split_module_entry
from breakscan.model import TargetResult, TargetSpec
from tests.helpers import FIXTURES, expected_findings
from tests.integrations.helpers import cli

PROJECTS = FIXTURES / "projects"
SAME_NAME = PROJECTS / "same_name_package" / "x_transformers"
NAMESPACE = PROJECTS / "namespace_tree"
SRC_LAYOUT = PROJECTS / "src_layout"
CONFIG_SRC = PROJECTS / "config_src"


def _expected_line(path, rule: str) -> int:
    return next(line for line, expected in expected_findings(path) if expected == rule)


def test_a_module_entry_names_its_module():
    assert split_module_entry("pkg.models.model:Model()") == ("pkg.models.model", "Model()")
    assert split_module_entry("train:step") == ("train", "step")
    for expression in ("Model()", "lambda x: x + 1", "lambda: 1", "Model(a={1: 2})", "nn.Linear(2, 2)"):
        assert split_module_entry(expression) == (None, expression)


def test_module_names_and_search_paths_come_from_the_lints_resolver():
    site = module_site(str(SAME_NAME / "x_transformers.py"))
    assert (site.name, site.package) == ("x_transformers.x_transformers", "x_transformers")
    assert site.search_path[0] == str(SAME_NAME.parent)  # the import root, not the package folder
    src = module_site(str(SRC_LAYOUT / "src/detector/head.py"))
    assert (src.name, src.search_path[0]) == ("detector.head", str(SRC_LAYOUT / "src"))
    configured = module_site(str(CONFIG_SRC / "lib/blocks/mixing.py"), (str(CONFIG_SRC / "lib"),))
    assert (configured.name, configured.package) == ("blocks.mixing", "blocks")
    assert main_file("pkg.train", str(NAMESPACE)) == str(NAMESPACE / "pkg/train.py")
    assert main_file("pkg", str(NAMESPACE)) is None  # a package without __main__.py cannot be run


SPECS = [
    *discover_targets(str(SAME_NAME / "x_transformers.py"))[0],
    TargetSpec(str(NAMESPACE / "pkg/models/model.py"), "Model()", "torch.randn(2, 4)"),
    TargetSpec(str(SRC_LAYOUT / "src/detector/head.py"), "Head()", "torch.randn(3, 8)"),
    TargetSpec(str(CONFIG_SRC / "lib/blocks/mixing.py"), "mix", "torch.randn(3)"),
]


@pytest.fixture(scope="module")
def results() -> list[TargetResult]:
    return run_targets(SPECS, timeout=240, src_roots=(str(CONFIG_SRC / "lib"),))


@pytest.mark.slow
def test_a_module_named_like_its_package_imports_the_package(results):
    result = results[0]
    assert (result.name, result.status) == ("TransformerWrapper()", "ok"), result.error
    (brk,) = result.breaks
    assert (os.path.realpath(brk.path), brk.line) == (str(SAME_NAME / "attend.py"),
                                                      _expected_line(SAME_NAME / "attend.py", "BS201"))


@pytest.mark.slow
def test_relative_and_absolute_imports_of_the_project_work(results):
    helpers = NAMESPACE / "pkg/utils/helpers.py"
    boxes = SRC_LAYOUT / "src/detector/ops/boxes.py"
    mixing = CONFIG_SRC / "lib/blocks/mixing.py"
    for result, path, rule in ((results[1], helpers, "BS101"), (results[2], boxes, "BS301"),
                               (results[3], mixing, "BS502")):
        assert result.status == "ok", result.error
        assert (str(path), _expected_line(path, rule)) in {(os.path.realpath(b.path), b.line) for b in result.breaks}


@pytest.mark.slow
def test_run_dash_m_runs_a_module_of_a_package(monkeypatch):
    monkeypatch.chdir(NAMESPACE)
    (result,) = run_script("pkg/train.py", ["2"], timeout=240, module="pkg.train")
    assert result.status == "ok", result.error
    assert {b.gb_id for b in result.breaks} == {"GB0124", "GB0059"}


@pytest.mark.slow
def test_entry_package_module_expr_from_the_project_folder(tmp_path):
    report = tmp_path / "report.json"
    result = cli(str(SRC_LAYOUT), "--entry", "detector.head:Head()", "--inputs", "torch.randn(3, 8)",
                 "--format", "json", "-o", str(report), "--no-cache")
    assert result.returncode == 1, result.stderr
    (target,) = json.loads(report.read_text())["targets"]
    assert (target["name"], target["status"]) == ("Head()", "ok")
    assert os.path.realpath(target["path"]) == str(SRC_LAYOUT / "src/detector/head.py")
    missing = cli(str(SRC_LAYOUT), "--entry", "detector.nowhere:Head()", "--no-cache")
    assert missing.returncode == 2 and "no module detector.nowhere found" in missing.stderr


@pytest.mark.slow
def test_the_chain_interleaves_graphs_and_breaks_as_they_ran(results):
    from breakscan.report.graph import build_chain

    # normalise: sum, .item() break, truediv; then describe's print break, after that graph.
    chain = build_chain(results[1], [], 0)
    assert [node.id for node in chain.nodes] == ["g1", "g2", "b1", "g3", "b2"]
    assert [b.brk.gb_id for b in chain.breaks] == ["GB0124", "GB0059"]
