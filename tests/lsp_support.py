"""Pieces the pytest-lsp end-to-end tests share: the server, a plain client, opening a
document, asking for quick fixes and applying edits."""

from __future__ import annotations

import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from servelint.model import LineIndex


SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"])


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    """A client that does not answer workspace/configuration (import it into a test module
    to use it as that module's `client` fixture)."""
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(configuration=False))))
    yield
    await lsp_client.shutdown_session()


async def quick_fixes(client: LanguageClient, uri: str, diag) -> list[types.CodeAction]:
    """The quick-fix code actions the server offers for one diagnostic."""
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag])))
    return [a for a in actions or [] if a.kind == types.CodeActionKind.QuickFix]


async def open_doc(client: LanguageClient, uri: str, language: str, text: str, version: int = 1):
    """Open a document and return the diagnostics the server publishes for it."""
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def apply_lsp_edits(text: str, edits) -> str:
    """The text after LSP TextEdits (UTF-16 positions), applied from the end."""
    index = LineIndex(text)
    spans = sorted(((index.offset(e.range.start.line, e.range.start.character),
                     index.offset(e.range.end.line, e.range.end.character), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def start_session(client: LanguageClient, *, root=None, options=None, pull: bool = False,
                        settings: dict | None = None) -> types.InitializeResult:
    """Initialize with a workspace folder `root` (a Path), `initializationOptions`, and,
    when `pull`, a client that answers workspace/configuration with `settings`."""
    if settings is not None:
        client.set_configuration(settings, section="servelint")
    folders = [types.WorkspaceFolder(uri=root.as_uri(), name=root.name)] if root else None
    return await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            configuration=pull, workspace_folders=True)),
        root_uri=root.as_uri() if root else None, workspace_folders=folders,
        initialization_options=options))


async def diagnostics_until(client: LanguageClient, uri: str, predicate, timeout: float = 30):
    """Wait until the diagnostics published for `uri` satisfy `predicate` (given the list
    of codes), and return them. Fails with TimeoutError if they never do."""
    import asyncio

    async def wait():
        while True:
            diags = client.diagnostics.get(uri)
            if diags is not None and predicate(sorted(d.code for d in diags)):
                return diags
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), timeout)
