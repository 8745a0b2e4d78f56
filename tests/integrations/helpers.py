"""Sources and a command runner shared by the integration tests."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

from breakscan.cli import main
from tests.helpers import ROOT

BREAKING = textwrap.dedent("""\
    import torch


    @torch.compile
    def fn(x):
        return x * x.sum().item()
""")
CLEAN = BREAKING.replace("x * x.sum().item()", "x * 2")
# A model whose break is in a helper in another module: its result depends on both files.
MODEL_USING_HELPER = textwrap.dedent("""\
    import torch

    from helpers import normalise


    @torch.compile
    def fn(x):
        return normalise(x) + 1
""")
HELPER_BREAKING = "def normalise(x):\n    return x / x.abs().max().item()\n"
HELPER_CLEAN = "def normalise(x):\n    return x / x.abs().max()\n"
SHARED_SCHEMA = ROOT.parent / "shared" / "sarif-schema-2.1.0.json"


def breakscan(*args: str, cwd=None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command as users run it, with the environment's cache folder unless `env` says otherwise."""
    return subprocess.run([sys.executable, "-m", "breakscan", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=120)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd=None) -> Run:
    """The command in this process (no start-up cost), from folder `cwd`."""
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    try:
        os.chdir(cwd or previous)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(previous)
    return Run(code, out.getvalue(), err.getvalue())
