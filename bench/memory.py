"""Server memory with a large file open (issue 16, point 6): the real server over stdio,
one 100,000-line shell script opened, then 20 one-character edits (SERVELINT_MEMORY_EDITS); prints the server's
resident memory (VmRSS, and the peak VmHWM) after the open and after the edits, for a
script with few launches and one as dense in launches as the 20,000-line benchmark.

    .venv/bin/python bench/memory.py

Prints numbers; passes or fails nothing (`make bench` runs it too)."""

from __future__ import annotations

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


async def measure(lines: int, launches: int) -> dict:
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
        opened = client.proc_status()
        version = 1
        marks = []
        for at, _old, new in edit_sites(text, N_EDITS):
            version += 1
            text = text[:at] + new + text[at + 1:]
            line = text.count("\n", 0, at)
            col = at - (text.rfind("\n", 0, at) + 1)
            since = len(client.notifications)
            await client.did_change(uri, version, [{"range": {
                "start": {"line": line, "character": col},
                "end": {"line": line, "character": col + 1}}, "text": new}])
            await client.wait_publish(uri, version, since, timeout=60)
            if version % 20 == 1:
                marks.append(round(client.proc_status()["VmRSS"] / 1024, 1))
        edited = client.proc_status()
        return {"rss_open_mib": round(opened["VmRSS"] / 1024, 1),
                "rss_after_edits_mib": round(edited["VmRSS"] / 1024, 1),
                "peak_mib": round(edited["VmHWM"] / 1024, 1), "chars": len(text), "every_20_edits_mib": marks}
    finally:
        await client.stop()


def main() -> int:
    os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
    out = {}
    for name, lines, launches in CASES:
        got = asyncio.run(measure(lines, launches))
        out[name] = got
        print(f"{name}: server RSS {got['rss_open_mib']} MiB after the open, "
              f"{got['rss_after_edits_mib']} MiB after {N_EDITS} edits, peak {got['peak_mib']} MiB "
              f"(issue 16 goal: 100 MB); every 20 edits: {got['every_20_edits_mib']}")
    with open(os.path.join(HERE, "out", "memory.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
