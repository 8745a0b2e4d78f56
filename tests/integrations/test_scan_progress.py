"""Progress of the static scan: `lint_paths` reports each file as it is linted, and the command shows
files done / total on a terminal, from about a second on, and nothing when piped."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest
from rich.console import Console

from breakscan.config import Config
from breakscan.lint.linter import lint_paths
from breakscan.progress import ScanProgress
from tests.helpers import run_on_terminal

# Plain functions: no compiled root, so each file costs about its parse.
MODULE = "import torch\n\n" + "".join(
    f"def f{i}(x):\n    y = x * {i}\n    if y.sum() > 0:\n        return y.relu()\n    return y + 1\n\n"
    for i in range(80))


def _files(folder, count: int) -> list[str]:
    for n in range(count):
        (folder / f"m{n:03d}.py").write_text(MODULE)
    return sorted(str(p) for p in folder.glob("*.py"))


def test_each_file_is_reported_once_with_the_count_done(tmp_path):
    paths = _files(tmp_path, 3)
    heard: list[tuple[str, int, int]] = []
    lint_paths([str(tmp_path)], Config(), jobs=1, on_file=lambda *call: heard.append(call))
    assert heard == [(path, done, 3) for done, path in enumerate(paths, 1)]


@pytest.mark.slow  # a process pool
def test_the_parallel_path_reports_every_file_as_its_batch_completes(tmp_path):
    paths = _files(tmp_path, 20)
    heard: list[tuple[str, int, int]] = []
    lint_paths([str(tmp_path)], Config(), jobs=2, on_file=lambda *call: heard.append(call))
    assert sorted(path for path, _, _ in heard) == paths
    assert [(done, total) for _, done, total in heard] == [(n, 20) for n in range(1, 21)]


def _shown(delay: float) -> str:
    screen = io.StringIO()
    with ScanProgress(Console(file=screen, force_terminal=True, width=100), delay=delay) as progress:
        progress.on_file("models/m003.py", 3, 10)
        if delay == 0:
            progress._timer.join()  # drawn
    return screen.getvalue()


def test_the_display_shows_files_done_and_the_file_and_waits_for_its_delay():
    shown = _shown(delay=0)
    assert "3/10" in shown and "models/m003.py" in shown
    assert _shown(delay=60) == ""  # a scan shorter than the delay shows nothing


@pytest.mark.slow  # starts breakscan on a scan of a few seconds
def test_a_long_scan_shows_progress_on_a_terminal_and_nothing_when_piped(tmp_path):
    _files(tmp_path, 1500)  # a few seconds even on a fast idle machine: the display waits for one
    code, terminal, report = run_on_terminal("--static", "--no-cache", "--format", "concise", str(tmp_path))
    assert code == 0 and report == ""
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)  # without colours and cursor moves
    assert "linting" in shown and "/1500 files" in shown and ".py" in shown
    piped = subprocess.run([sys.executable, "-m", "breakscan", "--static", "--no-cache", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == ""
