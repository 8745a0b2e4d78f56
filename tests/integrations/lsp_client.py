"""A real LSP client (pygls's) driving `breakscan lsp` over stdio, for the end-to-end tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

TIMEOUT = 30.0


class Session:
    """One server process; diagnostics it publishes are kept per URI, newest last."""

    def __init__(self, root: Path, command: tuple[str, ...] = (sys.executable, "-m", "breakscan", "lsp")):
        self.root = root
        self.command = command
        self.client = LanguageClient("breakscan-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self._arrived = asyncio.Event()
        self.versions: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self._arrived.set()

    async def __aenter__(self) -> "Session":
        await self.client.start_io(*self.command)
        folder = types.WorkspaceFolder(uri=self.root.as_uri(), name="project")
        await self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=self.root.as_uri(), workspace_folders=[folder]))
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri

    def replace_text(self, uri: str, text: str) -> None:
        """A full-text change, as a client without incremental sync sends it."""
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, uri: str, edit: types.TextEdit) -> None:
        """An incremental change, as editors send while typing."""
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics for the document's current version, once the server has published them."""
        async def current() -> list[types.Diagnostic]:
            while True:
                latest = self.published.get(uri, [])
                if latest and latest[-1].version == self.versions[uri]:
                    return list(latest[-1].diagnostics)
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(current(), TIMEOUT)

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri=uri), types.Position(line, character)))

    async def code_actions(self, uri: str, diagnostic: types.Diagnostic,
                           only: list[str] | None = None) -> list[types.CodeAction]:
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri=uri), diagnostic.range,
            types.CodeActionContext(diagnostics=[diagnostic], only=only)))


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (ASCII text, so UTF-16 columns are character offsets)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[:position.line]) + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text
