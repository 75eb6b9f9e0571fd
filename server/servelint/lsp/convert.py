"""Where servelint meets lsprotocol types: ranges and text edits for the code-action
handler, and sending the serializer's diagnostics (servelint/serialize.py builds every
diagnostic, as plain dicts; nothing here builds one of its own)."""

from __future__ import annotations

import asyncio
import inspect
from functools import lru_cache

from lsprotocol import types as lsp

from servelint.model import Finding, LineIndex, Span
from servelint.serialize import (
    PUBLISH_DIAGNOSTICS,
    finding_diagnostics,
    publish_frame,
    publish_params,
)


def to_range(index: LineIndex, span: Span) -> lsp.Range:
    sl, sc = index.position(span.start)
    el, ec = index.position(span.end)
    return lsp.Range(lsp.Position(sl, sc), lsp.Position(el, ec))


def to_diagnostics(f: Finding, index: LineIndex, uri: str, version: int | None,
                   rules=None) -> list[lsp.Diagnostic]:
    """serialize.finding_diagnostics as lsprotocol objects (for code that wants them)."""
    converter = _converter()
    return [converter.structure(d, lsp.Diagnostic)
            for d in finding_diagnostics(f, index, uri, version, rules)]


@lru_cache(maxsize=1)
def _converter():
    from lsprotocol.converters import get_converter
    return get_converter()


def send_diagnostics(server, uri: str, version: int | None, diagnostics: list[dict]) -> None:
    """Publish the serializer's dicts as they are, the very message the fast start sends.

    pygls 2.1.1's `protocol.notify(method, params)` cannot take them: it wraps params in
    the method's lsprotocol notification type and cattrs then unstructures them as
    PublishDiagnosticsParams (AttributeError on a dict; pygls logs it and sends nothing).
    JsonRPCNotification, pygls's own carrier for untyped params, is sent as JSON unchanged;
    tests/test_bootstrap.py and tests/test_serialize.py check what arrives."""
    from pygls.protocol.json_rpc import JsonRPCNotification
    server.protocol._send_data(JsonRPCNotification(
        method=PUBLISH_DIAGNOSTICS, jsonrpc="2.0", params=publish_params(uri, version, diagnostics)))


def send_diagnostics_json(server, uri: str, version: int | None, diagnostics: list[bytes]) -> None:
    """send_diagnostics with the diagnostics already encoded (serialize.diagnostics_parts):
    the message is framed as pygls frames its own (serialize.publish_frame) and handed to
    pygls's writer as one block of bytes, so it leaves in one write."""
    protocol = server.protocol
    if protocol.writer is None:
        return
    res = protocol.writer.write(publish_frame(
        uri, version, diagnostics, f"{protocol.CONTENT_TYPE}; charset={protocol.CHARSET}"))
    if inspect.isawaitable(res):
        asyncio.ensure_future(res)


def text_edit(raw: dict) -> lsp.TextEdit:
    r = raw["range"]
    return lsp.TextEdit(
        range=lsp.Range(lsp.Position(r["start"]["line"], r["start"]["character"]),
                        lsp.Position(r["end"]["line"], r["end"]["character"])),
        new_text=raw["newText"])
