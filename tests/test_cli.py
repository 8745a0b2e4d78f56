"""End-to-end: the `breakscan` command as users and CI call it, per format and exit code."""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import run_on_terminal
from tests.integrations.helpers import HELPER_BREAKING, MODEL_USING_HELPER, cli

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


@pytest.mark.slow  # starts breakscan processes
def test_exit_0_when_clean(project):
    result = breakscan("--static", "--no-cache", str(project / "good.py"))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # starts breakscan processes
def test_exit_1_with_findings_and_check_is_the_default_command(project):
    plain = breakscan("--static", "--no-cache", str(project))
    explicit = breakscan("check", "--static", "--no-cache", str(project))
    assert plain.returncode == explicit.returncode == 1
    assert plain.stdout == explicit.stdout
    assert "BS101" in plain.stdout


@pytest.mark.slow  # starts breakscan processes
@pytest.mark.parametrize("args", [["--format", "nope", "x.py"], ["--jobs", "0", "x.py"], [], ["check"],
                                  ["--inputs", "1", "x.py"], ["rules", "BS999"], ["--config", "missing.toml", "."]])
def test_exit_2_on_usage_errors(project, args):
    (project / "x.py").write_text(CLEAN)
    result = breakscan(*args, cwd=project)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # starts breakscan processes
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


@pytest.mark.slow  # starts breakscan processes
def test_paths_are_reported_as_reached_from_the_path_given(project):
    result = breakscan("--static", "--no-cache", "--format", "concise", ".", cwd=project)
    assert result.stdout.startswith("./bad.py:5:16: BS101 ")


@pytest.mark.slow  # starts breakscan processes
def test_concise_format(project):
    result = breakscan("--static", "--no-cache", "--format", "concise", str(project / "bad.py"))
    assert result.stdout.splitlines() == [f"{project / 'bad.py'}:5:16: BS101 "
                                          "`.item()` copies a tensor value into Python: the graph breaks here"]


@pytest.mark.slow  # starts breakscan processes
def test_text_format_without_colour_when_piped(project):
    result = breakscan("--static", "--no-cache", str(project / "bad.py"))
    assert "\x1b[" not in result.stdout
    assert "BS101" in result.stdout


@pytest.mark.slow  # starts breakscan processes
def test_output_file(project):
    out = project / "report.json"
    result = breakscan("--static", "--no-cache", "--format", "json", "-o", str(out), str(project))
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads(out.read_text())["summary"]["findings"] == 1


@pytest.mark.slow  # starts breakscan processes
def test_select_and_ignore(project):
    assert breakscan("--static", "--no-cache", "--ignore", "BS1", str(project)).returncode == 0
    assert breakscan("--static", "--no-cache", "--select", "BS2", str(project)).returncode == 0
    assert breakscan("--static", "--no-cache", "--select", "BS101", str(project)).returncode == 1


@pytest.mark.slow  # starts breakscan processes
def test_rules_command(project):
    listing = breakscan("rules")
    assert listing.returncode == 0 and "BS101" in listing.stdout and "tensor-item" in listing.stdout
    docs = breakscan("rules", "BS101")
    assert "## What it does" in docs.stdout and "GB0124" in docs.stdout
    assert breakscan("rules", "tensor-item").stdout == docs.stdout
    assert json.loads(breakscan("rules", "--format", "json").stdout)[0]["id"]


@pytest.mark.slow  # starts breakscan processes
def test_version():
    result = breakscan("--version")
    assert result.returncode == 0 and result.stdout.startswith("breakscan ")


# -- ruff-style options ----------------------------------------------------------------------
def test_exit_zero_keeps_the_report_and_exits_0(project):
    result = cli("--static", "--no-cache", "--exit-zero", "--format", "concise", str(project))
    assert result.returncode == 0 and "BS101" in result.stdout
    assert cli("--static", "--exit-zero", "--select", "BS1O1", str(project)).returncode == 2


def test_statistics_counts_findings_per_rule(project):
    (project / "more.py").write_text(BREAKING.replace("fn", "gn") + "\n@torch.compile\ndef hn(x):\n    print(x)\n")
    result = cli("--static", "--no-cache", "--statistics", str(project))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["2  BS101  tensor-item", "1  BS401  print-call"]
    as_json = json.loads(cli("--static", "--no-cache", "--statistics", "--format", "json", str(project)).stdout)
    assert as_json == [{"rule": "BS101", "name": "tensor-item", "count": 2},
                       {"rule": "BS401", "name": "print-call", "count": 1}]
    assert cli("--static", "--statistics", "--format", "sarif", str(project)).returncode == 2


def test_quiet_prints_findings_without_banner_or_tables(project):
    full = cli("--static", "--no-cache", str(project))
    quiet = cli("--static", "--no-cache", "--quiet", str(project))
    assert full.stdout.startswith("breakscan ") and "findings by rule" in full.stdout
    assert quiet.returncode == 1 and quiet.stdout.startswith(f"  {project / 'bad.py'}:5:16  BS101 tensor-item")
    assert "findings by rule" not in quiet.stdout and "breakscan " not in quiet.stdout


# -- standard input --------------------------------------------------------------------------
def lint_stdin(monkeypatch, text: str, *args: str):
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    return cli("--static", "--no-cache", "--format", "concise", *args)


