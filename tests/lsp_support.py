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
