"""In-process confirmation for the user's tests: breakscan.confirm / assert_no_graph_breaks."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import breakscan  # noqa: E402


def _breaks_twice(x):
    y = x.sum().item()  # one break
    if x.sum() > -1e9:  # another
        x = x + y
    return x


def test_importing_breakscan_does_not_import_torch():
    code = "import sys, breakscan, breakscan.confirm; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_confirm_reports_breaks_as_findings():
    report = breakscan.confirm(_breaks_twice, torch.randn(3))
    (target,) = report.targets
    assert target.graph_break_count == 2 and target.device == "cpu"
    assert {b.gb_id for b in target.breaks} == {"GB0124", "GB0170"}
    assert [f.rule for f in report.findings] == ["BS000", "BS000"]
    assert all(f.path == __file__ for f in report.findings)
    assert report.torch_version == torch.__version__


def test_confirm_works_after_the_package_is_imported():
    import breakscan.confirm

    report = breakscan.confirm(torch.nn.Linear(2, 2), torch.randn(1, 2))
    assert report.targets[0].breaks == () and report.targets[0].graph_count == 1


def test_assert_no_graph_breaks_lists_each_break():
    with pytest.raises(AssertionError) as raised:
        breakscan.assert_no_graph_breaks(_breaks_twice, torch.randn(3))
    text = str(raised.value)
    assert text.startswith("2 graph break(s) in _breaks_twice:")
    assert f"test_api.py:{_breaks_twice.__code__.co_firstlineno + 1}: GB0124" in text


def test_allowed_ids_pass():
    breakscan.assert_no_graph_breaks(_breaks_twice, torch.randn(3), allow=["GB0124", "gb0170"])
    with pytest.raises(AssertionError, match="GB0170"):
        breakscan.assert_no_graph_breaks(_breaks_twice, torch.randn(3), allow=["GB0124"])


def test_unknown_allow_item_is_an_error():
    with pytest.raises(ValueError, match="neither a GB id"):
        breakscan.assert_no_graph_breaks(_breaks_twice, torch.randn(3), allow=["BS999"])


def test_exceptions_of_the_user_code_propagate():
    def boom(x):
        raise KeyError("nope")

    with pytest.raises(KeyError):
        breakscan.confirm(boom, torch.randn(1))
