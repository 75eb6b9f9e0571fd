"""Server memory with a large file open (issue 16, point 6): the real server over stdio,
one 100,000-line shell script opened, then one-character edits; prints the server's
resident memory (VmRSS, and the peak VmHWM) after the open (once the pygls server, which
takes over from the fast start, answers a request) and after the edits, each
next to the issue's goal (100 MB with the file open, flat over the edits), for a script
with few launches and one as dense in launches as the 20,000-line benchmark.

    .venv/bin/python bench/memory.py                   # both scripts, 20 edits each
    .venv/bin/python bench/memory.py --edits 10000 --only 1000   # flat over 10,000 edits?

`--edits` (or SERVELINT_MEMORY_EDITS) sets the number of edits; `--only N` measures only
the script with N launches. The RSS is sampled 10 times over the edits; "growth" is the
change from the first sample (after a tenth of the edits, when the server has settled)
to the last. Prints numbers; passes or fails nothing (`make bench` runs it too)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen  # noqa: E402
from lspclient import LspClient  # noqa: E402
from peers import edit_sites  # noqa: E402

ROOT = os.path.dirname(HERE)
PY = sys.executable
N_EDITS = int(os.environ.get("SERVELINT_MEMORY_EDITS", "20"))
CASES = [("100,000-line script, 1,000 launches", 100_000, 1_000),
         ("100,000-line script, 11,110 launches", 100_000, 11_110)]
GOAL_MIB = 100e6 / 2**20  # issue 16: <= 100 MB of server RSS (95.4 MiB)
# "Flat": at most this much growth from the first sample to the last (pygls 2.1.1 kept a
# future per notification, +2.1 KB an edit: 21 MB over 10,000 edits).
FLAT_MIB = 2.0


def digit_edits(text: str, n: int) -> list[tuple[int, str]]:
    """`n` one-digit edits: peers.edit_sites (each edit of another launch, each making
    launch text the server has not seen) when the script allows that many (a digit has
    nine other values); else every `--tp-size` digit in turn, moved to the next value,
    so that texts come back, which a cache may answer: what is measured is memory."""
    try:
        return [(at, new) for at, _old, new in edit_sites(text, n)]
    except StopIteration:
        pass
    sites = []
    at = text.find("--tp-size")
    while at >= 0:
        d = at + len("--tp-size")
        while not text[d].isdigit():
            d += 1
        sites.append(d)
        at = text.find("--tp-size", d)
    current = {d: text[d] for d in sites}
    out = []
    for i in range(n):
        d = sites[i % len(sites)]
        current[d] = str((int(current[d]) + 1) % 10)
        out.append((d, current[d]))
    return out


def mib(kib: int) -> float:
    return round(kib / 1024, 1)


async def measure(lines: int, launches: int, n_edits: int) -> dict:
    text = gen.script(lines, launches, seed=21)
    folder = tempfile.mkdtemp(prefix="servelint-memory-")
    uri = "file://" + os.path.join(folder, "big.sh")
    client = LspClient([PY, "-m", "servelint", "lsp"], cwd=ROOT,
                       stderr_path=os.path.join(HERE, "out", "memory-stderr.log"))
    await client.start()
    try:
        await client.initialize(timeout=60)
        since = len(client.notifications)
        await client.did_open(uri, text, 1, language_id="shellscript")
        await client.wait_publish(uri, 1, since, timeout=120)
        # The fast start (lsp/bootstrap.py) publishes the first lint before pygls is even
        # imported (~20 MiB): "after the open" is read once the pygls server answers.
        await client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                    "position": {"line": 0, "character": 0}},
                             timeout=60)
        opened = client.proc_status()
        version = 1
        every = max(1, n_edits // 10)
        marks: list[tuple[int, float]] = []
        for at, new in digit_edits(text, n_edits):
            version += 1
            text = text[:at] + new + text[at + 1:]
            line = text.count("\n", 0, at)
            col = at - (text.rfind("\n", 0, at) + 1)
            client.notifications.clear()  # 10,000 publishes would fill the benchmark itself
            await client.did_change(uri, version, [{"range": {
                "start": {"line": line, "character": col},
                "end": {"line": line, "character": col + 1}}, "text": new}])
            await client.wait_publish(uri, version, 0, timeout=60)
            if (version - 1) % every == 0:
                marks.append((version - 1, mib(client.proc_status()["VmRSS"])))
        edited = client.proc_status()
        growth = round(marks[-1][1] - marks[0][1], 1) if marks else 0.0
        return {"rss_open_mib": mib(opened["VmRSS"]), "peak_open_mib": mib(opened["VmHWM"]),
                "rss_after_edits_mib": mib(edited["VmRSS"]), "peak_mib": mib(edited["VmHWM"]),
                "edits": n_edits, "chars": len(text), "rss_by_edit_mib": marks,
                "growth_mib": growth, "goal_mib": round(GOAL_MIB, 1)}
    finally:
        await client.stop()


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "NOT met"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=N_EDITS)
    ap.add_argument("--only", type=int, help="only the script with this many launches")
    args = ap.parse_args(argv)
    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    out = {}
    goal = f"goal <= 100 MB = {GOAL_MIB:.1f} MiB"
    for name, lines, launches in CASES:
        if args.only is not None and launches != args.only:
            continue
        got = asyncio.run(measure(lines, launches, args.edits))
        out[name] = got
        print(f"{name}:\n"
              f"  server RSS after the open {got['rss_open_mib']} MiB "
              f"({goal}: {verdict(got['rss_open_mib'], GOAL_MIB)}), "
              f"peak {got['peak_open_mib']} MiB\n"
              f"  after {got['edits']} edits {got['rss_after_edits_mib']} MiB "
              f"({verdict(got['rss_after_edits_mib'], GOAL_MIB)}), "
              f"peak {got['peak_mib']} MiB ({verdict(got['peak_mib'], GOAL_MIB)})\n"
              f"  growth over the edits {got['growth_mib']:+} MiB "
              f"(goal flat, <= {FLAT_MIB} MiB: {verdict(got['growth_mib'], FLAT_MIB)}); "
              f"RSS by edit: {got['rss_by_edit_mib']}", flush=True)
    with open(os.path.join(HERE, "out", "memory.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
