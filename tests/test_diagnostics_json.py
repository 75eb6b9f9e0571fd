"""serialize.diagnostics_json (what the server publishes) is exactly the JSON of
serialize.result_diagnostics, through any sequence of edits linted with one LintCache:
the fragments it keeps per finding are re-used only where they are still right."""

import json
import random

from servelint.engine import lint
from servelint.lintcache import LintCache
from servelint.serialize import diagnostics_json, result_diagnostics
from servelint.settings import Settings

LAUNCHES = [
    "python3 -m sglang.launch_server --model-path m --tp_size 2 --attention-backend flash_infer\n",
    "python -m sglang.launch_server --model-path m --enable-hisparse --prefill-only-disable-kv-cache\n",
    "sglang serve --model-path 'méta/modèle' --port 3OOO1  # ünïcode\n",
    "python3 -m sglang.launch_server --model-path m \\\n  --enable_metrics \\\n  --tp 2\n",
    "echo nothing here\n",
    "# sglang==0.4.6\n",
]


def check(text: str, cache: LintCache, version: int) -> None:
    result = lint(text, "/tmp/t.sh", None, Settings(), cache=cache)
    want = result_diagnostics(result, "file:///tmp/t.sh", version)
    got = json.loads(diagnostics_json(result, "file:///tmp/t.sh", version))
    assert got == want


def test_the_published_json_is_the_diagnostics_through_random_edits():
    rng = random.Random(7)
    text = "#!/bin/bash\n" + "".join(rng.choice(LAUNCHES) for _ in range(30))
    cache = LintCache()
    check(text, cache, 1)
    for version in range(2, 80):
        at = rng.randrange(len(text) + 1)
        kind = rng.random()
        if kind < 0.3:
            text = text[:at] + rng.choice(["x", "\n", "é", "\r", "  "]) + text[at:]
        elif kind < 0.6:
            text = text[:at] + text[at + rng.randrange(1, 4):]
        elif kind < 0.8:
            line = text.rfind("\n", 0, at) + 1
            text = text[:line] + rng.choice(LAUNCHES) + text[line:]
        else:
            text = text.replace("flash_infer", "flashinfer", 1) if rng.random() < 0.5 \
                else text.replace("--tp 2", "--tp_size 2", 1)
        check(text, cache, version)
    assert cache.reused > 0  # the fragments were put to the test on re-used launches


def test_a_version_none_and_no_findings():
    result = lint("echo hi\n", "/tmp/t.sh")
    assert diagnostics_json(result, "file:///tmp/t.sh", None) == "[]"
    result = lint(LAUNCHES[0], "/tmp/t.sh")
    assert json.loads(diagnostics_json(result, "file:///tmp/t.sh", None)) == \
        result_diagnostics(result, "file:///tmp/t.sh", None)
