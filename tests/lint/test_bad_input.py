"""Bad input gets a clear error entry, never a traceback, and never stops the other files."""

import json
import os
import subprocess
import sys

import pytest

from breakscan.config import Config
from breakscan.lint.linter import lint_paths

BREAKING = "import torch\n\n@torch.compile\ndef fn(x):\n    return x.sum().item()\n"


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "breakscan", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def scan(tmp_path):
    return lint_paths([str(tmp_path)], Config(), jobs=1)


def errors_by_file(outcome):
    return {os.path.basename(e.path): e for e in outcome.errors}


def test_syntax_error_has_line_and_column_and_other_files_are_scanned(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\n\ndef forward(self, x:\n    return x\n")
    (tmp_path / "good.py").write_text(BREAKING)
    outcome = scan(tmp_path)
    error = errors_by_file(outcome)["bad.py"]
    assert error.message.startswith("syntax error") and error.line is not None and error.column is not None
    assert [os.path.basename(f.path) for f in outcome.findings] == ["good.py"]


def test_syntax_error_in_a_file_that_cannot_hold_compiled_code(tmp_path):
    (tmp_path / "util.py").write_text("def f(:\n    pass\n")
    assert errors_by_file(scan(tmp_path))["util.py"].line == 1


def test_encodings(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + BREAKING.encode() + b"s = '\xe9'\n")
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BREAKING.encode())
    (tmp_path / "undecodable.py").write_bytes(b"import torch\nname = '\xff\xfe'\n")
    (tmp_path / "bad_cookie.py").write_bytes(b"# coding: no-such-codec\nx = 1\n")
    outcome = scan(tmp_path)
    errors = errors_by_file(outcome)
    assert sorted({os.path.basename(f.path) for f in outcome.findings}) == ["bom.py", "latin.py"]
    assert "cannot decode as utf-8" in errors["undecodable.py"].message and errors["undecodable.py"].line == 2
    assert "no-such-codec" in errors["bad_cookie.py"].message


def test_nul_bytes_and_empty_files(tmp_path):
    (tmp_path / "nul.py").write_bytes(b"import torch\nx = 1\x00\n")
    (tmp_path / "empty.py").write_bytes(b"")
    outcome = scan(tmp_path)
    assert set(errors_by_file(outcome)) == {"nul.py"}
    assert errors_by_file(outcome)["nul.py"].line == 2


def test_deep_nesting_never_raises(tmp_path):
    (tmp_path / "parens.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    nested = "import torch\n\n@torch.compile\ndef fn(x):\n    y = " + "-(" * 150 + "x" + ")" * 150 + "\n    return y.item()\n"
    (tmp_path / "nested.py").write_text(nested)
    long_chain = "import torch\n\n@torch.compile\ndef fn(x):\n    y = x" + " + x" * 20000 + "\n    return y.item()\n"
    (tmp_path / "chain.py").write_text(long_chain)
    outcome = scan(tmp_path)
    errors = errors_by_file(outcome)
    assert "too many nested parentheses" in errors["parens.py"].message
    assert "operator chain" in errors["chain.py"].message
    assert {os.path.basename(f.path) for f in outcome.findings} == {"nested.py"}


def test_multi_megabyte_file(tmp_path):
    body = "".join(f"# generated table row {i}: " + "0123456789" * 8 + "\n" for i in range(30000))
    body += "".join(f"def helper_{i}(x):\n    return x * {i}\n\n" for i in range(500))
    (tmp_path / "big.py").write_text(BREAKING + body)
    assert os.path.getsize(tmp_path / "big.py") > 2_000_000
    outcome = scan(tmp_path)
    assert [f.line for f in outcome.findings] == [5] and not outcome.errors


def test_symlink_loops_and_broken_links(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(BREAKING)
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    outcome = scan(tmp_path)
    assert len(outcome.findings) == 1
    assert "broken symbolic link" in errors_by_file(outcome)["dangling.py"].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.py"
    path.write_text(BREAKING)
    path.chmod(0)
    assert "permission denied" in errors_by_file(scan(tmp_path))["secret.py"].message


def test_unreadable_file_as_root(tmp_path, monkeypatch):
    """Root reads everything, so simulate the OS refusing the read."""
    import builtins

    real_open = builtins.open
    path = tmp_path / "secret.py"
    path.write_text(BREAKING)

    def refusing_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    assert "permission denied" in errors_by_file(scan(tmp_path))["secret.py"].message


@pytest.mark.slow  # starts breakscan processes
def test_cli_reports_errors_in_json_without_traceback(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "nul.py").write_bytes(b"\x00")
    (tmp_path / "good.py").write_text(BREAKING)
    result = run_cli("--static", "--no-cache", "--format", "json", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert sorted(os.path.basename(e["path"]) for e in report["errors"]) == ["bad.py", "nul.py"]
    assert report["summary"] == {"files": 3, "findings": 1, "errors": 2, "targets": 0}


@pytest.mark.slow  # starts breakscan processes
def test_missing_path_is_a_usage_error(tmp_path):
    result = run_cli("--static", str(tmp_path / "nope.py"))
    assert result.returncode == 2 and "path not found" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # starts breakscan processes
def test_static_mode_never_imports_the_scanned_code(tmp_path):
    marker = tmp_path / "imported.marker"
    (tmp_path / "model.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n" + BREAKING + "BREAKSCAN_TARGETS = {'fn': 'torch.randn(3)'}\n")
    result = run_cli("--static", "--no-cache", str(tmp_path / "model.py"))
    assert result.returncode == 1, result.stderr
    assert not marker.exists()


def test_an_analysis_bug_on_one_file_is_an_error_entry_and_the_others_are_scanned(tmp_path, monkeypatch):
    from breakscan.lint.rules.control_flow.held_iterator import HeldIteratorAdvanced

    def broken(self, node, ctx):
        if "trips" in ctx.module.path:
            raise KeyError("a bug in a rule")

    monkeypatch.setattr(HeldIteratorAdvanced, "on_Call", broken)
    (tmp_path / "trips.py").write_text(BREAKING)
    (tmp_path / "good.py").write_text(BREAKING)
    outcome = scan(tmp_path)
    error = errors_by_file(outcome)["trips.py"]
    assert error.message.startswith("internal error while analysing this file (KeyError") and "report" in error.message
    assert [os.path.basename(f.path) for f in outcome.findings] == ["good.py"]
