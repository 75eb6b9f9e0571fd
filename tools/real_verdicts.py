"""SGLang's own verdicts on the launches of the real public files kept as test corpora
(tests/data/real/<format>/). Each corpus has a `record_verdicts.py` that names its files,
the tiny model the oracle stands in with, and what a verdict rests on; this module reads
the launches and asks the oracle:

    .venv/bin/python tests/data/real/<format>/record_verdicts.py > .../verdicts.jsonl

For every launch servelint reads in a file, the arguments as written are judged, with the
options whose value the file does not fix left out together with that value (and any
word the file does not fix), so a verdict never rests on a guess. The judge is
tools/sglang_oracle.py: SGLang 0.5.23 in .venv-sglang, full stage, a pretended sm90 GPU.
Nothing from the files is run: servelint reads them and the oracle gets argv lists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "server"))

from servelint.engine import lint  # noqa: E402
from servelint.settings import Settings  # noqa: E402

RELEASE = Settings(sglang_version="0.5.23")  # the release the oracle runs


def judged_argv(path: str, leave_out: set[str] = frozenset()) -> list[dict]:  # type: ignore[assignment]
    """Each launch of the file: the line of its entrypoint, the words servelint reads (None
    for a word the file does not fix) and the argv to judge (`leave_out`: options left out
    with their values, where the oracle's model cannot stand for the file's)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    result = lint(text, path=path, settings=RELEASE)
    out = []
    for launch, parsed in zip(result.launches, result.parsed):
        drop = {i for i, t in enumerate(launch.tokens) if t.text is None}
        for use in parsed.uses:
            if any(v.text is None for v in use.values) or use.matched in leave_out:
                drop.update(range(use.index, use.last_index + 1))
        out.append({"line": result.index.position(launch.entry.span.start)[0] + 1,
                    "read": [t.text for t in launch.tokens],
                    "argv": [t.text for i, t in enumerate(launch.tokens) if i not in drop]})
    return out


def record(here: str, files: dict[str, str], notes: dict | None = None,
           leave_out: dict[str, set[str]] | None = None) -> None:
    """Print one JSON line per launch of `files` (path relative to `here` -> model folder
    of tools/oracle-model). `notes`, when given, labels each verdict ((file, launch) ->
    (label, note); unlabelled ones are labelled with the verdict)."""
    leave_out = leave_out or {}
    cases, meta = [], []
    for rel, model in files.items():
        for n, launch in enumerate(judged_argv(os.path.join(here, rel), leave_out.get(rel, set()))):
            cases.append(json.dumps({"argv": launch["argv"], "model": model}))
            meta.append((rel, n, model, launch))
    oracle = subprocess.run(
        [os.path.join(ROOT, ".venv-sglang", "bin", "python"),
         os.path.join(ROOT, "tools", "sglang_oracle.py"), "--gpu", "sm90"],
        input="\n".join(cases) + "\n", capture_output=True, text=True, check=True)
    for (rel, n, model, launch), line in zip(meta, oracle.stdout.splitlines()):
        verdict = json.loads(line)
        rec = {"file": rel, "launch": n, "line": launch["line"], "model": model,
               "read": launch["read"], "argv": launch["argv"], "verdict": verdict["verdict"]}
        note = ""
        if notes is not None:
            rec["label"], note = notes.get((rel, n), (verdict["verdict"], ""))
        for key in ("error", "where"):
            if verdict.get(key):
                rec[key] = verdict[key]
        if note:
            rec["note"] = note
        if leave_out.get(rel):
            rec["left_out"] = sorted(leave_out[rel])
        print(json.dumps(rec))
