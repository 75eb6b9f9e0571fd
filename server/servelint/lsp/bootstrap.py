"""Fast start: answer `initialize` and publish the first document's diagnostics before
pygls and lsprotocol are even imported, then hand the connection to the pygls server.

Importing pygls takes about a second (lsprotocol's ~570 attrs classes are generated at
import time); servelint's own core imports and lints in a third of that. So `servelint
lsp` starts here: it reads the first messages itself (plain JSON-RPC over stdio), answers
`initialize` with the same capabilities the pygls server declares, lints the first
opened document and publishes its diagnostics (servelint/serialize.py, the same dicts the
pygls server publishes), and only then imports pygls. Every byte
it read is replayed to pygls, which therefore sees the whole conversation (it answers
nothing twice: its reply to the replayed `initialize` is dropped).

Nothing here is needed for correctness; any surprise makes it hand over at once.
"""

from __future__ import annotations

import io
import json
import sys
import time

CAPABILITIES_VERSION = 1

LINT_WORKSPACE = "servelint.server.lintWorkspace"  # workspace/executeCommand
STATUS = "servelint.server.status"  # workspace/executeCommand
CHECK_UPGRADE = "servelint.server.checkUpgrade"  # [documentUri, release or ""]
CELL_SCHEME = "vscode-notebook-cell"  # VS Code's documents for notebook cells


def capabilities() -> dict:
    """What the pygls server declares (tests/test_bootstrap.py keeps the two equal)."""
    return {
        "positionEncoding": "utf-16",
        "textDocumentSync": {"openClose": True, "change": 2, "save": True},
        "hoverProvider": True,
        "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor",
                                                   "source.fixAll.servelint",
                                                   "notebook.source.fixAll.servelint"],
                               "resolveProvider": False},
        "executeCommandProvider": {"commands": [LINT_WORKSPACE, CHECK_UPGRADE, STATUS]},
        "completionProvider": {"triggerCharacters": ["-", " ", "="], "resolveProvider": True},
        "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True},
                      "fileOperations": {}},
    }


def _read_message(stream) -> tuple[bytes, dict | None]:
    raw = bytearray()
    length = None
    while True:
        line = stream.readline()
        if not line:
            return bytes(raw), None
        raw += line
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1].strip())
    if length is None:
        return bytes(raw), None
    body = stream.read(length)
    raw += body
    try:
        return bytes(raw), json.loads(body)
    except ValueError:
        return bytes(raw), None


SENT: list[dict] = []
# The fast start's lint of the first document: (uri, version, text, language, settings,
# result, cache). The pygls server publishes it instead of linting the same text again
# with the same settings (take_first_lint), so opening a file lints it once.
FIRST: list[tuple] = []


def take_first_lint(uri: str, version, text: str, language, settings):
    """The fast start's (result, cache) for exactly this document and settings, once;
    else None."""
    if not FIRST:
        return None
    first_uri, first_version, first_text, first_language, first_settings, result, cache = FIRST.pop()
    if (first_uri, first_version, first_text, first_language) != (uri, version, text, language):
        return None
    if first_settings != settings:
        return None
    return result, cache


def _send(out, message: dict, replayed: bool = True) -> None:
    """`replayed`: the pygls server sends the same message again (DropReply drops it)."""
    if "method" in message and replayed:
        SENT.append(json.loads(json.dumps(message)))
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


class ReplayIn:
    """stdin for pygls: the bytes already read, then the real stdin."""

    def __init__(self, consumed: bytes, stream):
        self.head = io.BytesIO(consumed)
        self.stream = stream

    def readline(self) -> bytes:
        line = self.head.readline()
        self._release()
        if line.endswith(b"\n") or (line and self.head.tell() < len(self.head.getbuffer())):
            return line
        return line + self.stream.readline()

    def read(self, n: int = -1) -> bytes:
        data = self.head.read(n)
        self._release()
        if n is not None and 0 <= n and len(data) < n:
            data += self.stream.read(n - len(data))
        return data

    def _release(self) -> None:
        """Once replayed, let the bytes go (the first document's text, for the server's life)."""
        if self.head.tell() >= len(self.head.getbuffer()) > 0:
            self.head = io.BytesIO()


# How the method of a publishDiagnostics notification reads near the start of its JSON
# (serialize.publish_frame's, pygls's json.dumps); a string value would have its quotes
# escaped.
_PUBLISH_METHOD = (b'"method":"textDocument/publishDiagnostics"',
                   b'"method": "textDocument/publishDiagnostics"')


