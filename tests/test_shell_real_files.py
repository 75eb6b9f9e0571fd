"""Real public shell scripts and Markdown guides (tests/data/real/shell/, attributed in its
README) against SGLang's own verdicts (verdicts.jsonl, written by record_verdicts.py with
tools/sglang_oracle.py): servelint reads the same words, reports no error or warning on a
launch SGLang accepts, and reports an error naming the option on a launch SGLang rejects
for its flags."""

import json
import re
from pathlib import Path

import pytest

from servelint.engine import lint
from servelint.model import Severity
from servelint.settings import Settings

HERE = Path(__file__).parent / "data" / "real" / "shell"
RELEASE = Settings(sglang_version="0.5.23")
RECORDS = [json.loads(line) for line in (HERE / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()]


def result_of(name):
    path = HERE / name
    return lint(path.read_text(encoding="utf-8"), path=str(path), settings=RELEASE)


def test_every_file_has_verdicts_and_the_readme_names_it():
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    files = sorted(p.name for p in HERE.iterdir() if p.suffix in (".sh", ".md") and p.name != "README.md")
    assert files == sorted({r["file"] for r in RECORDS})
    for name in files:
        assert f"`{name}`" in readme


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"{r['file']}:{r['line']}")
def test_servelint_agrees_with_sglang(record):
    result = result_of(record["file"])
    launch = result.launches[record["launch"]]
    assert result.index.position(launch.entry.span.start)[0] + 1 == record["line"]
    assert [t.text for t in launch.tokens] == record["read"]
    mine = [f for f in result.findings if f.launch_index == record["launch"]]
    serious = [f for f in mine if f.severity <= Severity.WARNING]
    if record["verdict"] == "accepted":
        assert serious == [], [(f.code, f.message) for f in serious]
    else:
        assert record["verdict"] == "rejected"
        errors = [f for f in mine if f.severity == Severity.ERROR]
        named = set(re.findall(r"--[a-z0-9-]+", record["error"]))
        assert any(n in f.message for f in errors for n in named), (record["error"], errors)


def test_the_guide_with_a_stray_dollar_keeps_tp_size_and_has_no_divisibility_finding():
    result = result_of("kimi-k2-deploy_guidance.md")
    text = (HERE / "kimi-k2-deploy_guidance.md").read_text(encoding="utf-8")
    prefill = result.launches[2]
    addr = next(t for t in prefill.tokens if text[t.span.start:t.span.end] == "$PREFILL_NODE0$:5757")
    assert addr.text is None and not addr.splat
    words = [t.text for t in prefill.tokens]
    assert words[words.index("--tp-size") + 1] == "32"
    assert "SL200" not in [f.code for f in result.findings]


def test_the_docker_guide_placeholders():
    result = result_of("awesome-ml-sys-how-to-use-docker.md")
    (launch,) = result.launches
    (tok,) = launch.tokens
    text = (HERE / "awesome-ml-sys-how-to-use-docker.md").read_text(encoding="utf-8")
    assert text[tok.span.start:tok.span.end] == "[other parameters]"
    assert tok.placeholder
    assert result.findings == []  # before: SL011 and two SL013


def test_the_entrypoint_array_with_conditional_appends():
    result = result_of("sglang-hathora-entrypoint_sglang_native.sh")
    (launch,) = result.launches
    words = [t.text for t in launch.tokens]
    # ARGS=( ... ) as written, then what the `[ ... ] && ARGS+=` and `if` lines may add,
    # then the unconditional `ARGS+=(--disable-custom-all-reduce)`
    assert words[:2] == ["--model-path", None]
    assert words[-4:] == ["--scheduler-recv-interval", "0", None, "--disable-custom-all-reduce"]
    text = (HERE / "sglang-hathora-entrypoint_sglang_native.sh").read_text(encoding="utf-8")
    assert text.index("    --model-path \"$MODEL_PATH\"") + 4 == launch.tokens[0].span.start


def test_the_command_held_in_a_function_local_array():
    result = result_of("sglang-glm52-run_optimized_kv_ab.sh")
    (launch,) = result.launches
    text = (HERE / "sglang-glm52-run_optimized_kv_ab.sh").read_text(encoding="utf-8")
    line = result.index.position(launch.span.start)[0]
    assert text.splitlines()[line].strip().startswith('setsid "${command[@]}"')
    assert launch.tokens[-1].splat  # "${kv_args[@]}": set in if/elif, not known here
