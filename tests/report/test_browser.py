"""The HTML report in a real headless browser (Chromium from the distribution: on Debian,
`apt-get install -y chromium`): it loads without console messages and the screenshot shows the
chain of graphs and breaks. Skipped when Chromium is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from breakscan.report import RenderOptions, render
from tests.report.factories import model_report
from tests.report.pngpixels import colours

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")

GRAPH_FILL, BREAK_FILL = (0xE8, 0xF5, 0xE9), (0xFF, 0xEB, 0xEE)  # html_style.py: svg.chain .graph/.break rect


def _open(page: Path, folder: Path) -> tuple[list[str], bytes]:
    """Load `page` headless with no network and a fresh profile: (console lines, screenshot PNG)."""
    shot = folder / "shot.png"
    run = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync", f"--user-data-dir={folder / 'profile'}",
         "--enable-logging=stderr", "--v=0", "--window-size=800,700", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=90)
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return console, shot.read_bytes()


def test_console_messages_are_caught(tmp_path):
    """The check below can fail: a page that logs an error is seen as one."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><p>x</p><script>console.error('boom')</script>")
    console, _ = _open(page, tmp_path)
    assert any("boom" in line for line in console)


def test_report_loads_cleanly_and_shows_the_chain(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render("html", model_report(tmp_path), RenderOptions()))
    console, png = _open(page, tmp_path)
    assert console == []
    pixels = colours(png)
    assert pixels[GRAPH_FILL] > 5000 and pixels[BREAK_FILL] > 5000  # the chain's boxes are drawn
