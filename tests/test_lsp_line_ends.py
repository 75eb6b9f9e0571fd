"""Positions agree with the protocol's line ends (\\n, \\r\\n and a lone \\r only) in the
server and the engine (issue 17, point 3): a document holding a form feed, NEL, U+2028 and
a lone CR is edited through the server the way an editor counts lines, and the diagnostics
the server publishes after each edit equal a fresh lint of the editor's text; fix-all's
result equals the command line's."""

import asyncio

from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_support import apply_lsp_edits, client  # noqa: F401 (the client fixture)
from servelint.engine import fix_all_text, lint
from servelint.model import LineIndex
from servelint.serialize import result_diagnostics

TEXT = ("#!/bin/bash\n"
        "# page\x0cbreak, a NEL\x85here, a line\u2028separator, all inside one line\n"
        "# an old Mac line end\rand more\n"
        "python3 -m sglang.launch_server --model-path m --tp_size 2 \\\n"
        "  --dtype fp16\n"
        "# \x0c\u2028\x85\n"
        "python3 -m sglang.launch_server --model-path m --dp_size 2\n")


def fresh(text: str, uri: str):
    result = lint(text, path="/tmp/x.sh", language_id="shellscript")
    return sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"])
                  for d in result_diagnostics(result, uri, None))


def published(client: LanguageClient, uri: str):
    return sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line,
                   d.range.end.character) for d in client.diagnostics.get(uri, []))


async def until_equal(client, uri, want, timeout=30.0):
    async def wait():
        while published(client, uri) != want:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    await asyncio.wait_for(wait(), timeout)


async def test_edits_below_unusual_line_breaks_land_where_the_editor_put_them(client: LanguageClient):
    uri = "file:///tmp/x.sh"
    text = TEXT
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1,
                                             text=text)))
    await until_equal(client, uri, fresh(text, uri))
    assert any(code == "SL002" for code, *_ in fresh(text, uri))
    # Replace each `_size` with `-size`, one edit at a time, at the editor's positions.
    version = 1
    while "_size" in text:
        at = text.index("_size")
        index = LineIndex(text)
        line, col = index.position(at)
        edit = types.TextEdit(range=types.Range(start=types.Position(line, col),
                                                end=types.Position(line, col + 1)), new_text="-")
        text = apply_lsp_edits(text, [edit])
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=edit.range, text="-")]))
        await until_equal(client, uri, fresh(text, uri))
    # fix-all over the protocol gives the command line's text
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll])))
    edits = [e for a in actions or [] if a.edit for e in a.edit.changes.get(uri, [])]
    expected, _ = fix_all_text(text, "/tmp/x.sh", "shellscript")
    assert apply_lsp_edits(text, edits) == expected
    assert "\x0c" in expected and "\u2028" in expected and "\x85" in expected and "\r" in expected


def test_the_engine_counts_lines_as_the_protocol_does():
    text = "a\rb\r\nc\nd\x0ce\u2028f\x85g"
    index = LineIndex(text)
    assert list(index.lsp_starts) == [0, 2, 5, 7]
    assert index.position(text.index("e")) == (3, 2)
    assert index.offset(3, 2) == text.index("e") and index.offset(1, 1) == text.index("\r\n")
    assert list(index.starts) == [0, 5, 7]  # the lines a shell reads: a lone \r ends none
