"""Pieces the pytest-lsp end-to-end tests share: opening a document and applying edits."""

from __future__ import annotations

from lsprotocol import types
from pytest_lsp import LanguageClient

from servelint.model import LineIndex


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
