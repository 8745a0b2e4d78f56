"""End-to-end: the `breakscan` command as users and CI call it, per format and exit code."""

import json
import subprocess
import sys
import textwrap

import pytest

BREAKING = textwrap.dedent("""\
    import torch

    @torch.compile
    def fn(x):
        return x * x.sum().item()
""")
CLEAN = "import torch\n\n@torch.compile\ndef fn(x):\n    return x * 2\n"


def breakscan(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "breakscan", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BREAKING)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_exit_0_when_clean(project):
    result = breakscan("--static", "--no-cache", str(project / "good.py"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_exit_1_with_findings_and_check_is_the_default_command(project):
    plain = breakscan("--static", "--no-cache", str(project))
    explicit = breakscan("check", "--static", "--no-cache", str(project))
    assert plain.returncode == explicit.returncode == 1
    assert plain.stdout == explicit.stdout
    assert "BS101" in plain.stdout


@pytest.mark.parametrize("args", [["--format", "nope", "x.py"], ["--jobs", "0", "x.py"], [], ["check"],
                                  ["--inputs", "1", "x.py"], ["rules", "BS999"], ["--config", "missing.toml", "."]])
def test_exit_2_on_usage_errors(project, args):
    (project / "x.py").write_text(CLEAN)
    result = breakscan(*args, cwd=project)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_json_follows_the_contract(project):
    result = breakscan("--static", "--no-cache", "--format", "json", str(project))
    report = json.loads(result.stdout)
    assert set(report) >= {"breakscan", "torch", "findings", "targets", "errors", "summary"}
    assert report["torch"] is None and report["targets"] == []
    [finding] = report["findings"]
    assert finding["rule"] == "BS101" and finding["name"] == "tensor-item"
    assert finding["path"] == str(project / "bad.py")
    assert (finding["line"], finding["column"]) == (5, 16)
    assert (finding["end_line"], finding["end_column"]) == (5, 30)
    assert finding["gb_ids"] == ["GB0124"] and finding["severity"] == "error"
    assert finding["chain"] == ["fn"] and finding["status"] == "static-only"
    assert finding["fix"]["summary"]
    assert report["summary"] == {"files": 2, "findings": 1, "errors": 0, "targets": 0}


def test_paths_are_reported_as_reached_from_the_path_given(project):
    result = breakscan("--static", "--no-cache", "--format", "concise", ".", cwd=project)
    assert result.stdout.startswith("./bad.py:5:16: BS101 ")


def test_concise_format(project):
    result = breakscan("--static", "--no-cache", "--format", "concise", str(project / "bad.py"))
    assert result.stdout.splitlines() == [f"{project / 'bad.py'}:5:16: BS101 "
                                          "`.item()` copies a tensor value into Python: the graph breaks here"]


def test_text_format_without_colour_when_piped(project):
    result = breakscan("--static", "--no-cache", str(project / "bad.py"))
    assert "\x1b[" not in result.stdout
    assert "BS101" in result.stdout


def test_output_file(project):
    out = project / "report.json"
    result = breakscan("--static", "--no-cache", "--format", "json", "-o", str(out), str(project))
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads(out.read_text())["summary"]["findings"] == 1


def test_select_and_ignore(project):
    assert breakscan("--static", "--no-cache", "--ignore", "BS1", str(project)).returncode == 0
    assert breakscan("--static", "--no-cache", "--select", "BS2", str(project)).returncode == 0
    assert breakscan("--static", "--no-cache", "--select", "BS101", str(project)).returncode == 1


def test_rules_command(project):
    listing = breakscan("rules")
    assert listing.returncode == 0 and "BS101" in listing.stdout and "tensor-item" in listing.stdout
    docs = breakscan("rules", "BS101")
    assert "## What it does" in docs.stdout and "GB0124" in docs.stdout
    assert breakscan("rules", "tensor-item").stdout == docs.stdout
    assert json.loads(breakscan("rules", "--format", "json").stdout)[0]["id"]


def test_version():
    result = breakscan("--version")
    assert result.returncode == 0 and result.stdout.startswith("breakscan ")
