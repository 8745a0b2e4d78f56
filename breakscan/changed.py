"""`--changed-since REF`: narrow the PATHs to Python files git says changed since REF."""

from __future__ import annotations

import os
import subprocess

from breakscan.cli import UsageError


def changed_files(paths: list[str], ref: str) -> list[str]:
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True)
        diff = subprocess.run(["git", "diff", "--name-only", "--diff-filter=ACMR", ref, "--"], capture_output=True,
                              text=True, check=True, cwd=top.stdout.strip())
        untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], capture_output=True,
                                   text=True, check=True, cwd=top.stdout.strip())
    except FileNotFoundError:
        raise UsageError("--changed-since needs git on PATH") from None
    except subprocess.CalledProcessError as error:
        raise UsageError(f"--changed-since {ref}: {error.stderr.strip() or 'git failed'}") from None
    root = top.stdout.strip()
    wanted = [os.path.abspath(p) for p in paths]
    selected = []
    for name in (diff.stdout + untracked.stdout).splitlines():
        full = os.path.join(root, name)
        if name.endswith(".py") and os.path.isfile(full) and any(
                full == w or full.startswith(w.rstrip(os.sep) + os.sep) for w in wanted):
            selected.append(os.path.relpath(full))
    return selected
