"""`breakscan fix`: safe fixes in place, `--unsafe`, `--diff`, rounds, exit codes, and never a
file left that does not parse."""

from __future__ import annotations

import ast
import textwrap

import pytest

from breakscan.cli import main
from breakscan.fixes import apply
from breakscan.model import Edit, Finding, Fix, Span

MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class M(nn.Module):
        def forward(self, x):
            torch._dynamo.graph_break()
            s = x.sum().item()
            if x.sum() > 0:
                y = x * 2
            else:
                y = x - 1
            return y * s


    model = torch.compile(M())
""").lstrip()


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def test_safe_fixes_are_applied_in_place_and_unsafe_ones_left(model, capsys):
    assert main(["fix", str(model)]) == 1  # the .item() and the branch remain
    text = model.read_text()
    assert "graph_break" not in text and ".item()" in text
    out, err = capsys.readouterr()
    assert "BS101" in out and "BS201" in out and "fixed 1 finding in 1 file; 2 remain" in err
    assert "2 with an unsafe fix: --unsafe applies them" in err


def test_unsafe_fixes_too_until_nothing_remains(model, capsys):
    assert main(["fix", "--unsafe", str(model)]) == 0
    text = model.read_text()
    assert "s = x.sum().detach()\n" in text and "y = torch.where(x.sum() > 0, x * 2, x - 1)" in text
    ast.parse(text)
    assert "fixed 3 findings in 1 file; 0 remain" in capsys.readouterr().err
    assert main(["fix", "--unsafe", str(model)]) == 0 and model.read_text() == text  # nothing more to do


def test_diff_changes_nothing(model, capsys):
    assert main(["fix", "--diff", "--unsafe", str(model)]) == 1
    assert model.read_text() == MODEL
    out = capsys.readouterr().out
    assert out.startswith(f"--- {model}\n+++ {model}\n")
    assert "-        torch._dynamo.graph_break()\n" in out and "+        s = x.sum().detach()\n" in out


def test_a_result_that_does_not_parse_is_never_written(model, monkeypatch, capsys):
    def broken(path, text, config, allowed):
        return apply.FileFixes(path, text, text.replace("def forward", "def forward("))

    monkeypatch.setattr(apply, "fix_text", broken)
    assert main(["fix", str(model)]) == 1
    assert model.read_text() == MODEL
    assert "not fixed, left as it was" in capsys.readouterr().out
    assert not [p for p in model.parent.iterdir() if p.name.startswith(".breakscan-")]  # no temporary left


def test_a_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["fix", str(tmp_path / "nope.py")]) == 2
    assert "path not found" in capsys.readouterr().err


def _finding(line: int, edit: Edit, applicability: str = "safe", path: str = "m.py") -> Finding:
    fix = Fix("f", None, (edit,), applicability, path)  # type: ignore[arg-type]
    return Finding("BS901", "n", path, Span(line, 1, line, 2), "", (), "error", fix=fix)


def test_one_round_takes_fixes_whose_edits_do_not_touch():
    first = _finding(1, Edit(Span(1, 1, 2, 1), ""))
    overlapping = _finding(1, Edit(Span(1, 5, 1, 9), "x"))
    same_insertion = _finding(3, Edit(Span(1, 1, 1, 1), "import torch\n"))
    apart = _finding(4, Edit(Span(4, 1, 4, 3), "y"))
    unsafe = _finding(5, Edit(Span(5, 1, 5, 3), "z"), "unsafe")
    elsewhere = _finding(6, Edit(Span(6, 1, 6, 3), "z"), path="other.py")
    chosen = apply.applicable([first, overlapping, same_insertion, apart, unsafe, elsewhere], "m.py", ("safe",))
    assert chosen == [first, apart]
    assert apply.applicable([unsafe], "m.py", ("safe", "unsafe")) == [unsafe]
