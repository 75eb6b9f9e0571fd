"""A large script's kept launches are thin (issue 16, point 6): their words are not kept
between lints but read again from their window when asked (model.Launch.thin,
extract/shell.py ShellHost.reread_tokens). Bytes are counted with tracemalloc."""

from __future__ import annotations

from servelint import engine
from servelint.extract import shell
from servelint.lintcache import LintCache
from servelint.model import LINE_READS, Launch

from test_memory_kept import _bench, _per_launch


def test_large_script_keeps_launches_thin():
    # Every launch's tokens (Token, Span, two offsets: ~200 bytes a word) were kept:
    # ~7,100 bytes a launch after the open, ~7,450 after edits; thin, ~3,500 and ~3,850;
    # with digests for the texts in keys and windows (lintcache.digest) and one empty
    # tuple or mapping for the many launches and windows without findings, ~2,400 both.
    opened, edited = _per_launch(800)
    assert opened < 3_000 and edited < 3_000, (opened, edited)


def test_keys_and_windows_hold_digests_not_text(monkeypatch):
    """The cache key of a launch, its fingerprint and a window of the memo stand for their
    text with 16 bytes: each had kept a copy of the document's text (the lines around the
    launch, the launch as read, the window), 14 MB for 11,110 launches."""
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = _bench("gen").script(900, 100, seed=5)
    cache = LintCache()
    result = engine.lint(text, "/nonexistent/memory/keys.sh", "shellscript", cache=cache)
    assert len(result.launches) == 100 and len(cache.entries) == 100
    for key in cache.entries:
        assert type(key[0]) is bytes and len(key[0]) == 16
        fp = key[2]
        assert type(fp[3]) is bytes and len(fp[3]) == 16
    windows = cache.extras["shell-windows"]
    assert len(windows) == 100
    assert all(type(w.key) is bytes and len(w.key) == 16 for w in windows)
    assert not any(isinstance(getattr(w, name, None), str) for w in windows for name in w.__slots__)


def test_release_memory_keeps_only_the_newest_text():
    """The release reader's memory of a text (release._DOCS) let the last text live on
    after an edit (3.6 MB of a 100,000-line script) until a third text came."""
    from servelint import release
    gen, peers = _bench("gen"), _bench("peers")
    text = gen.script(900, 100, seed=6)
    cache = LintCache()
    engine.lint(text, "/nonexistent/memory/docs.sh", "shellscript", cache=cache)
    for at, _old, new in peers.edit_sites(text, 3):
        text = text[:at] + new + text[at + 1:]
        engine.lint(text, "/nonexistent/memory/docs.sh", "shellscript", cache=cache)
        assert [d.text for d in release._DOCS.values()] == [text]


def _words(launch: Launch) -> list[tuple]:
    return [(t.span.start, t.span.end, t.text, t.prefix, t.splat, t.raw, t.origin,
             t.placeholder) for t in launch.tokens]


def test_thin_launches_read_their_words_again_exactly(monkeypatch):
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    text = _bench("gen").script(600, 40, seed=9)
    path = "/nonexistent/memory/thin.sh"
    cache = LintCache()
    result = engine.lint(text, path, "shellscript", cache=cache)
    stored = [list.__getitem__(result.launches, i) for i in range(len(result.launches))]
    assert len(stored) == 40 and all(x.is_thin for x in stored)
    # Lines added at the top: the launches below are moved (thin copies, read where they
    # now are), an edit in the middle re-checks one launch.
    middle = result.launches[20].tokens[1].span.end
    for new in ("# one\n# two\n" + text, text[:middle] + "7" + text[middle:]):
        result = engine.lint(new, path, "shellscript", cache=cache)
        fresh = engine.lint(new, path, "shellscript")
        reads = LINE_READS[0]
        got = [_words(launch) for launch in result.launches]
        assert LINE_READS[0] == reads  # reading again is not a check asking for lines
        assert got == [_words(launch) for launch in fresh.launches]
        assert [launch.entry.span for launch in result.launches] == \
            [launch.entry.span for launch in fresh.launches]
        # hover's reading of one launch (result.parsed reads it again when asked)
        assert [u.written for u in result.parsed[20].uses] == \
            [u.written for u in fresh.parsed[20].uses]


