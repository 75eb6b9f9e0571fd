"""Record SGLang's own verdicts on the launches of the real files in this folder.

    .venv/bin/python tests/data/real/code/record_verdicts.py > tests/data/real/code/verdicts.jsonl

For each file in FILES and each launch servelint reads there, the words after the
entrypoint are judged by tools/sglang_oracle.py (SGLang 0.5.23 in .venv-sglang, full stage,
a pretended sm90 GPU) with the tiny model named in FILES standing in for the file's model.
Words the file does not fix (an f-string field, a variable, the port `launch_server_cmd`
picks) are left out of the judged argv together with their option, so a verdict never rests
on a guess. tests/test_python_imports.py and tests/test_format_detect.py hold servelint to
these lines: the same words read, no error where SGLang accepts, and a finding where it
rejects.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools"))

from real_verdicts import record  # noqa: E402  (tools/real_verdicts.py: the reading and the oracle)

# file (relative to this folder) -> model folder of tools/oracle-model
FILES = {
    "python/llava-next-sc_launch_server.py": "llama-tiny",
    "python/areal_test_sglang_client.py": "llama-tiny",
    "python/ecp_deploy_sglang.py": "llama-tiny",
    "dockerfile/rubriclab-inference.Dockerfile": "qwen3-moe-tiny",
}


if __name__ == "__main__":
    record(HERE, FILES)
