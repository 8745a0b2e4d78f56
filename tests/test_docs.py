"""docs/json-format.md lists every key of the JSON report, and the report emits every key it lists."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from breakscan.model import FileError, Frame, LibraryFrame, LibrarySite
from breakscan.report import RenderOptions, render
from breakscan.report.verify import attach_baseline
from tests.helpers import ROOT
from tests.integrations.helpers import BREAKING, cli
from tests.report.factories import model_report

JSON_DOC = ROOT / "docs" / "json-format.md"
NOT_EMITTED_YET = "*not emitted yet*"


def documented_keys() -> tuple[set[str], set[str]]:
    """Key paths (`findings[].fix.edits[].line`) from the doc's tables: those emitted today, and
    those of the contract marked as not emitted yet. A table belongs to the `### heading` above it,
    which names its object path(s) in backticks; `### Top level` is the report itself."""
    emitted, pending = set(), set()
    objects: list[str] = []
    for line in JSON_DOC.read_text().splitlines():
        if line.startswith("### "):
            objects = re.findall(r"`([^`]+)`", line) or [""]
        row = re.match(r"\| `([^`]+)` \|", line)
        if row and objects:
            for obj in objects:
                key = f"{obj}.{row.group(1)}" if obj else row.group(1)
                (pending if NOT_EMITTED_YET in line else emitted).add(key)
    return emitted, pending


def key_paths(value, path: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else key
            keys |= {child} | key_paths(item, child)
    elif isinstance(value, list):
        for item in value:
            keys |= key_paths(item, path + "[]")
    return keys


def every_branch_report(tmp_path) -> list[dict]:
    """JSON reports that between them take every optional branch: a finding in a followed library
    with call sites, errors and warnings, each graph format, and a verification with fixed, new and
    remaining breaks."""
    baseline_report = model_report(tmp_path)
    first = baseline_report.targets[0]
    baseline_report.targets[0] = replace(first, breaks=first.breaks[:1])  # the second break is "new"
    baseline = json.loads(render("json", baseline_report))
    baseline["targets"][1]["breaks"].append({**baseline["targets"][1]["breaks"][0], "line": 1, "gb_id": "GB0001"})
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))

    report = model_report(tmp_path)
    module = report.targets[0]
    inside = LibraryFrame("vqlib", "/site-packages/vqlib/codebook.py", 12, "Codebook.forward")
    report.targets[0] = replace(module, breaks=(replace(module.breaks[0], library=inside, graphs_before=1),
                                                *module.breaks[1:]))
    report.findings[0] = replace(report.findings[0], call_sites=(Frame("model.py", 13, "M.forward"),),
                                 library=LibrarySite("vqlib", Frame("model.py", 13, "M.forward")))
    report.errors = [FileError("bad.py", "expected ':'", 3, 9)]
    report.unused_suppressions = [FileError("model.py", "unused suppression", 5)]
    attach_baseline(report, str(tmp_path / "baseline.json"))
    delta = report.verification.targets
    assert all(any(getattr(t, kind) for t in delta) for kind in ("fixed", "new", "remaining"))
    return [json.loads(render("json", report, RenderOptions(graph_format=graph_format)))
            for graph_format in ("dot", "mermaid")]


def test_every_emitted_key_is_documented_and_every_documented_key_is_emitted(tmp_path):
    emitted = set().union(*(key_paths(data) for data in every_branch_report(tmp_path)))
    documented, pending = documented_keys()
    assert emitted - documented == set(), "keys missing from docs/json-format.md"
    assert documented - emitted == set(), "keys documented but never emitted"
    assert not pending & emitted, f"now emitted: remove {NOT_EMITTED_YET} from their rows"


def test_a_cli_report_only_has_documented_keys(tmp_path):
    (tmp_path / "bad.py").write_text(BREAKING)
    result = cli("--static", "--no-cache", "--format", "json", str(tmp_path))
    data = json.loads(result.stdout)
    assert data["findings"] and key_paths(data) <= documented_keys()[0]


def test_the_docs_parser_sees_the_tables():
    documented, pending = documented_keys()
    assert {"breakscan", "findings[].rule", "findings[].fix.edits[].replacement", "targets[].graph.nodes[].why",
            "verify.targets[].new[].what", "errors[].line", "warnings[].line"} <= documented
    assert {"targets[].recompiles", "targets[].recompiles[].guard"} <= documented
    assert "targets[].breaks[].library.package" in documented


CLI_DOC = ROOT / "docs" / "cli.md"


def command_options(command: str) -> set[str]:
    from breakscan.cli import build_parser

    subcommands = next(a for a in build_parser()._actions if a.dest == "command")
    parser = subcommands.choices[command]
    return {option for action in parser._actions for option in action.option_strings} - {"-h", "--help"}


def documented_options(command: str) -> set[str]:
    section = CLI_DOC.read_text().split(f"## Options of `{command}`")[1].split("\n## ")[0]
    first_cells = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]
    return {token.split()[0] for cell in first_cells for token in re.findall(r"`([^`]+)`", cell)}


@pytest.mark.parametrize("command", ["check", "fix"])
def test_every_option_is_documented_and_every_documented_one_exists(command):
    assert command_options(command) == documented_options(command)


def test_the_readme_links_the_docs_inside_the_repository():
    readme = (ROOT / "README.md").read_text()
    assert "CLI-CONTRACT.md" not in readme  # outside the repository: users cannot open it
    assert "docs/json-format.md" in readme and "docs/cli.md" in readme