def test_a_large_documents_previous_result_is_freed_then_the_heap_trimmed(monkeypatch):
    """server.retire (on the lint thread, after a publish): the previous result is dropped,
    and for a document of a million characters or more glibc's heap is trimmed (its free
    pages given back: 115.6 -> 110.8 MiB after 100 edits of the 100,000-line script)."""
    from servelint.lsp import server
    trims = []
    monkeypatch.setattr(server, "trim_heap", lambda: trims.append(1))
    retired = [object()]
    server.retire(retired, server.TRIM_CHARS - 1)
    assert retired == [] and trims == []
    retired = [object()]
    server.retire(retired, server.TRIM_CHARS)
    assert retired == [] and trims == [1]
    monkeypatch.undo()
    server.trim_heap()  # the real one: glibc's malloc_trim here, nothing elsewhere


def test_old_cache_entries_are_bounded_over_many_edits(monkeypatch):
    """Each edit of a launch leaves the entry of its old text (an undo finds it); they
    were dropped only past twice the launches (~1 KB an edit of the 11,110-launch script:
    +9.8 MiB over 10,000 edits), now past engine.STALE_ENTRIES."""
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    monkeypatch.setattr(engine, "STALE_ENTRIES", 8)
    gen, peers = _bench("gen"), _bench("peers")
    text = gen.script(900, 100, seed=7)
    cache = LintCache()
    engine.lint(text, "/nonexistent/memory/stale.sh", "shellscript", cache=cache)
    most = 0
    for at, _old, new in peers.edit_sites(text, 60):
        text = text[:at] + new + text[at + 1:]
        result = engine.lint(text, "/nonexistent/memory/stale.sh", "shellscript", cache=cache)
        most = max(most, len(cache.entries))
    assert len(result.launches) == 100
    assert 100 < most <= 100 + 8 + 1, most
    fresh = engine.lint(text, "/nonexistent/memory/stale.sh", "shellscript")
    assert [(f.code, f.span) for f in result.findings] == [(f.code, f.span) for f in fresh.findings]


def test_launches_read_again_share_the_tuples_of_the_others(monkeypatch):
    """A launch read again after an edit shares its release's key tuple and its model file's
    (path, stat) with the launches read before it: a copy of each per edited launch was
    ~300 bytes, and over 10,000 edits of an 11,110-launch script the server grew 2.7 MiB."""
    monkeypatch.setattr(shell, "WINDOW_THRESHOLD", 0)
    gen, peers = _bench("gen"), _bench("peers")
    text = gen.script(900, 100, seed=7)
    cache = LintCache()
    path = "/nonexistent/memory/shared.sh"
    engine.lint(text, path, "shellscript", cache=cache)
    for at, _old, new in peers.edit_sites(text, 5):
        text = text[:at] + new + text[at + 1:]
        engine.lint(text, path, "shellscript", cache=cache)
    assert cache.ran >= 105  # the five edited launches were read and checked again
    releases: dict = {}
    for key in cache.entries:
        assert releases.setdefault(key[3], key[3]) is key[3]
    models = [m for m in cache.extras["engine"].models if m is not None]
    assert len(models) == 100
    firsts: dict = {}
    for m in models:
        assert firsts.setdefault(m, m) is m


def test_a_document_is_linted_under_the_first_string_of_its_uri():
    """Each message brings its own copy of a document's URI; the lint (and the serializer's
    memo of its findings) takes the document's first, so an edit keeps no new copy."""
    import asyncio
    from servelint.lsp.server import ServelintServer

    async def go():
        ls = ServelintServer()
        first = "".join(["file:///nonexistent/", "uri.sh"])
        again = "".join(["file:///nonexistent/", "uri.sh"])
        assert first == again and first is not again
        ls.schedule(first)
        task = ls.docs[first].task
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        ls.schedule(again)  # a new worker: the first one is done
        state = ls.docs[again]
        assert state.task is not task
        assert state.uri is first
        assert state.task.get_coro().cr_frame.f_locals["uri"] is first
        state.task.cancel()
        await asyncio.gather(*ls.background, return_exceptions=True)

    asyncio.run(go())


