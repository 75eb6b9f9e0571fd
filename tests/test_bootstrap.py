"""The fast start (lsp/bootstrap.py): first diagnostics before pygls is imported, then a
seamless hand-over. Compared, message for message, with the plain pygls server."""

import asyncio
import json
import sys

TEXT = "python3 -m sglang.launch_server --model-path m --tp_size 2 \\\n  --attention-backend flash_infer\n"


URI = "file:///tmp/boot/x.sh"


async def session(*extra, uri=URI, text=TEXT):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "servelint", "lsp", *extra,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)

    def send(msg):
        body = json.dumps(msg).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def recv():
        head = await asyncio.wait_for(proc.stdout.readuntil(b"\r\n\r\n"), 20)
        length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length"))
        return json.loads(await proc.stdout.readexactly(length))

    seen = []
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"capabilities": {}, "initializationOptions": {"servelint": {"ignore": ["SL004"]}}}})
    init = await recv()
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "shellscript", "version": 1, "text": text}}})
    first = None
    while first is None:
        m = await recv()
        seen.append(m)
        if m.get("method") == "textDocument/publishDiagnostics":
            first = m
    send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": uri}, "position": {"line": 0, "character": 50}}})
    while True:
        m = await recv()
        seen.append(m)
        if m.get("id") == 2:
            hover = m
            break
    send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    while (await recv()).get("id") != 3:
        pass
    send({"jsonrpc": "2.0", "method": "exit"})
    await asyncio.wait_for(proc.wait(), 10)
    return init, first, hover, seen


def test_fast_start_answers_like_the_pygls_server():
    plain = asyncio.run(session("--no-fast-start"))
    fast = asyncio.run(session())
    assert fast[0]["result"]["capabilities"] == plain[0]["result"]["capabilities"]
    assert fast[1]["params"] == plain[1]["params"]  # the same diagnostics, to the byte
    assert [d["code"] for d in fast[1]["params"]["diagnostics"]] == ["SL002", "SL007"]
    assert fast[2]["result"] == plain[2]["result"]  # pygls answers after the hand-over
    # Nothing is answered twice.
    assert [m.get("id") for m in fast[3] if "id" in m and "method" not in m] == [2]


def test_a_related_place_in_a_config_file_is_published_alike(tmp_path):
    """One serializer (servelint/serialize.py) for both: a finding whose other half is a
    key of the launch's --config file is published with that location by the fast start
    as by the pygls server, and the server's replayed copy is still dropped."""
    (tmp_path / "server.yaml").write_text(
        "model-path: BAAI/bge-large-en-v1.5\nis-embedding: true\nchunked-prefill-size: -1\n"
        "disable-radix-cache: true\nprefill-only-disable-kv-cache: true\ntp-size: 2\n")
    script = tmp_path / "run.sh"
    text = "python3 -m sglang.launch_server --config server.yaml \\\n  --enable-hisparse\n"
    script.write_text(text)
    plain = asyncio.run(session("--no-fast-start", uri=script.as_uri(), text=text))
    fast = asyncio.run(session(uri=script.as_uri(), text=text))
    assert fast[1]["params"] == plain[1]["params"]
    (diag,) = fast[1]["params"]["diagnostics"]
    assert diag["code"] == "SL101"
    assert diag["relatedInformation"] == [{"location": {
        "uri": (tmp_path / "server.yaml").as_uri(),
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 29}}},
        "message": diag["relatedInformation"][0]["message"]}]
    publishes = [m for m in fast[3] if m.get("method") == "textDocument/publishDiagnostics"]
    assert len(publishes) == 1  # the pygls server's copy of the same was dropped
    assert [m.get("id") for m in fast[3] if "id" in m and "method" not in m] == [2]


def test_the_arguments_language_clients_append_are_accepted():
    """vscode-languageclient runs `<command> <args> --stdio` for a stdio Executable (and
    node servers get `--clientProcessId=N`): the server must start with them, in both
    spellings, and talk as usual."""
    import os
    for extra in (("--stdio",), ("--stdio", f"--clientProcessId={os.getpid()}"),
                  ("--clientProcessId", str(os.getpid()), "--stdio", "--log-level", "debug")):
        init, first, hover, _ = asyncio.run(session(*extra))
        assert init["result"]["serverInfo"]["name"] == "servelint"
        assert [d["code"] for d in first["params"]["diagnostics"]] == ["SL002", "SL007"]
        assert hover["result"] is not None


def test_unknown_transport_arguments_are_refused_clearly():
    import subprocess
    out = subprocess.run([sys.executable, "-m", "servelint", "lsp", "--socket=9999"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 2
    assert "--socket=9999" in out.stderr
