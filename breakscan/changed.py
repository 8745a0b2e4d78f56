"""`--changed-since REF`: narrow the PATHs to Python files git says changed since REF."""

from __future__ import annotations

import os
import subprocess

from breakscan.exits import UsageError
from breakscan.files import DEFAULT_EXCLUDE, SCANNED_SUFFIXES, is_excluded


def _git(arguments: list[str], cwd: str, ref: str) -> str:
    try:
        return subprocess.run(["git", *arguments], capture_output=True, text=True, check=True, cwd=cwd).stdout
    except FileNotFoundError:
        raise UsageError("--changed-since needs git on PATH") from None
    except subprocess.CalledProcessError as error:
        raise UsageError(f"--changed-since {ref}: {error.stderr.strip() or 'git failed'}") from None


def changed_files(paths: list[str], ref: str, exclude: tuple[str, ...] = ()) -> list[str]:
    """Python files under `paths` that differ from `ref` (committed, staged or not) or are untracked,
    minus excluded ones; as paths relative to the current folder."""
    if ref.startswith("-"):
        raise UsageError(f"--changed-since {ref}: not a git ref")  # git would read it as an option
    first = paths[0] if paths else "."
    anchor = first if os.path.isdir(first) else os.path.dirname(first) or "."
    root = _git(["rev-parse", "--show-toplevel"], anchor, ref).strip()
    # -z: names exactly as stored, not quoted for the terminal.
    names = _git(["diff", "-z", "--name-only", "--diff-filter=ACMR", ref, "--"], root, ref).split("\0")
    names += _git(["ls-files", "-z", "--others", "--exclude-standard"], root, ref).split("\0")
    wanted = [os.path.realpath(p) for p in paths]
    patterns = DEFAULT_EXCLUDE + tuple(exclude)
    selected = []
    for name in names:
        full = os.path.join(root, name)
        if not name.endswith(SCANNED_SUFFIXES) or not os.path.isfile(full):
            continue
        if full in wanted or any(full.startswith(folder.rstrip(os.sep) + os.sep)
                                 and not is_excluded(full, patterns, folder) for folder in wanted):
            selected.append(os.path.relpath(full))
    return selected
