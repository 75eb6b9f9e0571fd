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

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))

from real_verdicts import record  # noqa: E402  (tools/real_verdicts.py: the reading and the oracle)

# file (relative to this folder) -> model folder of tools/oracle-model
FILES = {
    "kimi-k2-deploy_guidance.md": "deepseek-tiny",
    "awesome-ml-sys-how-to-use-docker.md": "llama-tiny",
    "sglang-hathora-entrypoint_sglang_native.sh": "llama-tiny",
    "sglang-glm52-run_optimized_kv_ab.sh": "deepseek-tiny",
}


if __name__ == "__main__":
    record(HERE, FILES)
