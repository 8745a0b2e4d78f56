"""Shared test helpers: lint a source string as a file, read `# expect:` markers from fixtures."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

from breakscan.config import Config
from breakscan.lint.linter import LintOutcome, lint_paths

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def lint_source(tmp_path: Path, source: str, name: str = "example.py", **options) -> LintOutcome:
    path = tmp_path / name
    path.write_text(source)
    return lint_paths([str(path)], Config(), jobs=1, **options)


def expected_findings(path: Path) -> set[tuple[int, str]]:
    """`# expect: BS101, BS201` at the end of a line: those rules must report on that line."""
    expected = set()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = _EXPECT.search(line)
        if match:
            expected.update((number, rule.strip()) for rule in match.group(1).split(",") if rule.strip())
    return expected


def run_on_terminal(*args: str, terminal: str = "stderr", columns: int = 100, env: dict[str, str] | None = None,
                    cwd=None) -> tuple[int, str, str]:
    """`python -m breakscan ARGS` with `terminal` ("stdout" or "stderr") on a pseudo-terminal of
    `columns` and the other stream on a file: (exit code, what the terminal got, what the file got)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with tempfile.TemporaryFile() as other:
        streams = {"stdout": follower, "stderr": other} if terminal == "stdout" else {"stdout": other, "stderr": follower}
        process = subprocess.Popen([sys.executable, "-m", "breakscan", *args], env=env, cwd=cwd, **streams)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            shown += chunk
        os.close(leader)
        code = process.wait(timeout=300)
        other.seek(0)
        return code, shown.decode(errors="replace"), other.read().decode(errors="replace")
