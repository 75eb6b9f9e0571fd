"""Real launch commands from SGLang's own repository (tests/data/corpus, a copy of
shared/corpus), written as shell scripts, against SGLang 0.5.23's own verdicts:
no error on a launch SGLang accepts, an error on every launch its parser rejects."""

import json
import shlex
from pathlib import Path

import pytest

from servelint.engine import lint

DATA = Path(__file__).parent / "data" / "corpus"
LAUNCHES = json.loads((DATA / "sglang-own-launches.json").read_text())
VERDICTS = {v["record"]: v for v in map(json.loads, (DATA / "sglang-own-verdicts.jsonl").read_text().splitlines())}


def as_script(record: dict) -> str:
    entry = record["entrypoint"]
    if entry.startswith("popen_launch_server") or "debugpy" in entry or entry.endswith("--config"):
        entry = "python3 -m sglang.launch_server"
    words = []
    for arg in record["argv"]:
        if "{{" in arg:
            words.append('"$TEMPLATED"')  # a Helm template: unknown, as in the manifest
        elif arg.startswith(("'", '"')) or "$" in arg:
            words.append(arg)  # written as shell already
        else:
            words.append(shlex.quote(arg))
    return "#!/bin/bash\n" + entry + "".join(f" \\\n  {w}" for w in words) + "\n"


@pytest.mark.parametrize("n", sorted(VERDICTS), ids=[f"record{n}" for n in sorted(VERDICTS)])
def test_corpus_record_agrees_with_sglang(n):
    verdict = VERDICTS[n]
    script = as_script(LAUNCHES[n])
    errors = [f for f in lint(script, path="corpus.sh").findings if f.severity == 1]
    if verdict["verdict"] == "rejected" and (verdict["error"] or "").startswith("argparse"):
        assert errors, f"SGLang rejects it: {verdict['error']}\n{script}"
        # The first thing SGLang names is among what servelint reports.
        named = verdict["error"].split("error: ", 1)[1]
        assert any(named.split(":")[0] in f.message or f.message.split(" (")[0] in named
                   for f in errors), (named, [f.message for f in errors])
    elif verdict["verdict"] in ("accepted", "environment", "hardware", "depends-on-unknown"):
        assert not errors, [f.message for f in errors]
