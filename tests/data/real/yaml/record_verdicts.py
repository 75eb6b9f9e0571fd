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

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))

from real_verdicts import record  # noqa: E402  (tools/real_verdicts.py: the reading and the oracle)

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


if __name__ == "__main__":
    record(HERE, FILES, NOTES, LEAVE_OUT)
