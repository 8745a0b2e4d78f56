"""The `slow` marker (`pytest -m "not slow"` runs the rest in seconds): whole modules that run
TorchDynamo, start processes (breakscan, git, pre-commit, a browser, the language server) or
time things are marked here; single tests elsewhere carry `@pytest.mark.slow` themselves."""

from __future__ import annotations

import pytest

SLOW_MODULES = {
    # TorchDynamo runs
    "tests/calibration/test_calibration.py",
    "tests/confirm/test_api.py",
    "tests/confirm/test_capture.py",
    "tests/confirm/test_run_script.py",
    "tests/confirm/test_run_targets.py",
    "tests/confirm/test_timeout_and_device.py",
    "tests/fixes/test_refactor_fixtures.py",
    "tests/fixes/test_rule_example_fixes.py",
    "tests/report/test_end_to_end.py",
    # processes and timings
    "tests/integrations/test_cache.py",
    "tests/integrations/test_changed_since.py",
    "tests/integrations/test_jobs.py",
    "tests/integrations/test_lsp.py",
    "tests/integrations/test_precommit.py",
    "tests/integrations/test_speed_guards.py",
    "tests/report/test_browser.py",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        if item.path.relative_to(root).as_posix() in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