def test_the_document_takes_the_fast_starts_string_of_its_text(monkeypatch):
    """The fast start linted the opened text from its own reading of the message; the
    server's document, read again by pygls, is an equal string. Taking the fast start's
    lint, the document takes its string too: the text is kept once, not twice (3.7 MB of
    a 100,000-line script until the first edit)."""
    import asyncio
    from lsprotocol import types as lsp
    from pygls.workspace import Workspace
    from servelint.lsp import bootstrap
    from servelint.lsp.server import ServelintServer

    uri = "file:///nonexistent/first/x.sh"
    text = "python3 -m sglang.launch_server --model-path m --tp_size 2\n" * 3
    fast_text = "".join(text.split("\n", 1)[0] + "\n" + text.split("\n", 1)[1])
    assert fast_text == text and fast_text is not text

    async def go():
        ls = ServelintServer()
        ls.protocol._workspace = Workspace(None)
        ls.workspace.put_text_document(lsp.TextDocumentItem(
            uri=uri, language_id="shellscript", version=1, text=text))
        ls.settings_ready.set()
        settings = ls.settings_for(uri)
        cache = LintCache()
        result = engine.lint(fast_text, "/nonexistent/first/x.sh", "shellscript", settings,
                             cache=cache)
        monkeypatch.setattr(bootstrap, "FIRST", [
            (uri, 1, fast_text, "shellscript", settings, result, cache)])
        ls.schedule(uri)
        await asyncio.gather(*ls.background)
        state = ls.docs[uri]
        assert state.result is result  # the fast start's lint, taken
        assert ls.workspace.get_text_document(uri).source is result.text

    asyncio.run(go())


def test_the_fast_start_lets_the_opened_message_go(monkeypatch):
    """The fast start's frame lives as long as the server: the messages it read (the opened
    document as a bytearray and as bytes, 7.4 MB for a 100,000-line script) are not kept
    there while the server runs."""
    import io
    import json
    import sys
    from servelint.lsp import bootstrap, server

    text = "python3 -m sglang.launch_server --model-path m --tp_size 2\n" * 2000

    def frame(msg):
        body = json.dumps(msg).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    stdin = io.BytesIO(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        + frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///nonexistent/boot/x.sh", "languageId": "shellscript", "version": 1,
            "text": text}}}))
    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": stdin})())
    monkeypatch.setattr(sys, "stdout", type("Out", (), {"buffer": io.BytesIO()})())
    monkeypatch.setattr(bootstrap, "FIRST", [])
    monkeypatch.setattr(bootstrap, "SENT", [])
    held = []

    def run_stdio(replay, out):
        caller = sys._getframe(1)
        assert caller.f_code is bootstrap.run.__code__
        held.extend(type(v).__name__ for v in caller.f_locals.values()
                    if isinstance(v, (bytes, bytearray, dict)) and len(v) > 0
                    and len(v if not isinstance(v, dict) else json.dumps(v)) > len(text) // 2)
        assert replay.read(-1).endswith(json.dumps(text)[-100:].encode() + b"}}}")
        return 0

    monkeypatch.setattr(server, "run_stdio", run_stdio)
    assert bootstrap.run() == 0
    assert bootstrap.FIRST and bootstrap.FIRST[0][2] == text  # the fast start linted it
    assert held == []


def test_handled_notifications_leave_no_futures():
    """pygls 2.1 keeps the future of every handler it runs for a notification until a
    response removes it, which a notification never gets: +2 KB per keystroke for the
    life of the server. ServelintProtocol drops each once it is done."""
    import asyncio
    from servelint.lsp.server import ServelintServer

    async def go():
        ls = ServelintServer()
        ran = []

        @ls.feature("servelint/testPing")
        async def ping(params):
            ran.append(params)

        @ls.feature("servelint/testPingSync")
        def ping_sync(params):
            ran.append(params)

        for i in range(100):
            ls.protocol._handle_notification("servelint/testPing", i)
            ls.protocol._handle_notification("servelint/testPingSync", i)
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(ran) == 200
        assert ls.protocol._request_futures == {}

    asyncio.run(go())
