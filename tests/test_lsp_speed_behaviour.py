"""The server under load, through the real server over stdio (pytest-lsp): a typing burst
costs at most one lint after its last keystroke (stale lints stop), opening a file lints
it once even when the editor's settings arrive meanwhile, the same settings sent again
lint nothing, and memory stays flat over 10,000 edits (pygls 2.1 kept a future per
notification). Lints are counted from the server's $/logTrace lines (trace: verbose)."""

import asyncio
import re
import sys

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_support import diagnostics_until

TRACE = re.compile(r"lint (\d+) (started|stopped|finished|reused): (\S+) version (\d+)(?: \((stale|newer text)\))?")
LAUNCH = "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "servelint", "lsp"]))
async def client(lsp_client: LanguageClient):
    lsp_client.traces = []

    @lsp_client.feature(types.LOG_TRACE)
    def on_trace(params: types.LogTraceParams):
        lsp_client.traces.append(params.message)

    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, tmp_path, pull: bool = False, settings: dict | None = None):
    if settings is not None:
        client.set_configuration(settings, section="servelint")
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
            configuration=pull, workspace_folders=True)),
        root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name=tmp_path.name)],
        trace=types.TraceValue.Verbose))


def lints(client: LanguageClient, uri: str) -> list[tuple[int, str, int, bool]]:
    """(lint number, started/stopped/finished, version, stale) of each trace line for `uri`."""
    out = []
    for message in client.traces:
        m = TRACE.fullmatch(message)
        assert m, message
        if m.group(3) == uri:
            out.append((int(m.group(1)), m.group(2), int(m.group(4)), m.group(5) == "stale"))
    return out


async def traces_until(client: LanguageClient, predicate, timeout: float = 120) -> None:
    async def wait():
        while not predicate():
            await client.wait_for_notification(types.LOG_TRACE)
    await asyncio.wait_for(wait(), timeout)


def did_open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1, text=text)))


def script_20k() -> str:
    """20,000 lines, 2,222 launches of 9 lines each (as issue 16's benchmark script)."""
    lines = ["#!/bin/bash"]
    for n in range(2222):
        lines += [f'log "launch {n}"',
                  "python3 -m sglang.launch_server --model-path /models/llama-3-8b \\",
                  f"  --tp-size {1 << (n % 4)} --mem-fraction-static 0.85 \\",
                  "  --attention-backend " + ("flash_infer" if n % 4 == 1 else "triton") + " \\",
                  f"  --host 0.0.0.0 --port {30000 + n % 1000} \\",
                  "  --enable-metrics --trust-remote-code \\",
                  "  --context-length 8192 \\",
                  f'  > "$LOG_DIR/server_{n}.log" 2>&1 &',
                  ""]
    lines += [f"echo filler {i}" for i in range(20000 - len(lines) - 1)] + ["wait"]
    assert len(lines) == 20000
    return "\n".join(lines) + "\n"


async def test_typing_burst_costs_at_most_one_lint_after_the_last_key(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = (tmp_path / "big.sh").as_uri()
    text = script_20k()
    did_open(client, uri, text)
    await traces_until(client, lambda: any(n > 0 and kind in ("finished", "reused")
                                           for n, kind, _, _ in lints(client, uri)))
    opened = len(lints(client, uri))
    # 50 keystrokes 30 ms apart in the middle: type "xyz" after a model path, then
    # delete it again, and so on.
    line = text.count("\n", 0, text.index("--model-path", len(text) // 4))
    column = len("python3 -m sglang.launch_server --model-path /models/llama-3-8b")
    typed = 0
    version = 1
    for i in range(50):
        version += 1
        if (i // 3) % 2 == 0:
            change = types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line, column + typed),
                                  end=types.Position(line, column + typed)), text="xyz"[typed])
            typed += 1
        else:
            change = types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line, column + typed - 1),
                                  end=types.Position(line, column + typed)), text="")
            typed -= 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[change]))
        await asyncio.sleep(0.03)

    await traces_until(client, lambda: any(kind == "finished" and v == version
                                           for _, kind, v, _ in lints(client, uri)))
    await diagnostics_until(client, uri, lambda codes: "SL007" in codes, timeout=30)
    assert client.diagnostics[uri] and client.diagnostics[uri][0] is not None
    burst = lints(client, uri)[opened:]
    started = [(n, v) for n, kind, v, _ in burst if kind == "started"]
    ended = [(n, kind, stale) for n, kind, _, stale in burst if kind != "started"]
    # Every lint ends once: finished or stopped by a newer change.
    assert sorted(n for n, _ in started) == sorted(n for n, _, _ in ended)
    # After the last keystroke: one lint of the newest text ...
    assert [n for n, v in started if v == version] and len([1 for _, v in started if v == version]) == 1
    assert len(started) <= 50
    # Nothing stale reached the editor: the last diagnostics are the newest text's.
    assert client.diagnostics[uri][-1] is not None
    last = [n for n, kind, v, _ in lints(client, uri) if v == version and kind == "finished"]
    assert last and not any(stale for n, kind, _, stale in burst if n == last[-1])


