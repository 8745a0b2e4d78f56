"""`--format sarif`: valid SARIF 2.1.0 (the official schema), with what code scanning needs.

The official schema is read from `../shared/` beside the clone (CI has it); without it, the tests
that validate against it skip and say why, and the structural checks still run."""

import json

import jsonschema
import pytest

from breakscan.lint.rules import all_rules
from breakscan.model import Edit, FileError, Finding, Fix, Frame, Report, Span, TargetResult
from breakscan.report import render
from tests.helpers import ROOT
from tests.integrations.helpers import SHARED_SCHEMA, cli

HELPER_FINDING = Finding(
    rule="BS101", name="tensor-item", path="models/helpers.py", span=Span(4, 12, 4, 31),
    message="`.item()` copies a tensor value into Python", gb_ids=("GB0124",), severity="error",
    chain=("Model.forward", "normalise"), call_sites=(Frame("models/model.py", 12, "Model.forward"),),
    fix=Fix("keep it a tensor", "--- a\n+++ b\n", (Edit(Span(4, 12, 4, 31), "x.abs().max()"),)),
)
UNPREDICTED = Finding(
    rule="BS000", name="unpredicted-break", path="/abs/models/model.py", span=Span(20, 1, 20, 30),
    message="graph break no rule predicted: call to a C function", gb_ids=("GB0147",), severity="error",
    chain=("Model.forward", "step", "inner"), status="dynamic-only", count=3, target="Model()",
)
WARNING_WITHOUT_SITES = Finding(
    rule="BS201", name="tensor-if", path="models/model with space.py", span=Span(7, 8, 9, 2),
    message="`if` on a tensor's value", gb_ids=("GB0170",), severity="warning", chain=("fn", "helper"),
)


@pytest.fixture(scope="module")
def validator():
    if not SHARED_SCHEMA.is_file():
        pytest.skip(f"the official SARIF 2.1.0 schema is not at {SHARED_SCHEMA} (only CI has it)")
    schema = json.loads(SHARED_SCHEMA.read_text())
    if "properties" not in schema:  # the log's own schema is kept under definitions/Root in this copy
        schema = {**schema, "$ref": "#/definitions/Root"}
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def sarif(report: Report) -> dict:
    return json.loads(render("sarif", report))


def full_report() -> Report:
    return Report(
        version="0.1.0", files=3, findings=[HELPER_FINDING, UNPREDICTED, WARNING_WITHOUT_SITES],
        errors=[FileError("models/broken.py", "syntax error: expected ':'", 3, 9), FileError("gone.py", "cannot read")],
        unused_suppressions=[FileError("models/model.py", "unused suppression `breakscan: ignore[BS101]`", 5)],
        targets=[TargetResult(name="Model()", path="models/model.py", status="timeout", error="over 300 s")],
        torch_version="2.13.0",
    )


def test_a_full_report_is_valid_sarif(validator):
    log = sarif(full_report())
    validator.validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1


def test_the_schema_check_is_not_vacuous(validator):
    log = sarif(full_report())
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    log["runs"][0]["results"][1]["level"] = "fatal"
    del log["version"]
    assert len(list(validator.iter_errors(log))) == 3


def test_an_empty_report_is_valid_sarif(validator):
    log = sarif(Report(version="0.1.0"))
    validator.validate(log)
    assert log["runs"][0]["results"] == []


def test_every_rule_has_full_metadata():
    rules = sarif(Report(version="0.1.0"))["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["BS000", "BR000", *(rule.id for rule in all_rules())]
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["helpUri"].startswith("https://")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    item = next(rule for rule in rules if rule["id"] == "BS101")
    assert "## What it does" in item["help"]["markdown"]
    assert item["helpUri"].endswith("/gb0124.html") and item["properties"]["gbIds"] == ["GB0124"]


def test_results_carry_regions_chains_gb_ids_and_fixes():
    run = sarif(full_report())["runs"][0]
    helper, unpredicted, warning = run["results"]
    assert run["tool"]["driver"]["rules"][helper["ruleIndex"]]["id"] == "BS101"
    location = helper["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "models/helpers.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 4, "startColumn": 12, "endLine": 4, "endColumn": 31}
    assert helper["properties"]["gbIds"] == ["GB0124"] and helper["level"] == "error"

    steps = helper["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in steps] == [
        "Model.forward calls normalise", HELPER_FINDING.message]
    call = steps[0]["location"]["physicalLocation"]
    assert call["artifactLocation"]["uri"] == "models/model.py" and call["region"] == {"startLine": 12}

    [fix] = helper["fixes"]
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "models/helpers.py"
    assert change["replacements"] == [{"deletedRegion": location["region"],
                                       "insertedContent": {"text": "x.abs().max()"}}]

    assert unpredicted["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///abs/models/model.py"}
    assert unpredicted["properties"]["status"] == "dynamic-only" and unpredicted["properties"]["count"] == 3
    # Without call sites, the chain still reads as a flow of (logical) functions.
    steps = warning["codeFlows"][0]["threadFlows"][0]["locations"]
    assert steps[0]["location"]["logicalLocations"] == [{"fullyQualifiedName": "fn", "kind": "function"}]
    assert "physicalLocation" not in steps[0]["location"]
    assert warning["level"] == "warning" and "fixes" not in warning
    assert warning["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "models/model%20with%20space.py"


def test_errors_failed_targets_and_unused_suppressions_are_notifications():
    [invocation] = sarif(full_report())["runs"][0]["invocations"]
    notes = invocation["toolExecutionNotifications"]
    assert [(n["level"], n["message"]["text"][:12]) for n in notes] == [
        ("error", "syntax error"), ("error", "cannot read"), ("warning", "unused suppr"), ("error", "target Model")]
    assert notes[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 9}


def real_model_sarif() -> tuple[int, dict]:
    result = cli("--static", "--no-cache", "--format", "sarif", "examples/model.py", cwd=ROOT)
    return result.returncode, json.loads(result.stdout)


def test_the_cli_writes_valid_sarif_for_a_real_model(validator):
    validator.validate(real_model_sarif()[1])


def test_the_cli_writes_sarif_results_with_code_flows_for_a_real_model():
    returncode, log = real_model_sarif()
    as_json = cli("--static", "--no-cache", "--format", "json", "examples/model.py", cwd=ROOT)
    findings = json.loads(as_json.stdout)["findings"]
    assert log["version"] == "2.1.0" and log["runs"][0]["tool"]["driver"]["name"] == "breakscan"
    assert returncode == 1 and len(log["runs"][0]["results"]) == len(findings) > 0
    chained = [r for r in log["runs"][0]["results"] if len(r["properties"]["chain"]) > 1]
    assert chained and all("physicalLocation" in r["codeFlows"][0]["threadFlows"][0]["locations"][0]["location"]
                           for r in chained)
