"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning, the VS Code SARIF viewer and friends.

One run; the driver lists every rule with its documentation; each finding is a result with its
region, its call chain as a code flow, its GB ids as properties and, where the finding carries an
exact edit, a fix. Files that could not be analysed and targets that failed are tool notifications.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any
from urllib.parse import quote

from breakscan.model import TARGET_FAILURES, FileError, Finding, Frame, Report, Span
from breakscan.notebook import cell_position
from breakscan.report.summary import library_origin
from breakscan.rule_docs import RuleDoc, all_rule_docs

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def render(report: Report, options) -> str:
    return json.dumps(sarif_log(report), indent=2) + "\n"


def sarif_log(report: Report) -> dict:
    docs = all_rule_docs()
    rule_index = {doc.id: position for position, doc in enumerate(docs)}
    notifications = [_notification(error, "error") for error in report.errors]
    notifications += [_notification(warning, "warning") for warning in report.unused_suppressions]
    notifications += [
        {"level": "error", "message": {"text": f"target {t.name} {t.status}: {t.error or 'no detail'}"},
         "locations": [_location(t.path)]}
        for t in report.targets if t.status in TARGET_FAILURES
    ]
    run = {
        "tool": {"driver": {
            "name": "breakscan",
            "version": report.version,
            "semanticVersion": report.version,
            "rules": [_rule(doc) for doc in docs],
        }},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": pathlib.Path(os.getcwd()).as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(finding, rule_index) for finding in report.findings],
        "properties": {"torch": report.torch_version, "files": report.files},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _rule(doc: RuleDoc) -> dict:
    return {
        "id": doc.id,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": f"{doc.summary}. Fix: {doc.fix_hint}"},
        "help": {"text": doc.markdown, "markdown": doc.markdown},
        "helpUri": doc.help_uri,
        "defaultConfiguration": {"level": _LEVELS[doc.severity]},
        "properties": {"gbIds": list(doc.gb_ids), "tags": ["torch.compile", "graph-break"]},
    }


def _result(finding: Finding, rule_index: dict[str, int]) -> dict:
    origin = library_origin(finding)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVELS[finding.severity],
        "message": {"text": f"{finding.message} ({origin})" if origin else finding.message},
        "locations": [_location(finding.path, _region(finding.span))],
        "properties": {"gbIds": list(finding.gb_ids), "status": finding.status, "chain": list(finding.chain),
                       "count": finding.count, "target": finding.target},
    }
    cell = cell_position(finding.path, finding.span.line)
    if cell is not None:  # a notebook: the region counts lines over its code cells joined
        result["properties"].update(cell=cell[0], cellLine=cell[1])
        result["locations"][0]["message"] = {"text": f"cell {cell[0]}, line {cell[1]}"}
    if finding.library is not None:
        result["properties"]["library"] = finding.library.package
        reached = finding.library.reached_from
        if reached is not None:  # the user's call into the library
            related = _location(reached.path, {"startLine": reached.line})
            result["relatedLocations"] = [{"id": 0, **related, "message": {"text": f"reached from {reached.function}"}}]
    if finding.rule in rule_index:
        result["ruleIndex"] = rule_index[finding.rule]
    if len(finding.chain) > 1:
        result["codeFlows"] = [_code_flow(finding)]
    if finding.fix is not None and finding.fix.edits:
        result["fixes"] = [{
            "description": {"text": finding.fix.summary},
            "artifactChanges": [{
                "artifactLocation": _artifact(finding.fix.path or finding.path),
                "replacements": [{"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.replacement}}
                                 for edit in finding.fix.edits],
            }],
        }]
    return result


def _code_flow(finding: Finding) -> dict:
    """From the compiled root, call by call, to the construct that breaks."""
    steps = []
    known_sites = len(finding.call_sites) == len(finding.chain) - 1
    for position, (caller, callee) in enumerate(zip(finding.chain, finding.chain[1:])):
        site: Frame | None = finding.call_sites[position] if known_sites else None
        location = _location(site.path, {"startLine": site.line}) if site else {}
        location["logicalLocations"] = [{"fullyQualifiedName": caller, "kind": "function"}]
        location["message"] = {"text": f"{caller} calls {callee}"}
        steps.append({"location": location, "nestingLevel": position})
    final = _location(finding.path, _region(finding.span))
    final["logicalLocations"] = [{"fullyQualifiedName": finding.chain[-1], "kind": "function"}]
    final["message"] = {"text": finding.message}
    steps.append({"location": final, "nestingLevel": len(finding.chain) - 1})
    return {"message": {"text": " -> ".join(finding.chain)}, "threadFlows": [{"locations": steps}]}


def _notification(error: FileError, level: str) -> dict:
    region = {"startLine": error.line, "startColumn": error.column or 1} if error.line else None
    return {"level": level, "message": {"text": error.message}, "locations": [_location(error.path, region)]}


def _location(path: str, region: dict | None = None) -> dict:
    physical: dict = {"artifactLocation": _artifact(path)}
    if region is not None:
        physical["region"] = region
    return {"physicalLocation": physical}


def _artifact(path: str) -> dict:
    """Relative paths stay relative to the source root (what code scanning expects); others are file URIs."""
    if os.path.isabs(path):
        return {"uri": pathlib.Path(path).as_uri()}
    return {"uri": quote(pathlib.PurePath(os.path.normpath(path)).as_posix()), "uriBaseId": SOURCE_ROOT}


def _region(span: Span) -> dict:
    return {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line,
            "endColumn": span.end_column}
