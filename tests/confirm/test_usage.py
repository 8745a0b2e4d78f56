"""Usage that helps, end to end through the `breakscan` command: --entry without --inputs, the real
error of a target that raises, the memory limit, Ctrl-C, and the progress display on a terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from breakscan.cli import build_parser, memory_size
from tests.helpers import run_on_terminal

MODEL = textwrap.dedent("""\
    import os
    import time

    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(8, 8)

        def forward(self, x):
            return self.l(x)  # SHAPE


    def double(x):
        return x * 2


    def hog(x):
        return torch.ones(2**28, 4) + x.sum()  # 4 GB of float32


    def slow(x):
        with open(os.environ["BREAKSCAN_TEST_MARKER"], "w") as marker:
            marker.write(str(os.getpid()))
        time.sleep(120)
        return x
""")
SHAPE_LINE = MODEL.splitlines().index("        return self.l(x)  # SHAPE") + 1


@pytest.fixture
def model(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    return tmp_path / "m.py"


def breakscan(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "breakscan", "--no-cache", *args], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.slow  # starts breakscan, which starts confirmation workers
def test_entry_without_inputs_takes_them_from_the_first_layer(model):
    result = breakscan(str(model), "--entry", "Net()", "--format", "json")
    [target] = json.loads(result.stdout)["targets"]
    assert (target["name"], target["status"], target["graph_count"]) == ("Net()", "ok", 1)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow  # starts breakscan, which starts confirmation workers
def test_entry_without_inputs_the_first_layer_does_not_tell_is_a_usage_error(model):
    result = breakscan(str(model), "--entry", "double")
    assert result.returncode == 2 and result.stdout == ""
    assert 'add --inputs "torch.randn(...)"' in result.stderr
    assert "it is not an nn.Module" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_raising_target_shows_the_real_error_at_the_user_line_and_memory_is_limited(model):
    declared = '\nBREAKSCAN_TARGETS = {"Net()": "torch.randn(4, 16)", "hog": "torch.randn(3)"}\n'
    model.write_text(MODEL + declared)
    result = breakscan(str(model), "--memory-limit", "1GB", "--format", "json")
    shape, hog = json.loads(result.stdout)["targets"]
    assert shape["status"] == "failed"
    assert shape["error"].startswith("RuntimeError: ") and "[4, 16] X [8, 8]" in shape["error"]
    assert "fake tensor" not in shape["error"]
    assert f"m.py:{SHAPE_LINE})" in shape["error"]
    assert hog["status"] == "out-of-memory"
    assert "can't allocate memory" in hog["error"] and "the memory limit is 1024 MB" in hog["error"]
    assert result.returncode == 1


@pytest.mark.slow
def test_ctrl_c_stops_the_workers_reports_what_finished_and_exits_130(model, tmp_path):
    model.write_text(MODEL + '\nBREAKSCAN_TARGETS = {"double": "torch.randn(3)", "slow": "torch.randn(3)"}\n')
    marker = tmp_path / "slow-started"
    env = dict(os.environ, BREAKSCAN_TEST_MARKER=str(marker), PYTHONFAULTHANDLER="1")
    # As from a terminal: a shell that runs the tests in the background ignores SIGINT for them,
    # and a process started with it ignored keeps ignoring it.
    process = subprocess.Popen([sys.executable, "-m", "breakscan", "--no-cache", "--format", "json", str(model)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    worker = int(marker.read_text())  # the worker running `slow`, which sleeps for two minutes
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # say where it hangs: faulthandler dumps every thread on SIGABRT
        process.send_signal(signal.SIGABRT)
        pytest.fail(f"no exit 60 s after Ctrl-C; its threads:\n{process.communicate(timeout=30)[1][-6000:]}")
    assert process.returncode == 130, stderr
    assert time.monotonic() - started < 30
    assert "interrupted: 1 target(s) finished, 1 did not" in stderr and "Traceback" not in stderr
    [finished] = json.loads(stdout)["targets"]
    assert (finished["name"], finished["status"]) == ("double", "ok")
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)


@pytest.mark.slow
def test_confirmation_shows_progress_on_a_terminal_and_none_when_piped(model):
    code, terminal, report = run_on_terminal(str(model), "--no-cache", "--entry", "Net()", "--format", "json",
                                             "--memory-limit", "none")
    assert code == 0 and json.loads(report)["targets"][0]["status"] == "ok"
    assert "[1/1] Net()" in terminal and "0:00:" in terminal  # the target and its elapsed time
    assert "importing the model" in terminal or "compiling under TorchDynamo" in terminal
    assert "breakscan: [1/1] Net(): 1 graph, 0 breaks" in terminal  # as it finished
    piped = breakscan(str(model), "--entry", "Net()", "--format", "json")
    assert piped.returncode == 0 and piped.stderr == ""


@pytest.mark.parametrize(("text", "size"), [("4GB", 4 << 30), ("512MB", 512 << 20), ("1.5g", 3 << 29),
                                            ("2GiB", 2 << 30), ("1048576", 1 << 20), ("none", 0)])
def test_memory_sizes(text, size):
    assert memory_size(text) == size


def test_a_size_that_is_not_one_is_a_usage_error():
    from breakscan.exits import UsageError

    with pytest.raises(UsageError, match="not a size"):
        build_parser().parse_args(["check", "--memory-limit", "lots", "m.py"])
