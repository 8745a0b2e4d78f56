"""`breakscan lsp` end to end: pygls's client talks to the server over stdio."""

import asyncio
import textwrap

from lsprotocol import types

from tests.integrations.lsp_client import Session, apply

HELPER = textwrap.dedent("""
    def batch_size(x):
        return x.shape[0]
""").lstrip()

CLEAN = textwrap.dedent("""
    import torch
    from torch import nn

    from helpers import batch_size


    class Model(nn.Module):
        def forward(self, x):
            return x * 2
""").lstrip()

# Line 9 branches on tensor data; line 11 on a size, known only by reading the helper's file.
BREAKING = CLEAN.replace("return x * 2", """if x.sum() > 0:
            x = x * 2
        if batch_size(x) > 2:
            x = x + 1
        return x""")


def run(coroutine):
    return asyncio.run(coroutine)


def test_diagnostics_come_from_the_buffer_on_open_change_and_save(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPER)
    model = tmp_path / "model.py"
    model.write_text(CLEAN)  # the disk has no break: only the buffer does

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open(model, BREAKING)
            opened = await session.diagnostics(uri)
            session.replace_text(uri, CLEAN)
            changed = await session.diagnostics(uri)
            session.replace_text(uri, BREAKING)
            model.write_text(BREAKING)
            session.save(uri)
            saved = await session.diagnostics(uri)
            return opened, changed, saved

    opened, changed, saved = run(scenario())
    [branch] = opened
    assert branch.code == "BS201" and branch.source == "breakscan"
    assert branch.range == types.Range(types.Position(8, 11), types.Position(8, 22))  # `x.sum() > 0`, 0-based
    assert branch.severity == types.DiagnosticSeverity.Error
    assert branch.code_description.href.startswith("https://")
    assert changed == []
    assert [(d.code, d.range.start.line) for d in saved] == [("BS201", 8)]


def test_hover_shows_the_rule_docs_and_a_suppression_silences_it(tmp_path):
    model = tmp_path / "model.py"
    source = CLEAN.replace("return x * 2", "return x * x.sum().item()")

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open(model, source)
            [diagnostic] = await session.diagnostics(uri)
            start = diagnostic.range.start
            hover = await session.hover(uri, start.line, start.character + 1)
            nothing = await session.hover(uri, 0, 0)
            actions = await session.code_actions(uri, diagnostic)
            suppress = next(a for a in actions if a.title.startswith("Suppress"))
            edited = apply(source, suppress.edit.document_changes[0].edits)
            session.replace_text(uri, edited)
            return diagnostic, hover, nothing, edited, await session.diagnostics(uri)

    diagnostic, hover, nothing, edited, after = run(scenario())
    assert diagnostic.code == "BS101"
    assert "BS101 tensor-item" in hover.contents.value
    assert "## What it does" in hover.contents.value and "## Use instead" in hover.contents.value
    assert nothing is None
    assert "return x * x.sum().item()  # breakscan: ignore[BS101]" in edited
    assert after == []


def test_exact_fix_is_offered_as_a_code_action(tmp_path):
    model = tmp_path / "model.py"
    source = CLEAN.replace("return x * 2", "y = x * 2\n        torch._dynamo.graph_break()\n        return y")

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open(model, source)
            [diagnostic] = await session.diagnostics(uri)
            actions = await session.code_actions(uri, diagnostic)
            fix = next(a for a in actions if a.is_preferred)
            fixed = apply(source, fix.edit.document_changes[0].edits)
            session.replace_text(uri, fixed)
            return diagnostic, fix, fixed, await session.diagnostics(uri)

    diagnostic, fix, fixed, after = run(scenario())
    assert diagnostic.code == "BS901"
    assert fix.kind == types.CodeActionKind.QuickFix
    assert "graph_break" not in fixed and "return y" in fixed
    assert after == []


def test_fix_all_applies_every_safe_fix_of_the_document_as_on_save(tmp_path):
    model = tmp_path / "model.py"
    source = CLEAN.replace("return x * 2", "torch._dynamo.graph_break()\n        y = x * 2\n"
                                           "        torch._dynamo.graph_break()\n        return y")

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open(model, source)
            first, _ = await session.diagnostics(uri)
            on_save = await session.code_actions(uri, first, only=["source.fixAll"])
            everything = await session.code_actions(uri, first)
            fixed = apply(source, on_save[0].edit.document_changes[0].edits)
            session.replace_text(uri, fixed)
            return on_save, everything, fixed, await session.diagnostics(uri)

    on_save, everything, fixed, after = run(scenario())
    assert [(a.kind, a.title) for a in on_save] == [("source.fixAll.breakscan", "breakscan: apply 2 safe fixes")]
    assert {a.kind for a in everything} == {types.CodeActionKind.QuickFix, "source.fixAll.breakscan"}
    assert "graph_break" not in fixed and after == []


def test_syntax_errors_while_typing_are_one_diagnostic(tmp_path):
    model = tmp_path / "model.py"

    async def scenario():
        async with Session(tmp_path) as session:
            uri = session.open(model, CLEAN)
            clean = await session.diagnostics(uri)
            end = types.Position(8, 20)
            session.edit(uri, types.TextEdit(types.Range(end, end), " +"))  # `return x * 2 +`
            return clean, await session.diagnostics(uri)

    clean, broken = run(scenario())
    assert clean == []
    [error] = broken
    assert error.severity == types.DiagnosticSeverity.Error and "syntax error" in error.message
    assert error.range.start.line == 8


def test_a_break_in_a_helper_file_shows_at_the_call_in_the_open_file(tmp_path):
    import shutil

    from tests.helpers import FIXTURES

    shutil.copytree(FIXTURES / "projects/namespace_tree", tmp_path / "project")
    model = tmp_path / "project/pkg/models/model.py"
    helpers = tmp_path / "project/pkg/utils/helpers.py"

    async def scenario():
        async with Session(tmp_path / "project") as session:  # only the model is open
            uri = session.open(model, model.read_text())
            return await session.diagnostics(uri)

    found = sorted(run(scenario()), key=lambda d: d.range.start.line)
    assert [(d.code, d.range.start.line) for d in found] == [("BS101", 13), ("BS401", 14)]  # the calls, 0-based
    item, printed = found
    assert "normalise" in item.message and "helpers.py:2" in item.message
    [related] = item.related_information
    assert related.location.uri == helpers.as_uri() and related.location.range.start.line == 1
    assert printed.related_information[0].location.range.start.line == 6