async def test_a_long_lint_stops_when_the_text_changes(client: LanguageClient, tmp_path):
    """Stale lints stop between launches: a change that comes while a whole document is
    being linted (its first lint, every launch checked) stops that lint, which never
    finishes; the next lint is of the new text."""
    await start(client, tmp_path)
    first = (tmp_path / "first.sh").as_uri()  # taken by the fast start
    did_open(client, first, LAUNCH)
    await diagnostics_until(client, first, lambda codes: codes == ["SL002", "SL007"])
    uri = (tmp_path / "big.sh").as_uri()
    text = script_20k()
    did_open(client, uri, text)
    await traces_until(client, lambda: started(client, uri) == 1)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text + "echo done\n")]))
    await traces_until(client, lambda: any(kind == "finished" and v == 2
                                           for _, kind, v, _ in lints(client, uri)))
    kinds = [(kind, v) for _, kind, v, _ in lints(client, uri)]
    assert kinds[:2] == [("started", 1), ("stopped", 1)], kinds
    assert ("finished", 1) not in kinds


def started(client: LanguageClient, uri: str) -> int:
    return sum(1 for _, kind, _, _ in lints(client, uri) if kind == "started")


async def test_opening_a_file_lints_it_once_while_settings_arrive(client: LanguageClient, tmp_path):
    # The editor answers workspace/configuration with its defaults (an empty section).
    await start(client, tmp_path, pull=True, settings={})
    a = (tmp_path / "a.sh").as_uri()
    did_open(client, a, LAUNCH)  # before the answer to workspace/configuration lands
    await diagnostics_until(client, a, lambda codes: codes == ["SL002", "SL007"])
    # A second document linted after the first means the lint thread is past anything
    # the first one had queued.
    b = (tmp_path / "b.sh").as_uri()
    did_open(client, b, LAUNCH)
    await diagnostics_until(client, b, lambda codes: codes == ["SL002", "SL007"])
    # Linted once: by the fast start (lint 0), whose result the server then published
    # (reused), or, when the open reached the server after the fast start had handed over
    # (a loaded machine), by the server alone.
    assert [kind for _, kind, _, _ in lints(client, a)] in (["started", "finished", "reused"],
                                                           ["started", "finished"])
    assert [kind for _, kind, _, _ in lints(client, b)] == ["started", "finished"]

    # The same settings again (editors send didChangeConfiguration at start-up): no lint.
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    c = (tmp_path / "c.sh").as_uri()
    did_open(client, c, LAUNCH)
    await diagnostics_until(client, c, lambda codes: codes == ["SL002", "SL007"])
    assert (started(client, a), started(client, b)) == (1, 1)

    # Other settings: every open document is linted again, once.
    client.set_configuration({"ignore": ["SL007"]}, section="servelint")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    for uri in (a, b, c):
        await diagnostics_until(client, uri, lambda codes: codes == ["SL002"])
    assert (started(client, a), started(client, b), started(client, c)) == (2, 2, 2)


async def test_the_same_settings_during_a_lint_do_not_restart_it(client: LanguageClient, tmp_path):
    """Settings that arrive again while a document's first lint is still running (its
    result not yet published) leave that lint alone: it already uses them."""
    await start(client, tmp_path, pull=True, settings={})
    first = (tmp_path / "first.sh").as_uri()  # taken by the fast start
    did_open(client, first, LAUNCH)
    await diagnostics_until(client, first, lambda codes: codes == ["SL002", "SL007"])
    uri = (tmp_path / "big.sh").as_uri()
    did_open(client, uri, script_20k())
    await traces_until(client, lambda: started(client, uri) == 1)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await diagnostics_until(client, uri, lambda codes: "SL007" in codes, timeout=60)
    # Once a document opened after it is linted, the server has acted on the answer to
    # the pull that didChangeConfiguration started.
    other = (tmp_path / "other.sh").as_uri()
    did_open(client, other, LAUNCH)
    await diagnostics_until(client, other, lambda codes: codes == ["SL002", "SL007"])
    assert [kind for _, kind, _, _ in lints(client, uri)] == ["started", "finished"]


async def test_settings_that_differ_from_the_fast_start_lint_once_more(client: LanguageClient, tmp_path):
    """The fast start lints with initializationOptions only; the pulled settings differ,
    so the server lints once with them (the answer arriving meanwhile restarts nothing)."""
    await start(client, tmp_path, pull=True, settings={"ignore": ["SL002"]})
    a = (tmp_path / "a.sh").as_uri()
    did_open(client, a, LAUNCH)
    await diagnostics_until(client, a, lambda codes: codes == ["SL007"])
    b = (tmp_path / "b.sh").as_uri()
    did_open(client, b, LAUNCH)
    await diagnostics_until(client, b, lambda codes: codes == ["SL007"])
    assert [(n, kind) for n, kind, _, _ in lints(client, a)] == [
        (0, "started"), (0, "finished"), (1, "started"), (1, "finished")]


def rss_kib(client: LanguageClient) -> int:
    with open(f"/proc/{client._server.pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))


async def test_memory_flat_over_ten_thousand_edits(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = (tmp_path / "small.sh").as_uri()
    did_open(client, uri, LAUNCH)
    await diagnostics_until(client, uri, lambda codes: codes == ["SL002", "SL007"])
    rss = {}
    for version in range(2, 10002):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(
                text=LAUNCH + "#" * (version % 7) + "\n")]))
        if version % 250 == 0:
            await asyncio.sleep(0)  # let the writer drain
        if version - 1 in (2000, 10000):
            # A request answered after every change was read: all of them were handled.
            await client.text_document_hover_async(types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0)))
            await diagnostics_until(client, uri, lambda codes: codes == ["SL002", "SL007"])
            rss[version - 1] = rss_kib(client)
    # pygls 2.1.1 alone kept ~2.1 KB per notification (~16 MB over these 8,000 edits).
    growth = rss[10000] - rss[2000]
    assert growth < 8000 * 0.5, rss
