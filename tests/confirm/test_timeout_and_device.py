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
    # 10 s: the next target, in a restarted worker, compiles within it even on a loaded machine.
    hang, after = run_targets([_spec("hangs"), _spec("noisy")], timeout=10)
    assert hang.status == "timeout"
    assert hang.error == "did not finish within 10 s"
    assert 10 <= hang.wall_time < 25  # the target's time, not the worker's start
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


def _run_in_process(spec, device: str):
    from breakscan.confirm.locate import module_site
    from breakscan.confirm.protocol import target_job
    from breakscan.confirm.worker import run_target

    (result,) = run_target(target_job(spec, device, module_site(spec.path, ())), lambda phase: None)
    return result


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or _cuda_available(),
                    reason="needs a machine without CUDA")
def test_auto_runs_a_target_that_fails_on_cuda_again_on_the_cpu(monkeypatch):
    # CUDA is made to look available: moving the inputs there then fails, as a model that makes
    # its tensors without a device fails on a GPU machine.
    from breakscan.confirm import prepare

    real = prepare.resolve_device
    monkeypatch.setattr(prepare, "resolve_device", lambda requested: "cuda" if requested == "auto" else real(requested))
    fell_back = _run_in_process(_spec("noisy"), "auto")
    assert fell_back.status == "ok" and fell_back.device == "cpu"
    assert fell_back.device_fallback.startswith("failed on cuda: ")
    assert fell_back.graph_count >= 1

    asked = _run_in_process(_spec("noisy"), "cuda")  # asked for by name: the failure is the result
    assert asked.status == "failed" and asked.device == "cuda" and asked.device_fallback is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_every_build_is_seeded_alike_whether_or_not_it_imported_the_module():
    # The first build in a worker imports the module, whose import draws numbers; a later build
    # (or another worker's first, which makes the reference a fix is compared with) must match it.
    import torch

    from breakscan.confirm.locate import module_site
    from breakscan.confirm.prepare import forget_modules, prepare

    (spec,), _ = discover_targets(fixture("draws_at_import.py"))
    site = module_site(spec.path, ())
    forget_modules()
    first, second = prepare(spec, site, "cpu"), prepare(spec, site, "cpu")
    assert torch.equal(first.target.lin.weight, second.target.lin.weight)
    assert torch.equal(first.calls[0].args[0], second.calls[0].args[0])
