"""A throw-away git repository for tests that need one."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# No user or system git config: tests must not depend on (or touch) the machine's settings.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git_env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV}


def git(repo: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *arguments], cwd=repo, env=git_env(), capture_output=True, text=True, check=True)


def init_repo(path: Path, files: dict[str, str]) -> Path:
    """A repository at `path` with `files` committed on branch main."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