class DropReply:
    """stdout for pygls: drops its reply to the replayed `initialize`, and the first copy
    of each notification the bootstrap already sent (settings and rule-pack messages the
    server repeats while it takes the replayed conversation over)."""

    def __init__(self, stream, request_id, sent: list[dict] | tuple[dict, ...] = ()):
        self.stream = stream
        self.request_id = request_id
        self.sent = list(sent)
        self.done = request_id is None and not self.sent

    def write(self, data: bytes) -> None:
        if not self.done:
            body = data.partition(b"\r\n\r\n")[2]
            if any(method in body[:100] for method in _PUBLISH_METHOD):
                # Diagnostics: never a copy (the server does not publish the fast start's
                # lint again), and once the server publishes, its replay of what the fast
                # start sent is over: nothing more is read back here. Else a message the
                # server never repeats would have every later message decoded, a large
                # document's diagnostics at each edit.
                self.done = True
                self.stream.write(data)
                return
            try:
                msg = json.loads(body)
            except ValueError:
                msg = None
            if isinstance(msg, dict):
                if self.request_id is not None and msg.get("id") == self.request_id and "method" not in msg:
                    self.request_id = None
                    self.done = not self.sent
                    return
                if "method" in msg and msg in self.sent:
                    self.sent.remove(msg)
                    self.done = self.request_id is None and not self.sent
                    return
        self.stream.write(data)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def run() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    consumed = bytearray()
    init_id = None
    raw = msg = None
    try:
        raw, msg = _read_message(stdin)
        consumed += raw
        if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
            init_id = msg["id"]
            params = msg.get("params") or {}
            _send(stdout, {"jsonrpc": "2.0", "id": init_id, "result": {
                "capabilities": capabilities(),
                "serverInfo": {"name": "servelint", "version": _version()}}})
            options = params.get("initializationOptions")
            while True:
                raw, msg = _read_message(stdin)
                consumed += raw
                if not isinstance(msg, dict) or msg.get("method") != "initialized":
                    break
            if isinstance(msg, dict) and msg.get("method") == "textDocument/didOpen":
                _first_lint(stdout, msg["params"]["textDocument"], options, params)
    except Exception:  # the pygls server takes over whatever happened
        pass
    from servelint.lsp.server import run_stdio
    replay = ReplayIn(bytes(consumed), stdin)
    # This frame lives as long as the server: what it read is let go here (the opened
    # document's message as a bytearray and as bytes, 7.4 MB for a 100,000-line script;
    # ReplayIn lets its own copy go once replayed).
    del consumed, raw, msg
    return run_stdio(replay, DropReply(stdout, init_id, SENT))


def pack_problem_messages(problems) -> tuple[list[str], str]:
    """The log lines and the one message that tell the user about broken rule records."""
    logs = [f"servelint: {p}" for p in problems]
    more = f" (and {len(problems) - 1} more; see the output log)" if len(problems) > 1 else ""
    shown = (f"servelint skipped a broken rule: {problems[0]}{more}. Every valid rule still "
             f"applies.")
    return logs, shown


# servelint.showNotifications -> the least urgent message type shown as a notification
# (LSP: Error 1, Warning 2, Info 3, Log 4); anything else goes to the log only.
NOTIFY_LEVELS = {"off": 0, "onError": 1, "onWarning": 2, "always": 4}


def settings_problem_message(errors: list[str]) -> str:
    """The one warning about invalid editor settings (each error names its key)."""
    return "servelint settings: " + "; ".join(errors) + " (using defaults for those)"


def config_problem_messages(cfg) -> tuple[str, str]:
    """The log line and the message that tell the user about an invalid configuration
    file (servelint.config.ProjectConfig)."""
    return f"servelint: {cfg.message()}", f"servelint: {cfg.message()}"


def _version() -> str:
    from servelint import __version__
    return __version__


def _workspace_root(path: str | None, params: dict) -> str | None:
    """The innermost workspace folder holding `path`, as ServelintServer.settings_for
    finds it (pygls takes workspaceFolders, else rootUri, else rootPath)."""
    import os
    folders = params.get("workspaceFolders")
    if folders:
        uris = [f.get("uri") for f in folders if isinstance(f, dict)]
    elif params.get("rootUri"):
        uris = [params["rootUri"]]
    else:
        uris = []
    roots = [r for r in (file_path(u) for u in uris if isinstance(u, str)) if r]
    if params.get("rootPath") and not uris:
        roots = [params["rootPath"]]
    if not path:
        return None
    holding = [r for r in roots if os.path.abspath(path).startswith(r.rstrip(os.sep) + os.sep)]
    return max(holding, key=len) if holding else None


