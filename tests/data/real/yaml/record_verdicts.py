"""Record SGLang's own verdicts on the launches of the real files in this folder.

    .venv/bin/python tests/data/real/yaml/record_verdicts.py > tests/data/real/yaml/verdicts.jsonl

For every launch servelint reads in each file of FILES, the arguments as written with the
options whose value the file does not fix left out (with that value; an unknown stretch of
words is left out too), judged by tools/sglang_oracle.py (SGLang 0.5.23 in .venv-sglang,
pretended 8x sm90) with the model named in FILES. NOTES adds what a verdict rests on; a
rejection that only an option left out could cause is `depends-on-unknown`.
tests/test_yaml_real_files.py checks servelint against these lines and that it still reads
the same arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "server"))

from servelint.engine import lint  # noqa: E402
from servelint.settings import Settings  # noqa: E402

RELEASE = Settings(sglang_version="0.5.23")  # the release the oracle runs

# file (relative to this folder) -> model folder of tools/oracle-model
FILES = {
    "sglang-lws-pd-helm/templates/_helpers.tpl": "deepseek-tiny",
    "ome-serving/templates/clusterservingruntime.yaml": "llama-tiny",
    "ome-deepseek-rdma-rt.yaml": "deepseek-tiny",
    "llmaz-backendruntime-sglang.yaml": "llama-tiny",
    "llmaz-chart/templates/backends/sglang.yaml": "llama-tiny",
    "rbg-pd-disagg-leader-worker.yaml": "llama-tiny",
}

# (file, launch) -> (label, note): what a rejection rests on, when it is not the flags alone
NOTES: dict[tuple[str, int], tuple[str, str]] = {}

# Options left out of the judged argv (with their values) because the oracle's tiny model
# cannot stand for the file's model there: DeepSeek-R1 has 163840 positions, the tiny
# model 4096, so `--context-length 32768` is refused for the model, not for the flags.
LEAVE_OUT: dict[str, set[str]] = {
    "sglang-lws-pd-helm/templates/_helpers.tpl": {"--context-length"},
}


def judged_argv(path: str, leave_out: set[str]) -> list[dict]:
    """Each launch of the file: its line, the argv servelint reads (None for a word the file
    does not fix) and the argv to judge."""
    text = open(path, encoding="utf-8").read()
    result = lint(text, path=path, settings=RELEASE)
    out = []
    for launch, parsed in zip(result.launches, result.parsed):
        drop: set[int] = set()
        for use in parsed.uses:
            if any(v.text is None for v in use.values) or use.matched in leave_out:
                drop.update(range(use.index, use.last_index + 1))
        for i, t in enumerate(launch.tokens):
            if t.text is None:
                drop.add(i)
        argv = [t.text for i, t in enumerate(launch.tokens) if i not in drop]
        out.append({"line": result.index.position(launch.entry.span.start)[0] + 1,
                    "read": [t.text for t in launch.tokens], "argv": argv})
    return out


def main() -> None:
    cases, meta = [], []
    for rel, model in FILES.items():
        for n, launch in enumerate(judged_argv(os.path.join(HERE, rel), LEAVE_OUT.get(rel, set()))):
            cases.append(json.dumps({"argv": launch["argv"], "model": model}))
            meta.append((rel, n, model, launch))
    oracle = subprocess.run(
        [os.path.join(ROOT, ".venv-sglang", "bin", "python"), os.path.join(ROOT, "tools", "sglang_oracle.py"),
         "--gpu", "sm90"], input="\n".join(cases) + "\n", capture_output=True, text=True, check=True)
    for (rel, n, model, launch), line in zip(meta, oracle.stdout.splitlines()):
        verdict = json.loads(line)
        label, note = NOTES.get((rel, n), (verdict["verdict"], ""))
        record = {"file": rel, "launch": n, "line": launch["line"], "model": model,
                  "read": launch["read"], "argv": launch["argv"], "verdict": verdict["verdict"],
                  "label": label}
        for key in ("error", "where"):
            if verdict.get(key):
                record[key] = verdict[key]
        if note:
            record["note"] = note
        if LEAVE_OUT.get(rel):
            record["left_out"] = sorted(LEAVE_OUT[rel])
        print(json.dumps(record))


if __name__ == "__main__":
    main()
