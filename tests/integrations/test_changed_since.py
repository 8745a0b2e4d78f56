"""`--changed-since REF` lints only the Python files git says changed since REF."""

import json

from tests.integrations.git_repo import init_repo, write
from tests.integrations.helpers import BREAKING, CLEAN, cli


def linted(result) -> tuple[set[str], int]:
    report = json.loads(result.stdout)
    return {f["path"] for f in report["findings"]}, report["summary"]["files"]


def test_only_changed_and_new_files_are_linted(tmp_path):
    repo = init_repo(tmp_path / "repo", {
        "src/old_break.py": BREAKING, "src/edited.py": CLEAN, "src/untouched.py": CLEAN, "other/elsewhere.py": CLEAN,
    })
    write(repo, {
        "src/edited.py": BREAKING,        # modified, not staged
        "src/new.py": BREAKING,           # untracked
        "src/build/generated.py": BREAKING,  # untracked but excluded by default
        "other/elsewhere.py": BREAKING,   # changed, but outside the PATH given
        "src/notes.txt": "not python",
    })
    result = cli("--static", "--no-cache", "--format", "json", "--changed-since", "HEAD", "src", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert linted(result) == ({"src/edited.py", "src/new.py"}, 2)
    everything = cli("--static", "--no-cache", "--format", "json", "src", cwd=repo)
    assert "src/old_break.py" in linted(everything)[0]


def test_nothing_changed_is_a_clean_run(tmp_path):
    repo = init_repo(tmp_path / "repo", {"model.py": BREAKING})
    result = cli("--static", "--no-cache", "--format", "json", "--changed-since", "main", ".", cwd=repo)
    assert result.returncode == 0
    assert linted(result) == (set(), 0)


def test_a_file_named_directly_counts_when_changed(tmp_path):
    repo = init_repo(tmp_path / "repo", {"model.py": CLEAN})
    write(repo, {"model.py": BREAKING})
    result = cli("--static", "--no-cache", "--format", "json", "--changed-since", "HEAD", "model.py", cwd=repo)
    assert linted(result) == ({"model.py"}, 1)


def test_bad_ref_and_no_repository_are_usage_errors(tmp_path):
    repo = init_repo(tmp_path / "repo", {"model.py": CLEAN})
    bad_ref = cli("--static", "--changed-since", "no-such-branch", ".", cwd=repo)
    assert bad_ref.returncode == 2 and "no-such-branch" in bad_ref.stderr
    option_like = cli("--static", "--changed-since=--output=x", ".", cwd=repo)
    assert option_like.returncode == 2 and "not a git ref" in option_like.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    (outside / "model.py").write_text(CLEAN)
    not_a_repo = cli("--static", "--changed-since", "HEAD", ".", cwd=outside)
    assert not_a_repo.returncode == 2 and "--changed-since" in not_a_repo.stderr
