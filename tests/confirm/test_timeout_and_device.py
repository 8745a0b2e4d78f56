"""Per-target timeout (kill, report, restart for the rest) and an unavailable device."""

from __future__ import annotations

import importlib.util

import pytest

from breakscan.confirm import discover_targets, run_targets
from tests.confirm.helpers import fixture


def _spec(entry: str):
    (spec,), _ = discover_targets(fixture("failures.py"), entry=entry, inputs="torch.randn(3)")
    return spec


def test_a_hanging_target_times_out_and_the_next_one_still_runs():
    hang, after = run_targets([_spec("hangs"), _spec("noisy")], timeout=5)
    assert hang.status == "timeout"
    assert hang.error == "did not finish within 5 s"
    assert 5 <= hang.wall_time < 15  # the target's time, not the worker's start
    assert after.status == "ok"


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or _cuda_available(),
                    reason="needs a machine without CUDA")
def test_cuda_requested_without_cuda_fails_clearly():
    (result,) = run_targets([_spec("noisy")], device="cuda", timeout=60)
    assert result.status == "failed"
    assert "CUDA is not available" in result.error
    assert result.device == "cuda"
    assert result.torch_version