def _first_lint(stdout, doc: dict, options, params: dict | None = None) -> None:
    from servelint.config import settings_for
    from servelint.docs import is_rule_page
    from servelint.engine import lint
    from servelint.lintcache import LintCache
    from servelint.serialize import diagnostics_parts, publish_frame
    from servelint.settings import Settings, workspace_trusted

    uri = doc["uri"]
    params = params or {}
    verbose = params.get("trace") == "verbose"
    # As the pygls server does: the editor's settings, combined with the project file.
    errors: list[str] = []
    settings = Settings.from_dict(options or {}, errors)
    level = NOTIFY_LEVELS[settings.show_notifications]

    def tell(kind: int, message: str, log_too: str | None = None) -> None:
        # As ServelintServer.notify and its callers do, message for message.
        if log_too is not None:
            _send(stdout, {"jsonrpc": "2.0", "method": "window/logMessage",
                           "params": {"type": kind, "message": log_too}})
        if kind <= level:
            _send(stdout, {"jsonrpc": "2.0", "method": "window/showMessage",
                           "params": {"type": kind, "message": message}})
        elif log_too is None:
            _send(stdout, {"jsonrpc": "2.0", "method": "window/logMessage",
                           "params": {"type": kind, "message": message}})

    if errors:
        tell(2, settings_problem_message(list(dict.fromkeys(errors))))
    settings, problems = settings_for(file_path(uri), settings, trusted=workspace_trusted(options))
    if is_rule_page(file_path(uri)):
        settings.enable = False  # as ServelintServer.settings_for_path
    for cfg in problems:
        logged, shown = config_problem_messages(cfg)
        tell(2, shown, logged)
    if file_path(uri):
        settings.project_root = _workspace_root(file_path(uri), params)
    version = doc.get("version")

    def trace(what: str) -> None:  # as ServelintServer.trace (lint 0: the fast start's)
        if verbose:
            _send(stdout, {"jsonrpc": "2.0", "method": "$/logTrace",
                           "params": {"message": f"lint 0 {what}: {uri} version {version}"}},
                  replayed=False)

    cache = LintCache()  # the server goes on with it (take_first_lint)
    trace("started")
    text, language = doc.get("text", ""), doc.get("languageId")
    import gc
    paused = gc.isenabled()
    gc.disable()  # as the server's lints (lsp/server.py timed_lint): no collection mid-lint
    began = time.perf_counter()
    try:
        result = lint(text, uri_to_path(uri), language, settings, cache=cache)
    finally:
        if time.perf_counter() - began > 0.25:  # as lsp/server.py settle_after_lint
            gc.freeze()
        if paused:
            gc.enable()
    trace("finished")
    if result.rules is not None and result.rules.problems:
        logs, shown = pack_problem_messages(result.rules.problems)
        for line in logs[:-1]:
            _send(stdout, {"jsonrpc": "2.0", "method": "window/logMessage",
                           "params": {"type": 1, "message": line}})
        tell(1, shown, logs[-1])
    # The editor's form of the diagnostics (serialize.diagnostic), encoded as the server
    # encodes them, so each finding keeps its JSON for the server's next publishes. The
    # server does not publish this lint again (take_first_lint), so it is not replayed.
    stdout.write(publish_frame(uri, version, diagnostics_parts(result, uri, version, editor=True)))
    stdout.flush()
    # Kept for the server once published: it publishes a lint it takes from here no more.
    FIRST[:] = [(uri, version, text, language, settings, result, cache)]


def file_path(uri: str) -> str | None:
    """The local path of a `file:` URI, or of the notebook a `vscode-notebook-cell:` URI
    is a cell of; None for any other scheme (an unsaved buffer has no project
    configuration)."""
    from urllib.parse import unquote, urlparse
    p = urlparse(uri)
    return unquote(p.path) if p.scheme in ("file", CELL_SCHEME) and p.path else None


def is_cell_uri(uri: str) -> bool:
    return uri.startswith(CELL_SCHEME + ":")


def uri_to_path(uri: str) -> str | None:
    """The path part of any URI, for telling the format by its name (`untitled:x.sh` too)."""
    from urllib.parse import unquote, urlparse
    p = urlparse(uri)
    return unquote(p.path) if p.scheme in ("file", "") else (p.path or None)
