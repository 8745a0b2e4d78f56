"""The pre-commit hook, run by the real `pre-commit` in a throw-away repository."""

import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers import ROOT
from tests.integrations.git_repo import git, git_env, init_repo, write
from tests.integrations.helpers import BREAKING, CLEAN

MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def published(hook_id: str) -> dict:
    return next(hook for hook in yaml.safe_load(MANIFEST.read_text()) if hook["id"] == hook_id)


def test_the_manifest_is_valid_and_lint_only():
    checked = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", str(MANIFEST)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    hook, fixer = published("breakscan"), published("breakscan-fix")
    assert hook["types"] == fixer["types"] == ["python"]
    assert "--static" in hook["entry"].split()  # never imports or runs the code being committed
    assert fixer["entry"].split()[:2] == ["breakscan", "fix"] and "--verify" not in fixer["entry"]  # lint only too


def commit(repo: Path, message: str) -> subprocess.CompletedProcess:
    env = {**git_env(), "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"),
           # the hook's `breakscan` is this environment's
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, env=env, capture_output=True, text=True)


def test_a_breaking_commit_is_refused_and_a_clean_one_passes(tmp_path):
    hook = published("breakscan")
    # The hook exactly as published, except that pre-commit takes breakscan from this environment
    # instead of building one from the repository (which needs the network).
    config = {"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}
    repo = init_repo(tmp_path / "repo", {".pre-commit-config.yaml": yaml.safe_dump(config)})
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=git_env(),
                               capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr

    write(repo, {"models/model.py": BREAKING, "notes.md": "x.item() in prose is not Python"})
    git(repo, "add", "-A")
    refused = commit(repo, "add a model")
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "models/model.py" in output and "model.py:6:16" in output and "BS101 tensor-item" in output, output

    write(repo, {"models/model.py": CLEAN})
    git(repo, "add", "-A")
    accepted = commit(repo, "add a model, without the break")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert git(repo, "log", "--format=%s").stdout.splitlines() == ["add a model, without the break", "initial"]
    assert git(repo, "status", "--porcelain").stdout == ""  # the lint cache stays out of `git status`


def test_a_staged_model_is_refused_for_a_break_in_a_helper_that_is_not_staged(tmp_path):
    hook = published("breakscan")
    config = {"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}
    helper = "def normalise(scores):\n    return scores / scores.sum().item()\n"
    repo = init_repo(tmp_path / "repo", {".pre-commit-config.yaml": yaml.safe_dump(config), "pkg/__init__.py": "",
                                         "pkg/utils/helpers.py": helper})  # committed before the hook
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=git_env(), check=True,
                   capture_output=True)
    model = CLEAN.replace("import torch\n", "import torch\n\nfrom pkg.utils.helpers import normalise\n", 1)
    model = model.replace("return x * 2", "return normalise(x)")
    assert model != CLEAN and "normalise(x)" in model
    write(repo, {"pkg/models/model.py": model})
    git(repo, "add", "pkg/models/model.py")
    refused = commit(repo, "add a model")
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "pkg/utils/helpers.py" in output and "helpers.py:2:" in output and "BS101" in output, output
    assert "pkg/models/model.py:" in output, output  # the call in the staged file that reaches it


def test_the_fix_hook_applies_safe_fixes_and_stops_the_commit_to_review_them(tmp_path):
    config = {"repos": [{"repo": "local", "hooks": [{**published("breakscan-fix"), "language": "system"}]}]}
    repo = init_repo(tmp_path / "repo", {".pre-commit-config.yaml": yaml.safe_dump(config)})
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=git_env(), check=True,
                   capture_output=True)
    model = CLEAN.replace("return x * 2", "y = x * 2\n    torch._dynamo.graph_break()\n    return y")
    assert model != CLEAN
    write(repo, {"model.py": model})
    git(repo, "add", "model.py")
    stopped = commit(repo, "add a model")
    assert stopped.returncode != 0, stopped.stdout + stopped.stderr
    assert "files were modified by this hook" in stopped.stdout + stopped.stderr
    fixed = (repo / "model.py").read_text()
    assert "graph_break" not in fixed and "return y" in fixed
    git(repo, "add", "model.py")
    assert commit(repo, "add a model").returncode == 0
