"""`--jobs N`: worker processes change the speed, never the report."""

from concurrent.futures import ProcessPoolExecutor

import pytest

from breakscan.config import Config
from breakscan.lint import linter
from tests.integrations.helpers import BREAKING, CLEAN, HELPER_BREAKING, MODEL_USING_HELPER, cli


@pytest.fixture
def project(tmp_path):
    """Enough files for two workers: breaks, clean files, a package calling a helper, a suppression,
    a syntax error."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HELPER_BREAKING)
    (package / "model.py").write_text(MODEL_USING_HELPER.replace("from helpers", "from pkg.helpers"))
    for index in range(12):
        (tmp_path / f"breaking_{index:02}.py").write_text(BREAKING.replace("def fn", f"def fn_{index}"))
        (tmp_path / f"clean_{index:02}.py").write_text(CLEAN)
    (tmp_path / "suppressed.py").write_text(BREAKING.replace(".item()", ".item()  # breakscan: ignore[BS101]"))
    (tmp_path / "unused.py").write_text(CLEAN.replace("x * 2", "x * 2  # breakscan: ignore[BS101]"))
    (tmp_path / "broken.py").write_text("def forward(:\n")
    return tmp_path


def test_two_workers_give_the_same_outcome_as_one(project, monkeypatch):
    pools = []

    class RecordingPool(ProcessPoolExecutor):
        def __init__(self, max_workers, **options):
            pools.append(max_workers)
            super().__init__(max_workers=max_workers, **options)

    monkeypatch.setattr(linter, "ProcessPoolExecutor", RecordingPool)
    serial = linter.lint_paths([str(project)], Config(), jobs=1)
    parallel = linter.lint_paths([str(project)], Config(), jobs=2)
    assert pools == [2]
    assert parallel == serial
    assert len(serial.findings) == 13 and len(serial.errors) == 1 and len(serial.unused_suppressions) == 1


def test_cli_output_is_identical_for_any_jobs(project):
    one = cli("--static", "--no-cache", "--format", "json", "--jobs", "1", ".", cwd=project)
    two = cli("--static", "--no-cache", "--format", "json", "--jobs", "2", ".", cwd=project)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