def test_stdin_is_linted_as_the_file_it_stands_for(project, monkeypatch):
    name = str(project / "good.py")  # on disk: clean; on stdin: breaking
    result = lint_stdin(monkeypatch, BREAKING, "-", "--stdin-filename", name)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [f"{name}:5:16: BS101 "
                                          "`.item()` copies a tensor value into Python: the graph breaks here"]
    monkeypatch.setattr("sys.stdin", io.StringIO(BREAKING))
    text = cli("--static", "--no-cache", "-", "--stdin-filename", name)
    assert "❱ 5 │     return x * x.sum().item()" in text.stdout  # the frame shows stdin, not the file


def test_stdin_takes_config_and_neighbours_from_its_name(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.breakscan.per-file-ignores]\n"legacy/*.py" = ["BS101"]\n')
    (tmp_path / "legacy").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "helpers.py").write_text(HELPER_BREAKING)
    assert lint_stdin(monkeypatch, BREAKING, "-", "--stdin-filename", str(tmp_path / "legacy" / "m.py")).stdout == ""
    result = lint_stdin(monkeypatch, MODEL_USING_HELPER, "-", "--stdin-filename", str(tmp_path / "app" / "model.py"))
    assert result.stdout.startswith(f"{tmp_path / 'app' / 'helpers.py'}:2:") and " BS101 " in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["-"], "PATH - needs --stdin-filename"),
    (["x.py", "--stdin-filename", "x.py"], "--stdin-filename needs PATH -"),
    (["-", "x.py", "--stdin-filename", "x.py"], "cannot be combined"),
])
def test_stdin_usage_errors(project, monkeypatch, args, message):
    (project / "x.py").write_text(CLEAN)
    monkeypatch.chdir(project)
    result = lint_stdin(monkeypatch, CLEAN, *args)
    assert result.returncode == 2 and message in result.stderr


# -- robust output ---------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("args", [["rules"], ["--static", "--no-cache", "."]])
def test_a_closed_pipe_ends_quietly_with_the_usual_exit_code(project, args):
    process = subprocess.Popen([sys.executable, "-m", "breakscan", *args], cwd=project, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before anything is written, as `| head -0` does
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == (0 if args == ["rules"] else 1)
    assert stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize("columns_variable", [None, "0"])
def test_a_terminal_of_zero_columns_gets_a_readable_report(project, columns_variable):
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if columns_variable is not None:
        env["COLUMNS"] = columns_variable
    code, output, _ = run_on_terminal("--static", "--no-cache", "--no-color", str(project / "bad.py"),
                                      terminal="stdout", columns=0, env=env)
    assert code == 1
    lines = output.splitlines()
    assert "  bad.py:5:16  error" in lines and lines[-1] == "1 finding · 0 errors · 1 file"
    assert max(map(len, lines)) <= 80


@pytest.mark.parametrize(("source", "where", "message"), [
    ("import torch\n\n\ndef f(x)\n    return x\n", "4:9", "syntax error: expected ':'"),
    ("import torch\n\n@torch.compile\ndef f(x):\n    return g(x,\n", "5:13", "syntax error: '(' was never closed"),
    ("x = (1,\ny = 2\n", "1:5", "syntax error: '(' was never closed"),
])
def test_syntax_errors_are_reported_as_python_reports_them(tmp_path, source, where, message):
    (tmp_path / "broken.py").write_text(source)
    result = cli("--static", "--no-cache", "--format", "concise", str(tmp_path / "broken.py"))
    assert result.returncode == 1
    assert result.stdout == f"{tmp_path / 'broken.py'}:{where}: E999 {message}\n"


WARNING_ONLY = textwrap.dedent("""\
    import torch

    @torch.compile
    def fn(x):
        if x.grad_fn is not None:
            return x * 2
        return x
""")


@pytest.mark.slow  # starts breakscan processes
def test_fail_on_error_lets_warnings_pass_and_errors_fail(tmp_path):
    (tmp_path / "warns.py").write_text(WARNING_ONLY)
    (tmp_path / "bad.py").write_text(BREAKING)
    warned = breakscan("--static", "--no-cache", "--format", "json", str(tmp_path / "warns.py"))
    assert [f["severity"] for f in json.loads(warned.stdout)["findings"]] == ["warning"]
    assert warned.returncode == 1  # by default any finding fails
    assert breakscan("--static", "--no-cache", "--fail-on", "error", str(tmp_path / "warns.py")).returncode == 0
    assert breakscan("--static", "--no-cache", "--fail-on", "error", str(tmp_path / "bad.py")).returncode == 1
    (tmp_path / "pyproject.toml").write_text('[tool.breakscan]\nfail-on = "error"\n')
    assert breakscan("--static", "--no-cache", str(tmp_path / "warns.py")).returncode == 0
    assert breakscan("--static", "--no-cache", "--fail-on", "warning", str(tmp_path / "warns.py")).returncode == 1
    (tmp_path / "pyproject.toml").write_text('[tool.breakscan]\nfail-on = "sometimes"\n')
    refused = breakscan("--static", "--no-cache", str(tmp_path / "warns.py"))
    assert refused.returncode == 2 and "fail-on" in refused.stderr
