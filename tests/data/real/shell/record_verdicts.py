"""Record SGLang's own verdicts on the launches of the real shell and Markdown files here.

    .venv/bin/python tests/data/real/shell/record_verdicts.py > tests/data/real/shell/verdicts.jsonl

For each file in FILES and each launch servelint reads there, the words after the
entrypoint are judged by tools/sglang_oracle.py (SGLang 0.5.23 in .venv-sglang, full stage,
a pretended sm90 GPU) with the tiny model named in FILES standing in for the file's model.
Words the file does not fix (a variable, an array element that may or may not be there, a
documentation placeholder) are left out of the judged argv together with their option, so a
verdict never rests on a guess. tests/test_shell_real_files.py holds servelint to these
lines: the same words read, no error where SGLang accepts, and an error where it rejects.
Nothing from these files is run: servelint reads them, and the oracle gets argv lists.
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
    "kimi-k2-deploy_guidance.md": "deepseek-tiny",
    "awesome-ml-sys-how-to-use-docker.md": "llama-tiny",
    "sglang-hathora-entrypoint_sglang_native.sh": "llama-tiny",
    "sglang-glm52-run_optimized_kv_ab.sh": "deepseek-tiny",
}


def launches(rel: str) -> list[dict]:
    """Each launch of the file: the line of its entrypoint, the words servelint reads (None
    for a word the file does not fix) and the argv to judge."""
    path = os.path.join(HERE, rel)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    result = lint(text, path=path, settings=RELEASE)
    out = []
    for launch, parsed in zip(result.launches, result.parsed):
        drop: set[int] = {i for i, t in enumerate(launch.tokens) if t.text is None}
        for use in parsed.uses:
            if any(v.text is None for v in use.values):
                drop.update(range(use.index, use.last_index + 1))
        out.append({"line": result.index.position(launch.entry.span.start)[0] + 1,
                    "read": [t.text for t in launch.tokens],
                    "argv": [t.text for i, t in enumerate(launch.tokens) if i not in drop]})
    return out


def main() -> None:
    cases, meta = [], []
    for rel, model in FILES.items():
        for n, launch in enumerate(launches(rel)):
            cases.append(json.dumps({"argv": launch["argv"], "model": model}))
            meta.append((rel, n, model, launch))
    oracle = subprocess.run(
        [os.path.join(ROOT, ".venv-sglang", "bin", "python"),
         os.path.join(ROOT, "tools", "sglang_oracle.py"), "--gpu", "sm90"],
        input="\n".join(cases) + "\n", capture_output=True, text=True, check=True)
    for (rel, n, model, launch), line in zip(meta, oracle.stdout.splitlines()):
        verdict = json.loads(line)
        record = {"file": rel, "launch": n, "line": launch["line"], "model": model,
                  "read": launch["read"], "argv": launch["argv"], "verdict": verdict["verdict"]}
        for key in ("error", "where"):
            if verdict.get(key):
                record[key] = verdict[key]
        print(json.dumps(record))


if __name__ == "__main__":
    main()
