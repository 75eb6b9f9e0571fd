"""servelint benchmarks: print numbers, never pass or fail on time.

    .venv/bin/python bench/run.py          (or: make bench)

Measures edit latency and startup of the real language server over stdio, the engine
on large files in process, and peak memory of the server and the CLI. Prints a table
and writes every number to bench/out/results.json. See bench/README.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
GEN_DIR = os.path.join(OUT, "gen")
sys.path.insert(0, HERE)

import gen  # noqa: E402
from lspclient import LspClient  # noqa: E402

PY = sys.executable
SERVER_CMD = [PY, "-m", "servelint", "lsp"]
STDERR_LOG = os.path.join(OUT, "server-stderr.log")
TIMEOUT = 10.0        # every wait on the server
LARGE_TIMEOUT = 20.0  # waits that lint the 20,000-line file
SECTION_CAP = 60.0    # no section may take longer than this

SMALL_URI = "file:///tmp/servelint-bench/launch.sh"
LARGE_URI = "file:///tmp/servelint-bench/large.sh"
HUGE_URI = "file:///tmp/servelint-bench/huge.sh"
TYPED = "-awq-int4-g128-finetuned2"  # 25 characters typed, then deleted again


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 2)


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def summary(values_s: list[float]) -> dict:
    return {"n": len(values_s), "median_ms": ms(statistics.median(values_s)),
            "p90_ms": ms(pct(values_s, 90)), "max_ms": ms(max(values_s)),
            "min_ms": ms(min(values_s))}


# --- a document the client edits, kept in sync with what it sends ------------------


class Doc:
    def __init__(self, uri: str, text: str):
        self.uri = uri
        self.text = text
        self.version = 1

    def position(self, offset: int) -> dict:
        line = self.text.count("\n", 0, offset)
        start = self.text.rfind("\n", 0, offset) + 1
        return {"line": line, "character": offset - start}  # ASCII text: UTF-16 == chars

    def edit(self, start: int, end: int, new: str, incremental: bool) -> list[dict]:
        rng = {"start": self.position(start), "end": self.position(end)}
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        if incremental:
            return [{"range": rng, "text": new}]
        return [{"text": self.text}]


def typing_edits(doc: Doc, anchor: str, n: int):
    """`n` edits at the end of the first `anchor` after the middle of the document:
    type TYPED one character at a time, then delete it with backspace."""
    at = doc.text.index(anchor + " ", len(doc.text) // 2) + len(anchor) + 1
    at = doc.text.index(" ", at)  # the end of the flag's value
    cursor = at
    for i in range(n):
        if (i // len(TYPED)) % 2 == 0:
            yield cursor, cursor, TYPED[i % len(TYPED)]
            cursor += 1
        else:
            yield cursor - 1, cursor, ""
            cursor -= 1


def sync_kind(init_result: dict) -> int:
    sync = (init_result or {}).get("capabilities", {}).get("textDocumentSync")
    if isinstance(sync, dict):
        return int(sync.get("change", 1))
    return int(sync or 1)


def diag_count(rec) -> int:
    return len(rec.msg["params"]["diagnostics"])


async def new_client() -> tuple[LspClient, dict]:
    client = LspClient(SERVER_CMD, cwd=ROOT, stderr_path=STDERR_LOG)
    await client.start()
    init = await client.initialize(timeout=TIMEOUT)
    return client, init


# --- 1. edit latency ------------------------------------------------------------------


async def edit_session(doc: Doc, client: LspClient, incremental: bool, n: int,
                       timeout: float) -> dict:
    lat = []
    counts = []
    for start, end, new in typing_edits(doc, "--model-path", n):
        changes = doc.edit(start, end, new, incremental)
        t0 = await client.did_change(doc.uri, doc.version, changes)
        rec = await client.wait_diagnostics(doc.uri, doc.version, timeout=timeout)
        lat.append(rec.t - t0)
        counts.append(diag_count(rec))
    out = summary(lat)
    out["latencies_ms"] = [ms(x) for x in lat]
    out["diagnostics_last"] = counts[-1]
    return out


async def burst(doc: Doc, client: LspClient, incremental: bool, n: int, gap: float,
                timeout: float) -> dict:
    since = len(client.notifications)
    first_version = doc.version + 1
    sent = []
    for start, end, new in typing_edits(doc, "--model-path", n):
        changes = doc.edit(start, end, new, incremental)
        sent.append(await client.did_change(doc.uri, doc.version, changes))
        await asyncio.sleep(gap)
    rec = await client.wait_diagnostics(doc.uri, doc.version, timeout=timeout, since=since)
    await asyncio.sleep(0.3)  # anything published late for an older version
    pubs = client.publishes(doc.uri, since)
    versions = [p.msg["params"].get("version") for p in pubs]
    # A publish for version v that arrives after v+1 was sent describes text the
    # editor no longer shows.
    late = [p.t - sent[p.msg["params"]["version"] - first_version + 1] for p in pubs
            if isinstance(p.msg["params"].get("version"), int)
            and first_version <= p.msg["params"]["version"] < doc.version
            and p.t > sent[p.msg["params"]["version"] - first_version + 1]]
    superseded = len(late)
    return {"changes": n, "gap_ms": ms(gap), "send_span_ms": ms(sent[-1] - sent[0]),
            "last_change_to_diagnostics_ms": ms(rec.t - sent[-1]),
            "first_change_to_diagnostics_ms": ms(rec.t - sent[0]),
            "publishes": len(pubs), "published_versions": versions,
            "versions": [first_version, doc.version],
            "intermediate_publishes": sum(1 for v in versions if v != doc.version),
            "publishes_after_newer_change_sent": superseded,
            "max_ms_after_newer_change_sent": ms(max(late)) if late else None}


async def bench_edits(small: str, large: str) -> dict:
    from servelint.engine import lint
    res: dict = {}
    client, init = await new_client()
    try:
        kind = sync_kind(init)
        incremental = kind == 2
        res["text_document_sync"] = {0: "none", 1: "full", 2: "incremental"}.get(kind, kind)
        doc = Doc(SMALL_URI, small)
        t0 = await client.did_open(doc.uri, doc.text, doc.version)
        rec = await client.wait_diagnostics(doc.uri, doc.version, timeout=TIMEOUT)
        res["small_open_ms"] = ms(rec.t - t0)
        res["small_edits"] = await edit_session(doc, client, incremental, 50, TIMEOUT)
        res["small_burst"] = await burst(doc, client, incremental, 20, 0.005, TIMEOUT)
        # The server's last diagnostics must describe the client's text.
        last = client.publishes(doc.uri)[-1]
        res["small_consistent"] = (last.msg["params"]["version"] == doc.version and
                                   diag_count(last) == len(lint(doc.text, path="launch.sh").findings))

        # The same on the 20,000-line file (fewer edits: each lint takes a while).
        big = Doc(LARGE_URI, large)
        t0 = await client.did_open(big.uri, big.text, big.version)
        rec = await client.wait_diagnostics(big.uri, big.version, timeout=LARGE_TIMEOUT)
        res["large_open_ms"] = ms(rec.t - t0)
        res["large_open_diagnostics"] = diag_count(rec)
        res["large_edits"] = await edit_session(big, client, incremental, 10, LARGE_TIMEOUT)
        res["large_burst"] = await burst(big, client, incremental, 20, 0.005, LARGE_TIMEOUT)
        # An edit in the small document while nothing else is pending, after the large
        # one was linted: is the small one still quick?
        res["small_after_large"] = await edit_session(doc, client, incremental, 10, TIMEOUT)
        res["server_requests"] = sorted(set(client.server_requests))
        res["log_messages"] = [r.msg["params"].get("message") for r in client.notifications
                               if r.msg.get("method") == "window/logMessage"][:5]
    finally:
        await client.stop()
    return res


# --- 1b. requests an editor sends while the user moves around -------------------------


async def bench_requests(text: str, n: int = 20) -> dict:
    """Round trips of the code-action requests VS Code sends (automatically at every
    cursor move; on Ctrl+. with no kind; on save for source.fixAll) and of hover, on
    a file of 150 launches whose diagnostics are published (nothing pending)."""
    client, _ = await new_client()
    uri = "file:///tmp/servelint-bench/requests.sh"
    out: dict = {"launches": text.count("sglang.launch_server")}
    try:
        await client.did_open(uri, text, 1)
        rec = await client.wait_diagnostics(uri, 1, timeout=LARGE_TIMEOUT)
        diags = rec.msg["params"]["diagnostics"]
        out["diagnostics"] = len(diags)
        lines = [d["range"] for d in diags[:n]] or [
            {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}]

        async def timed(method, params_of):
            lat = []
            for k in range(n):
                params = params_of(lines[k % len(lines)], diags[k % len(diags)] if diags else None)
                t0 = time.perf_counter()
                await client.request(method, params, timeout=LARGE_TIMEOUT)
                lat.append(time.perf_counter() - t0)
            return summary(lat)

        def action(trigger, only=None):
            def params(rng, diag):
                ctx = {"diagnostics": [diag] if diag else [], "triggerKind": trigger}
                if only:
                    ctx["only"] = only
                return {"textDocument": {"uri": uri}, "range": rng, "context": ctx}
            return params

        out["code_action_automatic"] = await timed("textDocument/codeAction", action(2))
        out["code_action_invoked"] = await timed("textDocument/codeAction", action(1))
        out["code_action_fix_all_on_save"] = await timed(
            "textDocument/codeAction", action(2, ["source.fixAll"]))
        out["hover"] = await timed("textDocument/hover", lambda rng, _d: {
            "textDocument": {"uri": uri}, "position": rng["start"]})
    finally:
        await client.stop()
    return out


# --- 2. startup -------------------------------------------------------------------------


async def bench_startup(small: str, runs: int = 5) -> dict:
    total, to_init, open_to_diag = [], [], []
    for _ in range(runs):
        client = LspClient(SERVER_CMD, cwd=ROOT, stderr_path=STDERR_LOG)
        try:
            await client.start()
            await client.initialize(timeout=TIMEOUT)
            t_init = time.perf_counter()
            t_open = await client.did_open(SMALL_URI, small, 1)
            rec = await client.wait_diagnostics(SMALL_URI, 1, timeout=TIMEOUT)
            total.append(rec.t - client.spawned_at)
            to_init.append(t_init - client.spawned_at)
            open_to_diag.append(rec.t - t_open)
        finally:
            await client.stop()
    return {"runs": runs,
            "spawn_to_first_diagnostics_ms": ms(statistics.median(total)),
            "spawn_to_initialized_ms": ms(statistics.median(to_init)),
            "open_to_first_diagnostics_ms": ms(statistics.median(open_to_diag)),
            "all_spawn_to_first_diagnostics_ms": [ms(x) for x in total]}


# --- 3. large files in process ----------------------------------------------------------


def bench_large(texts: dict[str, str], big: str, runs: int = 5) -> dict:
    from servelint.engine import lint
    res: dict = {}
    t0 = time.perf_counter()
    lint(texts["launches_400"][:2000], path="warm.sh")  # load the catalog and checks once
    res["first_lint_warmup_ms"] = ms(time.perf_counter() - t0)
    for name, text in texts.items():
        times = []
        suffix = ".py" if name.startswith("python") else ".sh"
        for _ in range(runs):
            t0 = time.perf_counter()
            r = lint(text, path=f"{name}{suffix}")
            times.append(time.perf_counter() - t0)
        res[name] = {"lines": text.count("\n"), "chars": len(text), "launches": len(r.launches),
                     "findings": len(r.findings), "median_ms": ms(statistics.median(times)),
                     "all_ms": [ms(x) for x in times]}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = lint(big, path="huge.sh")
        times.append(time.perf_counter() - t0)
    res["file_20mb"] = {"chars": len(big), "median_ms": ms(statistics.median(times)),
                        "findings": len(r.findings), "notices": r.notices}
    return res


# --- 4. memory --------------------------------------------------------------------------


async def bench_server_memory(small: str, large: str, huge: str) -> dict:
    client, _ = await new_client()
    try:
        res = {"after_initialize_kib": client.proc_status()}
        await client.did_open(SMALL_URI, small, 1)
        await client.wait_diagnostics(SMALL_URI, 1, timeout=TIMEOUT)
        res["after_small_kib"] = client.proc_status()
        await client.did_open(LARGE_URI, large, 1)
        await client.wait_diagnostics(LARGE_URI, 1, timeout=LARGE_TIMEOUT)
        res["after_large_kib"] = client.proc_status()
        # The 20 MB file over the protocol: the server must refuse it, publish an empty
        # list and log a notice. How long until the (empty) diagnostics arrive?
        since = len(client.notifications)
        t0 = await client.did_open(HUGE_URI, huge, 1)
        rec = await client.wait_diagnostics(HUGE_URI, 1, timeout=LARGE_TIMEOUT)
        res["huge_open_to_diagnostics_ms"] = ms(rec.t - t0)
        res["huge_diagnostics"] = diag_count(rec)
        res["huge_notice"] = next((r.msg["params"]["message"] for r in client.notifications[since:]
                                   if r.msg.get("method") == "window/logMessage"), None)
        res["after_huge_kib"] = client.proc_status()
    finally:
        await client.stop()
    return res


# Peak RSS of a child must not come from wait4() in this process: Linux carries the
# RSS of the process that forks (this one holds ~100 MB of generated text) into the
# child's ru_maxrss across exec. A small Python in between forks the command, so the
# figure is max(that launcher's ~10 MB, the command's own peak).
LAUNCHER = (
    "import json, os, subprocess, sys, threading, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)\n"
    "timer = threading.Timer(float(sys.argv[1]), p.kill)\n"
    "timer.start()\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "timer.cancel()\n"
    "p.returncode = os.waitstatus_to_exitcode(status)\n"
    "print(json.dumps({'wall': time.perf_counter() - t, 'maxrss': usage.ru_maxrss,\n"
    "                  'exit': os.waitstatus_to_exitcode(status)}))\n"
)


def run_measured(cmd: list[str], timeout: float = 60.0) -> dict:
    """Run a command; its wall time, exit code, peak RSS (KiB) and the last lines of
    its stderr."""
    err_path = os.path.join(OUT, "cli-stderr.txt")
    with open(err_path, "wb") as err:
        proc = subprocess.run([PY, "-c", LAUNCHER, str(timeout), *cmd], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=err, timeout=timeout + 10)
    m = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    with open(err_path, encoding="utf-8", errors="replace") as fh:
        lines = [l.strip() for l in fh if l.strip()]
    return {"wall_ms": ms(m["wall"]), "exit": m["exit"], "peak_rss_kib": m["maxrss"],
            "stderr_tail": lines[-2:]}


def cli_cmd(*args: str) -> list[str]:
    exe = os.path.join(os.path.dirname(PY), "servelint")
    return ([exe] if os.path.exists(exe) else [PY, "-m", "servelint"]) + list(args)


def bench_cli(large_path: str, big_path: str) -> dict:
    res = {}
    ex = os.path.join(ROOT, "examples")
    n = sum(len(f) for _, _, f in os.walk(ex)) if os.path.isdir(ex) else 0
    res["examples"] = dict(run_measured(cli_cmd("check", "examples/")), files_in_dir=n)
    res["large_20k_lines"] = run_measured(cli_cmd("check", os.path.relpath(large_path, ROOT)))
    res["file_20mb"] = run_measured(cli_cmd("check", os.path.relpath(big_path, ROOT)))
    return res


# --- driver ---------------------------------------------------------------------------------


async def section(results: dict, name: str, coro) -> None:
    t0 = time.perf_counter()
    try:
        results[name] = await asyncio.wait_for(coro, SECTION_CAP)
    except Exception as exc:
        results[name] = {"error": f"{type(exc).__name__}: {exc}"}
        traceback.print_exc()
    print(f"  {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def table(r: dict) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []

    def get(*path, default="ERR"):
        cur = r
        for p in path:
            if not isinstance(cur, dict) or p not in cur:
                return default
            cur = cur[p]
        return cur

    def stat(key):
        s = get("lsp", key, default=None)
        if not isinstance(s, dict):
            return "ERR"
        return f"median {s['median_ms']}  p90 {s['p90_ms']}  max {s['max_ms']} ms"

    def burst_row(key):
        b = get("lsp", key, default=None)
        if not isinstance(b, dict):
            return "ERR"
        return (f"{b['last_change_to_diagnostics_ms']} ms after last change; "
                f"{b['publishes']} publishes ({b['intermediate_publishes']} for older "
                f"versions, {b['publishes_after_newer_change_sent']} after a newer change)")

    rows.append(("LSP edit -> diagnostics, 200 lines (50 edits)", stat("small_edits")))
    rows.append(("LSP typing burst, 200 lines (20 x 5 ms)", burst_row("small_burst")))
    rows.append(("LSP open 20k lines -> diagnostics", f"{get('lsp', 'large_open_ms')} ms"))
    rows.append(("LSP edit -> diagnostics, 20k lines (10 edits)", stat("large_edits")))
    rows.append(("LSP typing burst, 20k lines (20 x 5 ms)", burst_row("large_burst")))
    rows.append(("LSP edit, 200 lines, after the 20k file", stat("small_after_large")))

    def req(key):
        s = get("requests", key, default=None)
        return "ERR" if not isinstance(s, dict) else f"median {s['median_ms']}  max {s['max_ms']} ms"
    n = get("requests", "launches", default="?")
    rows.append((f"codeAction at cursor move (automatic), {n} launches", req("code_action_automatic")))
    rows.append((f"codeAction on Ctrl+. (invoked, fix-all included), {n} launches", req("code_action_invoked")))
    rows.append((f"codeAction source.fixAll (on save), {n} launches", req("code_action_fix_all_on_save")))
    rows.append((f"hover on a finding, {n} launches", req("hover")))
    rows.append(("Startup: spawn -> first diagnostics (median 5)",
                 f"{get('startup', 'spawn_to_first_diagnostics_ms')} ms "
                 f"(initialize done at {get('startup', 'spawn_to_initialized_ms')} ms)"))
    for key, label in [("launches_400", "20k lines, 400 launches"),
                       ("no_launch", "20k lines, no launch"),
                       ("no_launch_mentions_sglang", "20k lines, no launch, 'sglang' in a comment"),
                       ("one_launch_at_end", "20k lines, 1 launch at the end"),
                       ("python_20k", "20k-line Python module, 1 launcher")]:
        rows.append((f"lint() {label} (median 5)", f"{get('large', key, 'median_ms')} ms"))
    rows.append(("lint() 20 MB file (median 5)",
                 f"{get('large', 'file_20mb', 'median_ms')} ms, notice: "
                 f"{'yes' if get('large', 'file_20mb', 'notices', default=[]) else 'NO'}"))
    rows.append(("LSP open 20 MB file -> (empty) diagnostics",
                 f"{get('memory', 'server', 'huge_open_to_diagnostics_ms')} ms, notice: "
                 f"{'yes' if get('memory', 'server', 'huge_notice', default=None) else 'NO'}"))
    rows.append(("Server VmHWM after initialize",
                 f"{get('memory', 'server', 'after_initialize_kib', 'VmHWM')} KiB"))
    rows.append(("Server VmHWM after opening 20k lines",
                 f"{get('memory', 'server', 'after_large_kib', 'VmHWM')} KiB"))
    rows.append(("Server VmHWM after also opening 20 MB",
                 f"{get('memory', 'server', 'after_huge_kib', 'VmHWM')} KiB"))
    ex = get("memory", "cli", "examples", default={})
    rows.append((f"CLI check examples/ ({ex.get('files_in_dir', '?')} files): peak RSS",
                 f"{ex.get('peak_rss_kib', 'ERR')} KiB, {ex.get('wall_ms', 'ERR')} ms"))
    lg = get("memory", "cli", "large_20k_lines", default={})
    rows.append(("CLI check 20k-line file: peak RSS",
                 f"{lg.get('peak_rss_kib', 'ERR')} KiB, {lg.get('wall_ms', 'ERR')} ms"))
    hg = get("memory", "cli", "file_20mb", default={})
    rows.append(("CLI check 20 MB file: peak RSS",
                 f"{hg.get('peak_rss_kib', 'ERR')} KiB, {hg.get('wall_ms', 'ERR')} ms"))
    return rows


async def main() -> int:
    os.makedirs(GEN_DIR, exist_ok=True)
    open(STDERR_LOG, "w").close()
    t_start = time.perf_counter()
    print("generating inputs ...", file=sys.stderr)
    small = gen.script(200, 8, seed=1)
    texts = {
        "launches_400": gen.script(20000, 400, seed=2),
        "no_launch": gen.script(20000, 0, seed=3),
        "one_launch_at_end": gen.script(20000, 1, seed=4, launches_at_end=True),
    }
    # Same filler, but the word `sglang` in one comment: the engine's substring
    # shortcut no longer applies, so this is the cost of parsing 20,000 lines.
    nl = texts["no_launch"]
    cut = nl.index("\n", len(nl) // 2) + 1
    texts["no_launch_mentions_sglang"] = nl[:cut] + "# the sglang servers start later\n" + nl[cut:].split("\n", 1)[1]
    texts["python_20k"] = gen.python_module(20000, seed=6)
    big = gen.big_file(20 * 1024 * 1024, seed=5)
    paths = {}
    for name, text in [("small_200.sh", small), ("large_20k.sh", texts["launches_400"]),
                       ("huge_20mb.sh", big)]:
        paths[name] = os.path.join(GEN_DIR, name)
        with open(paths[name], "w") as fh:
            fh.write(text)

    results: dict = {"meta": {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "cpus": os.cpu_count(), "server_cmd": SERVER_CMD,
        "git_head": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                   capture_output=True, text=True).stdout.strip(),
    }}
    print("running ...", file=sys.stderr)
    await section(results, "lsp", bench_edits(small, texts["launches_400"]))
    await section(results, "requests", bench_requests(gen.script(1500, 150, seed=7)))
    await section(results, "startup", bench_startup(small))
    loop = asyncio.get_running_loop()
    await section(results, "large", loop.run_in_executor(None, bench_large, texts, big))
    mem: dict = {}
    await section(mem, "server", bench_server_memory(small, texts["launches_400"], big))
    await section(mem, "cli", loop.run_in_executor(
        None, bench_cli, paths["large_20k.sh"], paths["huge_20mb.sh"]))
    results["memory"] = mem
    results["meta"]["total_s"] = round(time.perf_counter() - t_start, 1)
    with open(STDERR_LOG, encoding="utf-8", errors="replace") as fh:
        results["meta"]["server_stderr_lines"] = [l.rstrip() for l in fh][:20]

    # Keep what bench/peers.py wrote there (its `peers` key).
    try:
        with open(os.path.join(OUT, "results.json")) as fh:
            previous = json.load(fh)
        if isinstance(previous, dict) and "peers" in previous:
            results["peers"] = previous["peers"]
    except (OSError, ValueError):
        pass
    with open(os.path.join(OUT, "results.json"), "w") as fh:
        json.dump(results, fh, indent=2)
    rows = table(results)
    w = max(len(a) for a, _ in rows)
    print()
    print(f"servelint benchmarks ({results['meta']['cpus']} CPUs, Python "
          f"{results['meta']['python']}, {results['meta']['total_s']} s)")
    print("-" * (w + 40))
    for a, b in rows:
        print(f"{a:<{w}}  {b}")
    print("-" * (w + 40))
    print(f"details: {os.path.relpath(os.path.join(OUT, 'results.json'), os.getcwd())}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
