"""A small JSON-RPC-over-stdio LSP client for the benchmarks (asyncio, Content-Length
framing). It stamps every message from the server with the time its last byte was
read, before decoding it, so latencies do not include the client's JSON parsing.

Every wait has a timeout: a benchmark never hangs on a server that stops answering.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_TIMEOUT = 10.0


class LspError(Exception):
    pass


@dataclass
class Received:
    t: float  # time.perf_counter() when the message's last byte was read
    msg: dict


def is_publish_for(msg: dict, uri: str, version: int) -> bool:
    """Is `msg` a publishDiagnostics for `uri` at `version` (or without a version)?"""
    if msg.get("method") != "textDocument/publishDiagnostics":
        return False
    p = msg.get("params") or {}
    if p.get("uri") != uri:
        return False
    v = p.get("version")
    return v is None or v == version


class LspClient:
    def __init__(self, cmd: list[str], cwd: str | None = None, stderr_path: str | None = None,
                 env: dict[str, str] | None = None):
        self.cmd = cmd
        self.env = env
        self.cwd = cwd
        self.stderr_path = stderr_path
        self.proc: asyncio.subprocess.Process | None = None
        self.spawned_at = 0.0
        self.notifications: list[Received] = []
        self._pending: dict[int, asyncio.Future] = {}
        self._waiters: list[tuple[Callable[[dict], bool], asyncio.Future]] = []
        self._next_id = 0
        self._reader: asyncio.Task | None = None
        self._stderr = None
        self.server_requests: list[str] = []
        # Answers to requests from the server, by method (params -> result); others get null.
        self.handlers: dict[str, Callable[[Any], Any]] = {}

    # --- process --------------------------------------------------------------

    async def start(self) -> None:
        self._stderr = open(self.stderr_path, "ab") if self.stderr_path else asyncio.subprocess.DEVNULL
        self.spawned_at = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.cmd, cwd=self.cwd, env=self.env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=self._stderr)
        self._reader = asyncio.ensure_future(self._read_loop())

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def proc_status(self) -> dict[str, int]:
        """VmHWM, VmRSS, ... of the server process in KiB (from /proc/PID/status)."""
        out = {}
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key.startswith("Vm"):
                    parts = rest.split()
                    if parts and parts[0].isdigit():
                        out[key] = int(parts[0])
        return out

    async def stop(self, timeout: float = 5.0) -> None:
        """shutdown + exit, then kill the process if it is still there."""
        try:
            if self.proc and self.proc.returncode is None:
                try:
                    await self.request("shutdown", None, timeout=timeout)
                    self.notify("exit", None)
                    await asyncio.wait_for(self.proc.wait(), timeout)
                except Exception:
                    pass
        finally:
            self.kill()
            if self.proc is not None:
                try:
                    await asyncio.wait_for(self.proc.wait(), timeout)
                except Exception:
                    pass
            if self._reader is not None:
                self._reader.cancel()
            if self._stderr not in (None, asyncio.subprocess.DEVNULL):
                self._stderr.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    # --- wire -----------------------------------------------------------------

    def _send(self, obj: dict) -> float:
        assert self.proc is not None and self.proc.stdin is not None
        body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        t = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return t

    async def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def _read_loop(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = await out.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    key, _, val = line.decode("ascii").partition(":")
                    if key.strip().lower() == "content-length":
                        length = int(val.strip())
                if length is None:
                    continue
                body = await out.readexactly(length)
                t = time.perf_counter()
                self._dispatch(t, json.loads(body))
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            err = LspError("server closed its output")
        except asyncio.CancelledError:
            err = LspError("client stopped")
        except Exception as exc:  # a malformed message: fail every wait, do not hang
            err = LspError(f"reader failed: {exc!r}")
        for fut in list(self._pending.values()) + [f for _, f in self._waiters]:
            if not fut.done():
                fut.set_exception(err)

    def _dispatch(self, t: float, msg: dict) -> None:
        if "id" in msg and "method" not in msg:
            fut = self._pending.pop(msg["id"], None)
            if fut is not None and not fut.done():
                if "error" in msg:
                    fut.set_exception(LspError(str(msg["error"])))
                else:
                    fut.set_result(msg.get("result"))
            return
        if "id" in msg:  # a request from the server: answer so it never waits on us
            method = msg["method"]
            self.server_requests.append(method)
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in (msg.get("params") or {}).get("items", [])]
            elif method in self.handlers:
                result = self.handlers[method](msg.get("params"))
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        rec = Received(t, msg)
        self.notifications.append(rec)
        for pred, fut in list(self._waiters):
            if not fut.done() and pred(msg):
                fut.set_result(rec)

    # --- API ------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        self._next_id += 1
        rid = self._next_id
        fut = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        await self._drain()
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise LspError(f"{method}: no answer within {timeout} s") from None
        finally:
            self._pending.pop(rid, None)

    def notify(self, method: str, params: Any) -> float:
        """Send a notification; returns the time it was written."""
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self._send(msg)

    async def notify_drained(self, method: str, params: Any) -> float:
        t = self.notify(method, params)
        await self._drain()
        return t

    async def wait_for(self, pred: Callable[[dict], bool], timeout: float = DEFAULT_TIMEOUT,
                       since: int | None = None, what: str = "notification") -> Received:
        """The first notification matching `pred`, looking first at those received
        from index `since` on (None: only ones that arrive from now on)."""
        if since is not None:
            for rec in self.notifications[since:]:
                if pred(rec.msg):
                    return rec
        fut = asyncio.get_running_loop().create_future()
        entry = (pred, fut)
        self._waiters.append(entry)
        try:
            return await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise LspError(f"no {what} within {timeout} s") from None
        finally:
            self._waiters.remove(entry)

    async def wait_diagnostics(self, uri: str, version: int | None = None,
                               timeout: float = DEFAULT_TIMEOUT, since: int | None = None) -> Received:
        def pred(m: dict) -> bool:
            if m.get("method") != "textDocument/publishDiagnostics":
                return False
            p = m.get("params") or {}
            return p.get("uri") == uri and (version is None or p.get("version") == version)
        return await self.wait_for(pred, timeout, since,
                                   what=f"publishDiagnostics for {uri} version {version}")

    async def wait_publish(self, uri: str, version: int, since: int,
                           timeout: float = DEFAULT_TIMEOUT) -> Received:
        """The first publishDiagnostics for `uri` received from notification index `since`
        on that carries `version`, or carries no version at all (servers that publish
        without one, such as yaml-language-server: with one change in flight at a time,
        the first publish after it was sent is the one for it)."""
        def pred(m: dict) -> bool:
            return is_publish_for(m, uri, version)
        return await self.wait_for(pred, timeout, since,
                                   what=f"publishDiagnostics for {uri} version {version}")

    def publishes(self, uri: str, since: int = 0) -> list[Received]:
        return [r for r in self.notifications[since:]
                if r.msg.get("method") == "textDocument/publishDiagnostics"
                and (r.msg.get("params") or {}).get("uri") == uri]

    async def initialize(self, init_options: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        result = await self.request("initialize", {
            "processId": os.getpid(),
            "rootUri": None,
            "capabilities": {
                "textDocument": {"publishDiagnostics": {"versionSupport": True,
                                                        "relatedInformation": True}},
                "workspace": {"configuration": False},
            },
            "initializationOptions": init_options,
        }, timeout=timeout)
        await self.notify_drained("initialized", {})
        return result

    async def did_open(self, uri: str, text: str, version: int = 1,
                       language_id: str = "shellscript") -> float:
        return await self.notify_drained("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language_id, "version": version, "text": text}})

    async def did_change(self, uri: str, version: int, changes: list[dict]) -> float:
        return await self.notify_drained("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": changes})

    async def did_close(self, uri: str) -> float:
        return await self.notify_drained("textDocument/didClose", {"textDocument": {"uri": uri}})
