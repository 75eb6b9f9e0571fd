"""The end of a session as the LSP specification says (issue 17): a request after
`shutdown` is answered with InvalidRequest (pygls dropped it, and a client waiting for the
answer waited forever), and the process exits 0 after shutdown + exit, 1 after an `exit`
without `shutdown`. The real server over stdio, with and without the fast start."""

import json
import subprocess
import sys

import pytest


def frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def replies(out: bytes) -> list[dict]:
    got = []
    while b"Content-Length:" in out:
        head, _, rest = out.partition(b"\r\n\r\n")
        n = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        got.append(json.loads(rest[:n]))
        out = rest[n:]
    return got


INIT = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}}]
HOVER = {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": "file:///tmp/x.sh"},
                    "position": {"line": 0, "character": 0}}}


def session(messages, fast_start: bool):
    cmd = [sys.executable, "-m", "servelint", "lsp"] + ([] if fast_start else ["--no-fast-start"])
    proc = subprocess.run(cmd, input=b"".join(frame(m) for m in messages), capture_output=True,
                          timeout=120)
    return proc.returncode, replies(proc.stdout)


@pytest.mark.parametrize("fast_start", [True, False])
def test_exit_after_shutdown_is_0_and_a_later_request_is_refused(fast_start):
    code, got = session(INIT + [{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}, HOVER,
                                {"jsonrpc": "2.0", "method": "exit"}], fast_start)
    assert code == 0
    by_id = {m.get("id"): m for m in got if "id" in m}
    assert by_id[2].get("result", "missing") is None
    assert by_id[3]["error"]["code"] == -32600  # InvalidRequest
    assert "shutting down" in by_id[3]["error"]["message"]


@pytest.mark.parametrize("fast_start", [True, False])
def test_exit_without_shutdown_is_1(fast_start):
    code, _ = session(INIT + [{"jsonrpc": "2.0", "method": "exit"}], fast_start)
    assert code == 1
