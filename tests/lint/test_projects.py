"""Project-wide resolution: given one file, its imports are found on disk as Python would find them.

Each project under fixtures/projects/ marks its expected findings inline (`# expect: BS101`), in
whichever file they are; linting only the entry file (as pre-commit with one staged file does) must
report exactly those, at the helpers' lines, with the way in from the entry file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from breakscan.config import Config, load_config
from breakscan.lint import resolve
from breakscan.lint.linter import lint_paths
from breakscan.lint.resolve import FollowPolicy, ModuleResolver
from tests.helpers import FIXTURES, ROOT, expected_findings

PROJECTS = FIXTURES / "projects"
SITE_PACKAGES = PROJECTS / "site-packages"

ENTRIES = {
    "namespace_tree": "pkg/models/model.py",  # __init__.py only at the top: subfolders are namespace packages
    "src_layout": "src/detector/head.py",  # src/ layout, relative imports, a re-export through __init__.py
    "config_src": "app/train.py",  # `src = ["lib"]` in config; an import nothing resolves
    "scripts": "model.py",  # `import helpers` beside a script
    "type_aliases": "model.py",  # annotations naming type aliases another module defines
    "inherited_forward": "losses/circle.py",  # no forward of its own: the base class's (elsewhere) runs
    "star_reexports": "model.py",  # a package's `from .layers import *`; class methods called through it
    "star_helpers": "model.py",  # `from helpers import *` binds the functions a forward calls by name
}


def _expected(project: Path) -> set[tuple[str, int, str]]:
    return {(str(path), line, rule) for path in project.rglob("*.py")
            for line, rule in expected_findings(path)}


def _lint_one(entry: Path, **options):
    config_file = entry.parent
    found = next((p / "pyproject.toml" for p in [config_file, *config_file.parents]
                  if (p / "pyproject.toml").is_file() and "[tool.breakscan]" in (p / "pyproject.toml").read_text()),
                 None)
    config = load_config(str(found)) if found else Config()
    return lint_paths([str(entry)], config, jobs=1, **options)


@pytest.mark.parametrize("project", sorted(ENTRIES))
def test_one_file_finds_the_breaks_in_the_files_it_imports(project):
    entry = PROJECTS / project / ENTRIES[project]
    outcome = _lint_one(entry)
    assert not outcome.errors
    found = {(str(Path(f.path).resolve()), f.line, f.rule) for f in outcome.findings}
    assert found == _expected(PROJECTS / project)
    for finding in outcome.findings:  # each reached from the entry file, at the call that leads there
        if Path(finding.path).resolve() != entry:
            assert finding.call_sites and Path(finding.call_sites[0].path).resolve() == entry
            assert len(finding.call_sites) == len(finding.chain) - 1


def test_module_names_follow_the_package_layout():
    resolver = ModuleResolver()
    namespace = PROJECTS / "namespace_tree/pkg"
    assert resolver.module_name(str(namespace / "models/model.py")) == ("pkg.models.model", "pkg.models")
    assert resolver.module_name(str(namespace / "__init__.py")) == ("pkg", "pkg")
    src = PROJECTS / "src_layout/src/detector"
    assert resolver.module_name(str(src / "ops/boxes.py")) == ("detector.ops.boxes", "detector.ops")
    # Outside any package a file is named as a script would be, unless a src root holds it.
    mixing = PROJECTS / "config_src/lib/blocks/mixing.py"
    assert resolver.module_name(str(mixing)) == ("mixing", "")
    assert ModuleResolver((str(PROJECTS / "config_src/lib"),)).module_name(str(mixing)) == ("blocks.mixing", "blocks")


def test_unresolvable_and_installed_modules_stay_unknown_without_follow():
    resolver = ModuleResolver()
    importer = str(PROJECTS / "uses_library/my_models.py")
    assert resolver.locate("not_installed_anywhere", importer) is None
    assert resolver.locate("vqlib", importer) is None  # not followed
    assert resolver.locate("torch.nn.functional", importer) is None  # torch is modelled, never read


def test_follow_reads_installed_packages_and_labels_their_findings(monkeypatch):
    monkeypatch.setattr(resolve, "_install_locations", lambda: (str(SITE_PACKAGES),))
    entry = PROJECTS / "uses_library/my_models.py"
    assert _lint_one(entry).findings == []
    for options in ({"follow": True}, {}):
        config = Config(follow=("vqlib",)) if not options else Config()
        outcome = lint_paths([str(entry)], config, jobs=1, **options)
        [finding] = outcome.findings
        assert (Path(finding.path).resolve(), finding.line, finding.rule) == (SITE_PACKAGES / "vqlib/codebook.py", 13,
                                                                             "BS303")
        assert finding.library.package == "vqlib"
        assert (Path(finding.library.reached_from.path).resolve(), finding.library.reached_from.line) == (entry, 13)


def test_follow_never_reads_torch_nor_packages_dynamo_skips():
    policy = FollowPolicy(everything=True)
    assert policy.follows("vqlib", from_project=True)
    assert not policy.follows("torch", from_project=True)
    if resolve.dynamo_skipped_packages():  # read from the installed torch's trace rules, when torch is there
        assert not policy.follows("numpy", from_project=True)


@pytest.mark.slow  # starts breakscan processes
def test_the_cache_notices_a_module_that_appears(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECTS / "scripts", project)
    (project / "helpers.py").unlink()
    command = [sys.executable, "-m", "breakscan", "check", "--static", "--format", "json", "model.py"]
    environment = {**os.environ, "BREAKSCAN_CACHE_DIR": str(tmp_path / "cache")}

    def findings() -> list[tuple[str, int]]:
        result = subprocess.run(command, cwd=project, capture_output=True, text=True, env=environment)
        return [(f["path"], f["line"]) for f in json.loads(result.stdout)["findings"]]

    assert findings() == []
    shutil.copy(PROJECTS / "scripts/helpers.py", project / "helpers.py")
    assert findings() == [("helpers.py", 2)]


@pytest.mark.slow  # starts breakscan processes
def test_cli_reports_the_library_and_the_way_in(tmp_path):
    entry = (PROJECTS / "uses_library/my_models.py").relative_to(ROOT)
    environment = {**os.environ, "PYTHONPATH": str(SITE_PACKAGES), "BREAKSCAN_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "breakscan", "check", "--static", "--follow", str(entry)],
                            capture_output=True, text=True, env=environment, cwd=ROOT)
    assert result.returncode == 1, result.stderr
    assert f"in vqlib at codebook.py:13, reached from {entry}:13" in result.stdout
    assert f"chain: Quantized.forward ({entry}:13) → Codebook.forward" in result.stdout


def test_recompile_rules_read_how_the_training_script_calls_the_model_it_imports():
    """The training script compiles the model from another file, switches it between train and
    eval with the evaluation under no_grad, and compiles a helper per call with a lambda backend:
    the recompile findings land in the model's file."""
    project = PROJECTS / "training_loop"
    outcome = _lint_one(project / "train.py")
    assert not outcome.errors
    found = {(str(Path(f.path).resolve()), f.line, f.rule) for f in outcome.findings}
    assert found == _expected(project)
    (grad_mode,) = [f for f in outcome.findings if f.rule == "BR005"]
    assert grad_mode.severity == "warning" and "`compiled(x)`" in grad_mode.message


@pytest.mark.slow  # runs the script under TorchDynamo
def test_the_training_script_run_confirms_the_recompile_findings(tmp_path):
    project = PROJECTS / "training_loop"
    environment = {**os.environ, "BREAKSCAN_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "breakscan", "run", "--format", "json", "train.py", "2"],
                            capture_output=True, text=True, env=environment, cwd=project)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    statuses = {(Path(f["path"]).name, f["line"], f["rule"], f["status"]) for f in report["findings"]}
    assert statuses == {(Path(path).name, line, rule, "confirmed") for path, line, rule in _expected(project)}
