"""A wall-clock budget per lint in the server: past it, the launches left are not checked,
the user is told once (window/showMessage) and the log says from which line; the server
goes on serving. The budget is 10 s; $SERVELINT_LINT_BUDGET sets it (0 here: every lint
runs out before its first launch)."""

import asyncio
import os
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import diagnostics_until

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2\n"


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "servelint", "lsp"],
    server_env={**os.environ, "SERVELINT_LINT_BUDGET": "0"}))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def did_open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=version,
                                             text=text)))


async def test_a_lint_past_its_budget_stops_and_says_so(client: LanguageClient, tmp_path):
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    first = (tmp_path / "first.sh").as_uri()  # the fast start lints the first document whole
    did_open(client, first, LAUNCH)
    await diagnostics_until(client, first, lambda codes: codes == ["SL002"])
    uri = (tmp_path / "big.sh").as_uri()
    did_open(client, uri, "#!/bin/bash\n" + LAUNCH * 3)
    await diagnostics_until(client, uri, lambda codes: codes == [])

    async def told():
        while not [m for m in client.messages if "time budget" in m.message]:
            await asyncio.sleep(0.05)
    await asyncio.wait_for(told(), 30)
    shown = [m for m in client.messages if "time budget" in m.message]
    assert len(shown) == 1 and shown[0].type == types.MessageType.Warning
    assert "3 of 3 launches, from line 2 on, were not checked" in shown[0].message
    # Once per document, however many lints run out.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="#!/bin/bash\n" + LAUNCH * 4)]))
    other = (tmp_path / "other.sh").as_uri()
    did_open(client, other, LAUNCH)
    await diagnostics_until(client, other, lambda codes: codes == [])
    assert len([m for m in client.messages if "time budget" in m.message]) == 2  # one per document
    assert any("4 of 4 launches" in m.message for m in client.log_messages)


def test_the_engine_stops_at_its_deadline_and_says_from_where():
    import time

    from servelint.engine import lint
    from servelint.lintcache import LintCache

    text = "#!/bin/bash\n" + LAUNCH * 2
    cache = LintCache()
    cut = lint(text, "/tmp/servelint-budget/run.sh", cache=cache, deadline=time.monotonic() - 1)
    assert cut.findings == []
    assert any("2 of 2 launches, from line 2 on, were not checked" in n for n in cut.notices)
    whole = lint(text, "/tmp/servelint-budget/run.sh", cache=cache)  # the next lint goes on
    assert [f.code for f in whole.findings] == ["SL002", "SL002"] and whole.notices == []
