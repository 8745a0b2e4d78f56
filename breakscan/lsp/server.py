"""`breakscan lsp`: the lint as a language server over stdio.

Diagnostics on open, on save and, debounced, while typing; the lint reads the editor's buffers,
not the files on disk. Hover shows the rule's documentation; quick fixes add a suppression comment
or apply a finding's exact fix. Only the lint runs here: the server never imports the user's code
(nor torch).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from breakscan import __version__
from breakscan.config import Config, ConfigError, find_config, load_config
from breakscan.lint.buffer import lint_buffer
from breakscan.lint.linter import LintOutcome
from breakscan.lsp.convert import FIX_ALL, Linted, code_actions, diagnostics, fix_all_action, hover

# Long enough to skip the keystrokes of a word, short enough to feel immediate.
DEBOUNCE_SECONDS = 0.15


class BreakscanServer(LanguageServer):
    def __init__(self):
        super().__init__("breakscan", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.linted: dict[str, Linted] = {}
        self._pending: dict[str, asyncio.Task] = {}
        self._reported_config_errors: set[str] = set()
        # One lint at a time: a lint sets the process's recursion limit and uses every core it gets.
        self._lint_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="breakscan-lint")

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Lint `uri` after `delay` seconds, replacing a lint of it not yet started."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay))

    def forget(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.linted.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    async def _lint_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        if uri not in self.workspace.text_documents:
            return
        document = self.workspace.get_text_document(uri)
        version, path = document.version, os.path.abspath(document.path)
        buffers = {os.path.abspath(d.path): d.source for d in self.workspace.text_documents.values()}
        config = self._config(path)
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self._lint_thread, self._lint, path, buffers, config)
        if self._pending.get(uri) is asyncio.current_task():
            del self._pending[uri]
        if document.version != version or uri not in self.workspace.text_documents:
            return  # edited or closed meanwhile: a newer lint is on its way, or none is wanted
        linted = Linted(uri, version, buffers[path], outcome, self.workspace.position_codec)
        self.linted[uri] = linted
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics(linted), version=version))

    def _lint(self, path: str, buffers: dict[str, str], config: Config) -> LintOutcome:
        return lint_buffer(path, buffers, config)

    def _config(self, path: str) -> Config:
        found = find_config(path)
        if not found:
            return Config()
        try:
            return load_config(found)
        except ConfigError as error:
            if str(error) not in self._reported_config_errors:  # once, not on every keystroke
                self._reported_config_errors.add(str(error))
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"breakscan: {error}"))
            return Config()


server = BreakscanServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: BreakscanServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: BreakscanServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: BreakscanServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: BreakscanServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def on_hover(ls: BreakscanServer, params: types.HoverParams) -> types.Hover | None:
    linted = ls.linted.get(params.text_document.uri)
    return hover(linted, params.position) if linted else None


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
def on_code_action(ls: BreakscanServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes for the findings in the range, and "fix all safe" for the document; a client
    asking for some kinds only (`context.only`, as on save) gets those."""
    linted = ls.linted.get(params.text_document.uri)
    document = ls.workspace.get_text_document(params.text_document.uri)
    if linted is None or linted.version != document.version:
        return []  # edits computed for an older text would land in the wrong place
    only = params.context.only

    def wanted(kind: str) -> bool:
        return not only or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)

    actions = code_actions(linted, params.range) if wanted(types.CodeActionKind.QuickFix) else []
    fix_all = fix_all_action(linted) if wanted(FIX_ALL) else None
    return actions + ([fix_all] if fix_all else [])


def serve() -> None:
    server.start_io()
