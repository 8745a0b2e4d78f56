"""From lint results to LSP objects: diagnostics, hovers and quick fixes for one document.

Lint spans are 1-based with code-point columns; LSP ranges are 0-based in the client's position
encoding (UTF-16 unless negotiated), converted against the text the lint ran on.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from lsprotocol import types
from pygls.uris import from_fs_path as to_uri
from pygls.workspace.position_codec import PositionCodec

from breakscan.lint.linter import LintOutcome
from breakscan.lint.suppress import suppress_on_line
from breakscan.model import FileError, Finding, Fix, Frame, Span
from breakscan.rule_docs import gb_url, rule_doc

SOURCE = "breakscan"
# Line breaks as Python and LSP count them (not str.splitlines, which also splits at \f and others).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}


@dataclass
class Linted:
    """One lint of one document version, kept for hovers and code actions."""

    uri: str
    version: int | None
    text: str
    outcome: LintOutcome
    codec: PositionCodec

    @functools.cached_property
    def lines(self) -> list[str]:
        return _LINE_BREAK.split(self.text)

    def line_span(self, number: int) -> Span:
        """The whole of 1-based line `number`."""
        text = self.lines[number - 1] if number <= len(self.lines) else ""
        return Span(number, 1, number, len(text) + 1)

    @property
    def path(self) -> str:
        return self.outcome.files[0]

    def findings(self) -> list[Finding]:
        return [f for f in self.outcome.findings if f.path == self.path]

    def reached_elsewhere(self) -> list[tuple[Finding, Frame]]:
        """Findings in other files, each with the last call in this document on the way to it."""
        reached = []
        for finding in self.outcome.findings:
            if finding.path != self.path:
                here = [site for site in finding.call_sites if site.path == self.path]
                if here:
                    reached.append((finding, here[-1]))
        return reached

    def range(self, span: Span) -> types.Range:
        lines = self.lines
        start = self.codec.position_to_client_units(lines, types.Position(span.line - 1, span.column - 1))
        end = self.codec.position_to_client_units(lines, types.Position(span.end_line - 1, span.end_column - 1))
        return types.Range(start, end)

    def findings_at(self, position: types.Position) -> list[Finding]:
        return [f for f in self.findings() if _contains(self.range(f.span), position)]

    def findings_in(self, selection: types.Range) -> list[Finding]:
        return [f for f in self.findings() if _overlaps(self.range(f.span), selection)]

    def exact_fix(self, finding: Finding) -> Fix | None:
        """The finding's fix if it is an exact edit, else a refactor suggested for this text, if exact.

        Suggestions need positions for the whole module (several parses' worth), so they are
        computed only when the editor asks for code actions, not on every keystroke."""
        if finding.fix is not None and finding.fix.edits:
            return finding.fix
        from breakscan.fixes.refactor import suggest

        try:
            fix = suggest(self._refactorable, finding)
        except Exception:  # noqa: BLE001 - a suggester's bug costs one quick fix, never the server
            return None
        return fix if fix is not None and fix.edits else None

    @functools.cached_property
    def _refactorable(self):
        from breakscan.fixes.source import SourceModule

        return SourceModule(self.path, self.text)


def diagnostics(linted: Linted) -> list[types.Diagnostic]:
    found = [_finding_diagnostic(linted, finding) for finding in linted.findings()]
    found += [_reached_diagnostic(linted, finding, site) for finding, site in linted.reached_elsewhere()]
    found += [_error_diagnostic(linted, error) for error in linted.outcome.errors]
    for warning in (w for w in linted.outcome.unused_suppressions if w.path == linted.path):
        found.append(types.Diagnostic(
            range=linted.range(linted.line_span(warning.line or 1)), message=warning.message,
            severity=types.DiagnosticSeverity.Hint, source=SOURCE, tags=[types.DiagnosticTag.Unnecessary]))
    return found


def _finding_diagnostic(linted: Linted, finding: Finding) -> types.Diagnostic:
    message = finding.message
    if len(finding.chain) > 1:
        message += "\nvia " + " → ".join(finding.chain)
    doc = rule_doc(finding.rule)
    return types.Diagnostic(
        range=linted.range(finding.span),
        message=message,
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.rule,
        code_description=types.CodeDescription(href=doc.help_uri) if doc else None,
        source=SOURCE,
    )


def _reached_diagnostic(linted: Linted, finding: Finding, site: Frame) -> types.Diagnostic:
    """A break in another file that this document's code reaches: shown at the call that leads
    there, with the construct itself as related information."""
    where = f"{os.path.basename(finding.path)}:{finding.span.line}"
    callee = finding.chain[-1] if finding.chain else "a helper"
    origin = f" (package {finding.library.package})" if finding.library is not None else ""
    line = linted.lines[site.line - 1] if site.line <= len(linted.lines) else ""
    indent = len(line) - len(line.lstrip())
    doc = rule_doc(finding.rule)
    return types.Diagnostic(
        range=linted.range(Span(site.line, indent + 1, site.line, len(line.rstrip()) + 1)),
        message=f"this call reaches `{callee}`{origin}, which breaks the graph at {where}: {finding.message}",
        severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.rule,
        code_description=types.CodeDescription(href=doc.help_uri) if doc else None,
        source=SOURCE,
        related_information=[types.DiagnosticRelatedInformation(
            types.Location(to_uri(os.path.abspath(finding.path)),
                           types.Range(types.Position(finding.span.line - 1, finding.span.column - 1),
                                       types.Position(finding.span.end_line - 1, finding.span.end_column - 1))),
            f"{finding.rule} {finding.name}: {finding.message}")],
    )


def _error_diagnostic(linted: Linted, error: FileError) -> types.Diagnostic:
    line, column = (error.line or 1) - 1, (error.column or 1) - 1
    start = linted.codec.position_to_client_units(linted.lines, types.Position(line, column))
    return types.Diagnostic(range=types.Range(start, types.Position(start.line, start.character + 1)),
                            message=error.message, severity=types.DiagnosticSeverity.Error, source=SOURCE)


def hover(linted: Linted, position: types.Position) -> types.Hover | None:
    findings = linted.findings_at(position)
    if not findings:
        return None
    parts = []
    for finding in findings:
        doc = rule_doc(finding.rule)
        head = f"**{finding.rule} {finding.name}**: {finding.message}"
        if len(finding.chain) > 1:
            head += f"\n\nvia `{' → '.join(finding.chain)}`"
        if finding.fix is not None:
            head += f"\n\n**Fix:** {finding.fix.summary}"
        links = ", ".join(f"[{gb}]({gb_url(gb)})" for gb in finding.gb_ids)
        parts.append("\n\n".join(p for p in (head, doc.markdown if doc else "", links and f"PyTorch: {links}") if p))
    return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)),
                       range=linted.range(findings[0].span))


def code_actions(linted: Linted, selection: types.Range) -> list[types.CodeAction]:
    actions = []
    for finding in linted.findings_in(selection):
        fix = linted.exact_fix(finding)
        if fix is not None:
            edits = [types.TextEdit(linted.range(edit.span), edit.replacement) for edit in fix.edits]
            actions.append(_action(linted, f"{finding.rule}: {fix.summary}", edits, preferred=True))
        actions.append(_action(linted, f"Suppress {finding.rule} on this line",
                               [_suppression_edit(linted, finding)], preferred=False))
    return actions


# The editor's "fix all" on save (`editor.codeActionsOnSave`), as ruff names its own.
FIX_ALL = "source.fixAll.breakscan"


def fix_all_action(linted: Linted) -> types.CodeAction | None:
    """Every safe exact fix of the document whose edits do not touch another's, as one action:
    what `breakscan fix` applies in its first round."""
    from breakscan.fixes.apply import SAFE_ONLY, applicable

    with_fixes = []
    for finding in linted.findings():
        fix = linted.exact_fix(finding)
        if fix is not None:
            with_fixes.append(replace(finding, fix=fix))
    chosen = [f.fix for f in applicable(with_fixes, linted.path, SAFE_ONLY) if f.fix is not None]
    if not chosen:
        return None
    edits = [types.TextEdit(linted.range(edit.span), edit.replacement) for fix in chosen for edit in fix.edits]
    return _action(linted, f"breakscan: apply {len(chosen)} safe fix{'es' * (len(chosen) != 1)}", edits,
                   preferred=False, kind=FIX_ALL)


def _action(linted: Linted, title: str, edits: list[types.TextEdit], preferred: bool,
            kind: str = types.CodeActionKind.QuickFix) -> types.CodeAction:
    document = types.OptionalVersionedTextDocumentIdentifier(uri=linted.uri, version=linted.version)
    return types.CodeAction(
        title=title, kind=kind, is_preferred=preferred,
        edit=types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, edits)]),
    )


def _suppression_edit(linted: Linted, finding: Finding) -> types.TextEdit:
    """The comment goes on the finding's first line, or its last where the first ends inside a string."""
    number = finding.span.line
    if finding.span.end_line != number and not _parses_with_comment(linted.lines, number - 1, finding.rule):
        number = finding.span.end_line
    commented = suppress_on_line(linted.lines[number - 1], finding.rule)
    return types.TextEdit(linted.range(linted.line_span(number)), commented)


def _parses_with_comment(lines: Sequence[str], index: int, rule: str) -> bool:
    edited = [*lines[:index], suppress_on_line(lines[index], rule), *lines[index + 1:]]
    try:
        ast.parse("\n".join(edited))
    except (SyntaxError, ValueError):
        return False
    return True


def _contains(span: types.Range, position: types.Position) -> bool:
    start, end = span.start, span.end
    return (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character)


def _overlaps(span: types.Range, selection: types.Range) -> bool:
    return _contains(span, selection.start) or _contains(span, selection.end) or _contains(selection, span.start)
