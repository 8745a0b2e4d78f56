"""Notebooks: code cells linted as one module, IPython syntax neutralised line for line, findings
reported by cell."""

from __future__ import annotations

import json
import shutil

import pytest

from breakscan.notebook import NotebookError, notebook_code
from tests.helpers import FIXTURES
from tests.integrations.helpers import cli

NOTEBOOK = FIXTURES / "notebooks" / "model.ipynb"
ITEM_LINE = "    return x * x.sum().item()"  # cell 3, line 4 of the fixture


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "model.ipynb"
    shutil.copy(NOTEBOOK, path)
    return path


def test_code_cells_are_joined_and_ipython_lines_keep_their_place():
    code = notebook_code(NOTEBOOK.read_text())
    lines = code.text.splitlines()
    assert code.cell_starts == (1, 4, 6, 10)
    assert lines[:3] == ["pass", "import torch", "pass"]  # %magic and !shell
    assert lines[3:5] == ["", ""]  # a %%bash cell is not Python
    assert lines[7] == "    pass" and lines[8] == ITEM_LINE  # `listing = !ls` keeps its indentation
    assert lines[9] == "pass" and lines[10] == "scale(torch.ones(3))"  # `scale?`
    assert code.cell_of(9) == (3, 4) and code.cell_of(1) == (1, 1) and code.cell_of(11) == (4, 2)


@pytest.mark.parametrize(("text", "message"), [("{not json", "not a valid notebook: Expecting property name"),
                                               ('{"cells": 3}', "no list of cells"),
                                               ('{"cells": [{"cell_type": "code", "source": 3}]}', "no source")])
def test_what_is_not_a_notebook_says_why(text, message):
    with pytest.raises(NotebookError, match=message):
        notebook_code(text)


def test_findings_are_reported_by_cell_in_concise_and_text(notebook):
    concise = cli("--static", "--no-cache", "--format", "concise", str(notebook))
    assert concise.returncode == 1
    assert concise.stdout.splitlines() == [
        f"{notebook}:cell 3:line 4:16: BS101 `.item()` copies a tensor value into Python: the graph breaks here"]
    text = cli("--static", "--no-cache", str(notebook)).stdout
    assert "  model.ipynb:cell 3:line 4:16  error" in text.splitlines()
    assert f"  ❱ 9 │ {ITEM_LINE}" in text  # the frame shows the code, not the notebook's JSON


def test_json_and_sarif_carry_the_cell(notebook):
    [finding] = json.loads(cli("--static", "--no-cache", "--format", "json", str(notebook)).stdout)["findings"]
    assert (finding["cell"], finding["cell_line"], finding["line"], finding["column"]) == (3, 4, 9, 16)
    [result] = json.loads(cli("--static", "--no-cache", "--format", "sarif", str(notebook)).stdout)["runs"][0]["results"]
    assert (result["properties"]["cell"], result["properties"]["cellLine"]) == (3, 4)
    assert result["locations"][0]["message"]["text"] == "cell 3, line 4"


def test_a_python_file_has_no_cell(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x.item()\n")
    [finding] = json.loads(cli("--static", "--no-cache", "--format", "json", str(tmp_path)).stdout)["findings"]
    assert finding["cell"] is None and finding["cell_line"] is None


def test_folders_include_notebooks_and_a_broken_one_is_an_error_entry(notebook):
    (notebook.parent / "broken.ipynb").write_text("{not json")
    result = cli("--static", "--no-cache", "--format", "json", str(notebook.parent))
    report = json.loads(result.stdout)
    assert result.returncode == 1 and report["summary"]["files"] == 2
    [error] = report["errors"]
    assert error["path"].endswith("broken.ipynb") and error["message"].startswith("not a valid notebook: ")
    assert [f["cell"] for f in report["findings"]] == [3]


def test_a_syntax_error_in_a_cell_is_reported_in_that_cell(tmp_path):
    document = json.loads(NOTEBOOK.read_text())
    document["cells"][4]["source"] = ["def broken(x)\n", "    return x\n"]
    (tmp_path / "nb.ipynb").write_text(json.dumps(document))
    result = cli("--static", "--no-cache", "--format", "concise", str(tmp_path / "nb.ipynb"))
    assert result.stdout.startswith(f"{tmp_path / 'nb.ipynb'}:cell 4:line 1:14: E999 syntax error: expected ':'")
