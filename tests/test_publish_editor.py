"""What the language server publishes (serialize.py's editor form, lsp/): `data` holds the
version (and SGLang's message) only, the code-action handler finds the fixes of the
diagnostic it is handed in the lint of that version, the message leaves framed in one
block, and the fast start's output filter stops reading once the server publishes."""

import io
import json
import random

from lsprotocol import types as lsp

from servelint.engine import LintResult, lint
from servelint.lintcache import LintCache
from servelint.lsp.bootstrap import DropReply
from servelint.lsp.convert import to_diagnostics
from servelint.lsp.server import ServelintServer
from servelint.model import Finding, Fix, Related, Severity, Span
from servelint.serialize import (diagnostics_json, diagnostics_parts, publish_frame,
                                 publish_params, result_diagnostics)
from servelint.settings import Settings

URI = "file:///tmp/t.sh"
TEXT = (
    "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n"
    "python3 -m sglang.launch_server --model-path m --is-embedding \\\n"
    "  --chunked-prefill-size=-1 --disable-radix-cache \\\n"
    "  --prefill-only-disable-kv-cache --enable-hisparse\n"
)


def test_the_editor_form_is_the_diagnostic_without_fixes_and_release():
    result = lint(TEXT, "/tmp/t.sh")
    full = result_diagnostics(result, URI, 4)
    editor = result_diagnostics(result, URI, 4, editor=True)
    assert len(editor) == len(full) and {d["code"] for d in full} == {"SL002", "SL007", "SL101"}
    assert any(d["data"]["fixes"] for d in full) and all("release" in d["data"] for d in full)
    for e, f in zip(editor, full):
        # Everything an editor shows is the same; `data` keeps what the server reads back.
        assert {k: v for k, v in e.items() if k != "data"} == {k: v for k, v in f.items() if k != "data"}
        assert e["data"] == {k: v for k, v in f["data"].items() if k in ("version", "sglangMessage")}
    assert any("sglangMessage" in d["data"] for d in editor)
    assert len(diagnostics_json(result, URI, 4, editor=True)) < 0.7 * len(diagnostics_json(result, URI, 4))


def test_both_forms_through_random_edits_with_one_cache():
    """The kept fragments are per form: asking for one form does not hand out the other."""
    rng = random.Random(3)
    lines = TEXT.splitlines(keepends=True) + ["echo hi\n", "sglang serve --model-path 'é' --port 3OOO1\n"]
    text = "".join(rng.choice(lines) for _ in range(25))
    cache = LintCache()
    for version in range(1, 40):
        at = rng.randrange(len(text) + 1)
        text = text[:at] + rng.choice(["x", "\n", " ", ""]) + text[at + rng.randrange(0, 2):]
        result = lint(text, "/tmp/t.sh", None, Settings(), cache=cache)
        for editor in rng.sample([True, False], 2):
            got = json.loads(diagnostics_json(result, URI, version, editor))
            assert got == result_diagnostics(result, URI, version, editor)
    assert cache.reused > 0


def test_the_frame_is_the_notification_with_its_length():
    result = lint(TEXT, "/tmp/t.sh")
    uri = "file:///tmp/dossier é/t.sh"
    for version in (None, 9):
        frame = publish_frame(uri, version, diagnostics_parts(result, uri, version, editor=True),
                              "application/vscode-jsonrpc; charset=utf-8")
        head, _, body = frame.partition(b"\r\n\r\n")
        assert head.split(b"\r\n") == [b"Content-Length: %d" % len(body),
                                       b"Content-Type: application/vscode-jsonrpc; charset=utf-8"]
        assert json.loads(body) == {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                                    "params": publish_params(uri, version, result_diagnostics(
                                        result, uri, version, editor=True))}


def test_a_hint_finds_its_own_finding_where_another_has_the_same_code_and_range():
    """Two findings of one code: B's main token is the other flag of A, where A's hint
    sits. The hint's quick fixes are A's (the fixes are not in the diagnostic any more,
    so the lookup must tell the two apart), B's diagnostic gets B's."""
    text = "python3 -m sglang.launch_server --aaa --bbb\n"
    a_at, b_at = text.index("--aaa"), text.index("--bbb")
    a_span, b_span = Span(a_at, a_at + 5), Span(b_at, b_at + 5)
    fix_a = Fix("Remove --aaa", [])
    fix_b = Fix("Remove --bbb", [])
    b = Finding("X1", Severity.WARNING, "--bbb is unsafe here", b_span, fixes=[fix_b])
    a = Finding("X1", Severity.ERROR, "--aaa conflicts with --bbb", a_span,
                related=[Related(b_span, "--bbb: the other half", mark=True)], fixes=[fix_a])
    result = LintResult(path="/tmp/t.sh", text=text, format="shell", findings=[b, a])
    diags = {(d.code, d.message): d for f in (a, b) for d in to_diagnostics(f, result.index, URI, 1)}
    hint = next(d for d in diags.values() if d.severity == lsp.DiagnosticSeverity.Hint)
    assert hint.range == next(d for d in diags.values() if d.message == b.message).range
    assert ServelintServer.current_finding(result, hint) is a
    for f in (a, b):
        main = next(d for d in diags.values() if d.message == f.message)
        assert ServelintServer.current_finding(result, main) is f
        assert [x["title"] for x in ServelintServer.finding_fixes(result, f)][0] == f.fixes[0].title


def test_the_output_filter_stops_reading_once_the_server_publishes():
    """DropReply drops the server's copies of what the fast start sent; a message the
    server never repeats must not leave it decoding every later message (a large
    document's diagnostics at each edit)."""
    out = io.BytesIO()
    log = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {"type": 2, "message": "m"}}
    drop = DropReply(out, None, [log, dict(log, params={"type": 2, "message": "never repeated"})])

    def frame(msg: dict) -> bytes:
        body = json.dumps(msg).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    drop.write(frame(log))  # a copy: dropped
    assert out.getvalue() == b"" and not drop.done
    result = lint(TEXT, "/tmp/t.sh")
    published = publish_frame(URI, 2, diagnostics_parts(result, URI, 2, editor=True))
    drop.write(published)
    assert out.getvalue() == published
    assert drop.done  # the replay is over: nothing more is decoded
    drop.write(frame(log))
    assert out.getvalue().endswith(frame(log))
